import Foundation
import ResilientHTTP
import TestSupport
import Testing

/// Reload and offline detection, with `lookout serve` as a real process.
@Suite("monitor end to end")
struct MonitorEndToEndTests {
    let http = CurlTransport()

    func scrape(_ base: String) async -> String {
        await http.perform(TransferRequest(url: "\(base)/metrics", timeout: .seconds(10))).bodyText
    }

    @Test func reloadAddsChangesAndRemovesSourcesButKeepsBreakers() async throws {
        let directory = try makeTemporaryDirectory("lookout")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (sim, simBase) = try await startSimulator()
        let config = directory.appendingPathComponent("lookout.yml")
        func write(_ sources: String) throws {
            try """
            listen: 127.0.0.1:0
            database: \(directory.path)/lookout.sqlite
            defaults:
              interval: 1s
              timeout: 2s
              retry: {server_error: {max_attempts: 1}}
              circuit_breaker: {failure_threshold: 1, open_timeout: 10m}
            sources:
            \(sources)
            """.write(to: config, atomically: true, encoding: .utf8)
        }
        let breaker = "  - {name: breaker, url: \"\(simBase)/status/503\"}"
        try write(
            """
            \(breaker)
              - {name: gone, url: "\(simBase)/ok"}
              - {name: slowpoke, url: "\(simBase)/ok", interval: 1h}
            """)
        let (lookout, base) = try await startLookout(config: config)
        _ = try await eventually("the breaker to open and gone to be probed") { () -> Bool? in
            let text = await scrape(base)
            let open = metricValue(text, #"lookout_circuit_breaker_state{source="breaker",state="open"}"#) == 1
            return open && metricValue(text, #"lookout_probe_success{source="gone"}"#) == 1 ? true : nil
        }

        try write(
            """
            \(breaker)
              - {name: slowpoke, url: "\(simBase)/ok", interval: 1s}
            """)
        lookout.send(SIGHUP)
        let after = try await eventually("the reload to take effect") { () -> String? in
            let text = await scrape(base)
            let probed = metricValue(text, #"lookout_probes_total{source="slowpoke",result="success"}"#) ?? 0
            return !text.contains(#"source="gone""#) && probed >= 2 ? text : nil
        }
        // Kept, not reset to closed: open, or half-open while its scheduled probe is the trial
        // (a scrape can land in the middle of one on a busy machine).
        let state = ["open", "half_open"].first { metricValue(after, #"lookout_circuit_breaker_state{source="breaker",state="\#($0)"}"#) == 1 }
        #expect(state != nil, "\(after)")
        #expect(metricValue(after, #"lookout_circuit_breaker_opens_total{source="breaker"}"#) == 1)
        #expect(metricValue(after, "lookout_config_last_reload_successful") == 1)

        try "sources: [\n".write(to: config, atomically: true, encoding: .utf8)
        lookout.send(SIGHUP)
        let failed = try await eventually("the failed reload to show") { () -> String? in
            let text = await scrape(base)
            return metricValue(text, "lookout_config_last_reload_successful") == 0 ? text : nil
        }
        #expect(failed.contains(#"lookout_probe_success{source="slowpoke"}"#))
        #expect(lookout.text.contains("config reload failed; keeping the running config"))
        // The failing source is told once, with the upstream's 503, not the open breaker that
        // refused every call since; no line for each failed probe at the default level.
        let down = lookout.text.split(separator: "\n").filter { $0.contains(#"msg="source down""#) }
        #expect(down.count == 1)
        #expect(down.first?.contains("reason=http_503") == true && down.first?.contains("source=breaker") == true)
        #expect(!lookout.text.contains("probe failed"))

        let unauthorised = await http.perform(TransferRequest(url: "\(base)/-/reload", method: "POST", body: [], timeout: .patient))
        #expect(unauthorised.httpStatus == 403)
        #expect(try await lookout.terminate() == 0)
        #expect(try await sim.terminate() == 0)
    }

    @Test func anUnreachableCanaryMeansOneOfflineSignalAndNoBlame() async throws {
        let directory = try makeTemporaryDirectory("lookout")
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = directory.appendingPathComponent("lookout.yml")
        let sources = (0..<3).map { "  - {name: s\($0), url: \"http://127.0.0.1:\(closedPort())/\"}" }.joined(separator: "\n")
        try """
        listen: 127.0.0.1:0
        database: ":memory:"
        defaults:
          interval: 1s
          timeout: 1s
          retry: {transient: {max_attempts: 1}}
          circuit_breaker: {failure_threshold: 1}
        connectivity:
          canaries: ["http://127.0.0.1:\(closedPort())/"]
        sources:
        \(sources)
        """.write(to: config, atomically: true, encoding: .utf8)
        let (lookout, base) = try await startLookout(config: config)
        let text = try await eventually("every source probed twice while offline") { () -> String? in
            let text = await scrape(base)
            let probed = (0..<3).allSatisfy { (metricValue(text, #"lookout_probes_total{source="s\#($0)",result="failure"}"#) ?? 0) >= 2 }
            return probed ? text : nil
        }
        #expect(metricValue(text, "lookout_network_online") == 0)
        // No breaker opened: by default its counter is written only once it has.
        for index in 0..<3 {
            #expect(metricValue(text, #"lookout_circuit_breaker_opens_total{source="s\#(index)"}"#) == nil)
            #expect(metricValue(text, #"lookout_circuit_breaker_state{source="s\#(index)",state="closed"}"#) == 1)
        }
        let log = lookout.text
        #expect(log.components(separatedBy: "network offline").count == 2)
        #expect(!log.contains("source down"))
        #expect(try await lookout.terminate() == 0)
    }
}
