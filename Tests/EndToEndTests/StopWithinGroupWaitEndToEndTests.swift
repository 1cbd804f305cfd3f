import Foundation
import ResilientHTTP
import TestSupport
import Testing

/// At least once across restarts: Lookout stopped (SIGTERM or kill -9) right after "alert firing",
/// before the webhook group's group_wait ran out, tells the webhook after it starts again. The
/// group_wait (10 s) leaves room for a stop on a busy machine: with 3 s, a graceful stop during a
/// full `make test` once outlasted it and the notification went out before the process ended.
@Suite("a stop within group_wait loses nothing", .serialized)
struct StopWithinGroupWaitEndToEndTests {
    @Test(arguments: [SIGTERM, SIGKILL])
    func theFiringNotificationArrivesAfterTheRestart(_ signal: Int32) async throws {
        let directory = try makeTemporaryDirectory("stop-within-group-wait")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (sim, simBase) = try await startSimulator()
        let config = try writeLookoutConfig(
            in: directory,
            """
            defaults: {interval: 200ms, timeout: 1s, retry: {server_error: {max_attempts: 1}}}
            sources: [{name: broken, url: "\(simBase)/status/503"}]
            alerts:
              evaluation_interval: 200ms
              hooks: [{name: chat, type: webhook, url: "\(simBase)/webhook", group_wait: 10s}]
            """)
        var lookout = try ChildProcess("lookout", ["serve", "--config", config.path])
        _ = try await lookout.waitFor(#"msg="alert firing""#)
        lookout.send(signal)
        let stopped = lookout
        _ = try await eventually("the process to end") { stopped.isRunning ? nil : true }
        #expect(try await simulatorWebhookLog(simBase).isEmpty, "told before the group_wait ran out")

        lookout = try ChildProcess("lookout", ["serve", "--config", config.path])
        let log = try await eventually("the firing notification after the restart") { () -> [[String: Any]]? in
            let log = try await simulatorWebhookLog(simBase)
            return log.isEmpty ? nil : log
        }
        let payload = try #require(log.first?["payload"] as? [String: Any])
        #expect(payload["status"] as? String == "firing")
        #expect((payload["groupLabels"] as? [String: String]) == ["source": "broken"])
        #expect(try await lookout.terminate() == 0)
        _ = sim
    }
}
