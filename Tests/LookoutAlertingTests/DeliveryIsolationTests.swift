import Foundation
import GRDB
import Logging
import LookoutAlerting
import LookoutCore
import LookoutStore
import MicroHTTPServer
import ResilientHTTP
import Synchronization
import TestSupport
import Testing

/// A receiver that hangs holds back its own hook only (issue "Nothing told is lost…", row 15):
/// the deliverer waited for every hook's round to end before starting the next, so one hook's
/// 30 s hang delayed every other hook's next notification.
@Suite("delivery isolation")
struct DeliveryIsolationTests {
    @Test func aHangingReceiverHoldsBackOnlyItsOwnHook() async throws {
        let gate = Gate()
        let received = Locked<[String]>([])
        var router = Router()
        router.post("/hang") { _ in
            await gate.wait()
            return .text("late")
        }
        router.post("/fast") { request in
            received.mutate { $0.append(request.headers["X-Lookout-Delivery"] ?? "?") }
            return .text("ok")
        }
        let server = HTTPServer(configuration: .init(host: "127.0.0.1", port: 0), router: router)
        try server.start()
        let base = "http://127.0.0.1:\(server.port)"
        let hooks = try ConfigLoader.parse(
            """
            sources:
              - {name: acme, url: "http://127.0.0.1:1/"}
            alerts:
              hooks:
                - {name: stuck, type: webhook, url: "\(base)/hang"}
                - {name: chat, type: webhook, url: "\(base)/fast"}
            """, file: "t.yml", hooks: NotificationProviders.hookKinds
        ).hooks
        let database = try LookoutDatabase(path: ":memory:")
        func enqueue(_ hook: String) throws -> Int64 {
            try database.writer.write { db in
                try db.execute(
                    sql: "INSERT INTO alert_outbox (hook, alert_id, payload, created_at_ms, next_attempt_at_ms) VALUES (?, 1, '{}', 0, 0)", arguments: [hook])
                return db.lastInsertedRowID
            }
        }
        try await database.writer.write { db in
            try db.execute(
                sql: """
                    INSERT INTO alerts (id, fingerprint, rule, source, severity, state, started_at_ms, summary, labels, annotations)
                    VALUES (1, 'f', 'SourceDown', 'acme', 'critical', 'firing', 0, 's', '{}', '{}')
                    """)
        }
        let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        let deliverer = OutboxDeliverer(hooks: { hooks }, store: OutboxStore(database: database), client: ResilientClient(), logger: logger)
        let running = Task { await deliverer.run() }

        _ = try enqueue("stuck")
        let first = try enqueue("chat")
        deliverer.poke()
        try await eventuallyTrue { received.value == ["\(first)"] }
        // The stuck hook's delivery still hangs; the chat hook's next notification goes out.
        let second = try enqueue("chat")
        deliverer.poke()
        try await eventuallyTrue { received.value == ["\(first)", "\(second)"] }
        // ... while the stuck one has neither been delivered nor given up on.
        #expect(deliverer.hookStats["stuck"].map { $0.delivered + $0.failed } ?? 0 == 0)

        gate.open()
        running.cancel()
        await running.value
        await server.stop()
    }
}
