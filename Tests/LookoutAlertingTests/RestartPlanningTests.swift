import Foundation
import GRDB
import Logging
import LookoutCore
import LookoutStore
import ResilientHTTP
import Testing

@testable import LookoutAlerting

/// At least once across restarts: an alert stored firing whose notification was not yet planned
/// (Lookout stopped within the group's group_wait, by SIGTERM or kill -9) is notified after the
/// restart; one whose notification was stored is not sent again.
@Suite("restarts plan what was not planned")
struct RestartPlanningTests {
    let logger = Logger(label: "test")

    func service(_ database: LookoutDatabase) throws -> (Monitor, AlertService) {
        let config = try ConfigLoader.parse(
            """
            defaults: {outage: {failure_threshold: 1}}
            sources: [{name: acme, url: "http://127.0.0.1:1/acme"}]
            alerts:
              hooks:
                - {name: chat, type: webhook, url: "http://127.0.0.1:1/hook", group_wait: 30s}
                - {name: am, type: alertmanager, url: "http://127.0.0.1:1"}
            """, file: "t.yml", hooks: NotificationProviders.hookKinds)
        let monitor = Monitor(config: config, configPath: nil, logger: logger)
        monitor.start()
        return (monitor, AlertService(monitor: monitor, store: AlertStore(database: database), logger: logger))
    }

    func outbox(_ database: LookoutDatabase) throws -> [String] {
        try database.writer.read { db in try String.fetchAll(db, sql: "SELECT hook FROM alert_outbox ORDER BY id") }
    }

    func fail(_ monitor: Monitor, at ms: Int64) {
        monitor.registry.record(
            ProbeResult(
                source: "acme", timestampMs: ms, ok: false, failure: Failure(category: .serverError, reason: "http_503", httpStatus: 503), httpStatus: 503))
    }

    @Test func anAlertStoppedWithinItsGroupWaitIsToldAfterTheRestart() throws {
        let database = try LookoutDatabase(path: ":memory:")
        let now: Int64 = 1_000_000
        let (before, alerts) = try service(database)
        fail(before, at: now)
        #expect(alerts.evaluate(nowMs: now).map(\.alert.rule) == ["SourceDown"])
        // Alertmanager heard of it at once; the webhook's group waits 30 s — and Lookout stops.
        #expect(try outbox(database) == ["am"])

        let (after, restarted) = try service(database)
        fail(after, at: now + 20_000)
        try restarted.restore(nowMs: now + 20_000)
        restarted.evaluate(nowMs: now + 20_000)
        restarted.evaluate(nowMs: now + 35_000)
        // The webhook is told once its group_wait (from when the alert fired) is over; the
        // Alertmanager hook is not told twice.
        #expect(try outbox(database) == ["am", "chat"])
        restarted.evaluate(nowMs: now + 50_000)
        #expect(try outbox(database) == ["am", "chat"])
    }

    @Test func anAlertToldBeforeTheRestartIsNotToldAgain() throws {
        let database = try LookoutDatabase(path: ":memory:")
        let now: Int64 = 1_000_000
        let (before, alerts) = try service(database)
        fail(before, at: now)
        alerts.evaluate(nowMs: now)
        fail(before, at: now + 30_000)
        alerts.evaluate(nowMs: now + 30_000)
        #expect(try outbox(database) == ["am", "chat"])

        let (after, restarted) = try service(database)
        fail(after, at: now + 40_000)
        try restarted.restore(nowMs: now + 40_000)
        for step in 0..<8 { restarted.evaluate(nowMs: now + 40_000 + Int64(step) * 15_000) }
        // Alertmanager's refresh (every minute) aside, nothing new.
        #expect(try outbox(database).filter { $0 == "chat" }.count == 1)
    }
}
