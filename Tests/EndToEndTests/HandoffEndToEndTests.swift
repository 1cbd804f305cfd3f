import Foundation
import ResilientHTTP
import TestSupport
import Testing

/// A critical alert handing over to a warning while the source still fails is the same outage:
/// the hook hears one "firing" and, when the source is up again, one "resolved" — no second
/// "down" when the critical alert resolves.
@Suite("a critical→warning handoff is one story")
struct HandoffEndToEndTests {
    let http = CurlTransport()

    func post(_ url: String) async {
        _ = await http.perform(TransferRequest(url: url, method: "POST", timeout: .seconds(5)))
    }

    func firing(_ base: String) async throws -> Set<String> {
        let result = await http.perform(TransferRequest(url: "\(base)/api/v1/alerts", timeout: .seconds(5)))
        let document = try JSONSerialization.jsonObject(with: Data(result.body)) as? [String: Any]
        let alerts = (document?["alerts"] as? [[String: Any]]) ?? []
        return Set(alerts.filter { $0["state"] as? String != "resolved" }.compactMap { $0["rule"] as? String })
    }

    @Test func theHookHearsOneDownAndOneRecovered() async throws {
        let directory = try makeTemporaryDirectory("handoff")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (sim, simBase) = try await startSimulator()
        let run = UUID().uuidString.prefix(8)
        // The error-rate rules over one minute and without `for`, so the handoff comes within
        // two minutes; the outage holds while 2 of the last 10 probes fail. group_interval 1s:
        // an update of the group would go out at once (Alertmanager's way sent one as "firing").
        let config = try writeLookoutConfig(
            in: directory,
            """
            defaults:
              interval: 1s
              timeout: 1s
              retry: {server_error: {max_attempts: 1}}
              outage: {failure_threshold: 2, window: {failures: 2, probes: 10}, success_threshold: 10}
            sources: [{name: shaky, url: "\(simBase)/switch/shaky-\(run)?code=503"}]
            alerts:
              evaluation_interval: 1s
              defaults:
                SourceDown: off
                SourceErrorRateCritical: {expr: "error_rate[1m] > 0.7", for: 0s}
                SourceErrorRateHigh: {expr: "error_rate[1m] > 0.2", for: 0s}
              hooks: [{name: chat, type: webhook, url: "\(simBase)/webhook", send_resolved: true, group_wait: 0s, group_interval: 1s}]
            """)
        await post("\(simBase)/switch/shaky-\(run)/on")
        let (lookout, base) = try await startLookout(config: config)
        // Every probe fails: the critical alert fires (once a minute of history covers its window).
        _ = try await eventually(deadline: .seconds(90), "the critical alert") { () -> Bool? in
            try await firing(base).contains("SourceErrorRateCritical") ? true : nil
        }
        // About half fail: the critical alert resolves, the warning goes on firing, still down.
        let flapping = Task {
            var on = false
            while !Task.isCancelled {
                on.toggle()
                await post("\(simBase)/switch/shaky-\(run)/\(on ? "on" : "off")")
                try? await Task.sleep(for: .milliseconds(1000))
            }
        }
        _ = try await eventually(deadline: .seconds(90), "the handoff to the warning") { () -> Bool? in
            // (The info alerts of its breaker fire too; they notify no one.)
            try await firing(base).intersection(["SourceErrorRateCritical", "SourceErrorRateHigh"]) == ["SourceErrorRateHigh"] ? true : nil
        }
        flapping.cancel()
        _ = await flapping.value
        await post("\(simBase)/switch/shaky-\(run)/off")
        // Up for ten probes: the outage ends; one resolution.
        _ = try await eventually(deadline: .seconds(60), "the resolution") { () -> Bool? in
            try await simulatorWebhookLog(simBase).contains { ($0["payload"] as? [String: Any])?["status"] as? String == "resolved" } ? true : nil
        }
        let statuses = try await simulatorWebhookLog(simBase).compactMap { ($0["payload"] as? [String: Any])?["status"] as? String }
        #expect(statuses == ["firing", "resolved"], "\(statuses)")
        #expect(try await lookout.terminate() == 0)
        _ = sim
    }
}
