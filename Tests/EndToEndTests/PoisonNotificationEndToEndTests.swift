import Foundation
import ResilientHTTP
import TestSupport
import Testing

/// A notification its receiver keeps refusing (400) is set aside after three tries — kept,
/// counted, shown on the page, queued again by an admin call — and the hook's later
/// notifications are delivered instead of waiting behind it for ever.
@Suite("a poison notification is set aside")
struct PoisonNotificationEndToEndTests {
    let http = CurlTransport()

    func text(_ url: String, method: String = "GET", token: String? = nil) async -> (status: Int?, body: String) {
        var request = TransferRequest(url: url, method: method, timeout: .seconds(10))
        if let token { request.headers.append(("Authorization", "Bearer \(token)")) }
        let result = await http.perform(request)
        return (result.httpStatus, result.bodyText)
    }

    @Test func laterNotificationsAreDeliveredAndThePoisonOneIsVisible() async throws {
        let directory = try makeTemporaryDirectory("poison")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (sim, simBase) = try await startSimulator()
        let run = UUID().uuidString.prefix(8)
        try "s3cret\n".write(to: directory.appendingPathComponent("admin.token"), atomically: true, encoding: .utf8)
        let config = try writeLookoutConfig(
            in: directory,
            """
            admin_token_file: admin.token
            defaults: {interval: 200ms, timeout: 1s, retry: {server_error: {max_attempts: 1}}}
            sources:
              - {name: poisoned, url: "\(simBase)/status/503"}
              - {name: later, url: "\(simBase)/switch/later-\(run)?code=503"}
            alerts:
              evaluation_interval: 200ms
              hooks: [{name: chat, type: webhook, url: "\(simBase)/webhook?refuse=poisoned", group_wait: 0s}]
            """)
        let (lookout, base) = try await startLookout(config: config)
        // The receiver refuses the first notification; then `later` breaks.
        _ = try await eventually("the first refusal") { () -> Bool? in
            try await simulatorWebhookLog(simBase).contains { !($0["problem"] is NSNull) } ? true : nil
        }
        _ = await text("\(simBase)/switch/later-\(run)/on", method: "POST")
        let delivered = try await eventually(deadline: .seconds(30), "later's notification delivered") { () -> [String: Any]? in
            try await simulatorWebhookLog(simBase).first { entry in
                (entry["problem"] is NSNull) && ((entry["payload"] as? [String: Any])?["groupLabels"] as? [String: String])?["source"] == "later"
            }
        }
        #expect(((delivered["payload"] as? [String: Any])?["status"] as? String) == "firing")
        let refusals = try await simulatorWebhookLog(simBase).filter { !($0["problem"] is NSNull) }.count
        #expect(refusals == 3, "tried \(refusals) times before it was set aside")

        let metrics = await text("\(base)/metrics").body
        #expect(metrics.contains(#"lookout_alert_outbox_set_aside{hook="chat"} 1"#))
        let page = await text("\(base)/").body
        #expect(page.contains("Alert hook <strong>chat</strong> refused 1 notification, set aside so later ones go on"))
        // An admin queues it again (the receiver still refuses it: three more tries).
        #expect(await text("\(base)/api/v1/hooks/chat/retry", method: "POST").status == 401)
        let retried = await text("\(base)/api/v1/hooks/chat/retry", method: "POST", token: "s3cret")
        #expect(retried.status == 200 && retried.body.contains(#""queued":1"#), "\(retried)")
        _ = try await eventually(deadline: .seconds(30), "three more tries") { () -> Bool? in
            try await simulatorWebhookLog(simBase).filter { !($0["problem"] is NSNull) }.count == 6 ? true : nil
        }
        #expect(try await lookout.terminate() == 0)
        _ = sim
    }
}
