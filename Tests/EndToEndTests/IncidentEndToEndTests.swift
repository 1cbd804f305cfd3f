import Foundation
import ResilientHTTP
import TestSupport
import Testing

/// Three sources break at once and mend, one stays healthy: each broken source is one firing and
/// one resolved notification per hook, naming the upstream's cause and since when — never the
/// circuit breaker.
@Suite("incidents end to end")
struct IncidentEndToEndTests {
    let http = CurlTransport()

    func post(_ url: String) async {
        _ = await http.perform(TransferRequest(url: url, method: "POST", timeout: .seconds(5)))
    }

    func notifications(_ base: String) async throws -> [[String: Any]] {
        let result = await http.perform(TransferRequest(url: "\(base)/webhook/log", timeout: .seconds(10)))
        let log = try JSONSerialization.jsonObject(with: Data(result.body)) as? [[String: Any]] ?? []
        return log.compactMap { $0["payload"] as? [String: Any] }
    }

    @Test func threeBrokenSourcesPageOnceEachAndResolveOnce() async throws {
        let directory = try makeTemporaryDirectory("incidents")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (sim, base) = try await startSimulator()
        let refusedPort = closedPort()
        var upstream: ChildProcess? = try ChildProcess("lookout-sim", ["--listen", "127.0.0.1:\(refusedPort)"])
        _ = try await upstream?.waitFor(#"listening on (http://127\.0\.0\.1:\d+)/"#)

        // Lookout's default rules, scaled from minutes down to seconds.
        let config = directory.appendingPathComponent("lookout.yml")
        try """
        listen: 127.0.0.1:0
        database: \(directory.path)/lookout.sqlite
        defaults:
          interval: 250ms
          timeout: 600ms
          retry: {server_error: {max_attempts: 2, base: 10ms, max: 10ms}, transient: {max_attempts: 1}, timeout: {max_attempts: 1}}
          circuit_breaker: {failure_threshold: 3, open_timeout: 1s, open_timeout_max: 1s}
        sources:
          - {name: healthy, url: "\(base)/ok"}
          - {name: database, url: "\(base)/switch/db?code=503&detail=primary%20database%20unreachable"}
          - {name: refused, url: "http://127.0.0.1:\(refusedPort)/ok"}
          - {name: slow, url: "\(base)/switch/slow?ms=2000"}
        alerts:
          evaluation_interval: 250ms
          rules:
            - {name: AllSourcesFailing, severity: critical, expr: "sources_failing_ratio >= 1", for: 2s}
            - {name: SourceErrorRateCritical, severity: critical, expr: "error_rate[2s] > 0.5", for: 1s}
            - {name: SourceErrorRateHigh, severity: warning, expr: "error_rate[3s] > 0.2", for: 1s}
            - {name: SLOBurnRateFast, severity: critical, expr: "burn_rate[4s] > 14.4 and burn_rate[1s] > 14.4"}
            - {name: CircuitOpened, severity: info, expr: "breaker_open == 1 or breaker_opens[2s] > 0"}
          hooks:
            - {name: chat, type: webhook, url: "\(base)/webhook", group_wait: 2s, group_interval: 1h, repeat_interval: 1h}
            - {name: pager, type: webhook, url: "\(base)/webhook", severities: [critical], group_wait: 2s, group_interval: 1h, repeat_interval: 1h}
        """.write(to: config, atomically: true, encoding: .utf8)
        let (lookout, lookoutBase) = try await startLookout(config: config)
        _ = try await eventually("the first round") {
            await http.perform(TransferRequest(url: "\(lookoutBase)/-/ready", timeout: .patient)).httpStatus == 200 ? true : nil
        }

        // Break three sources at once: a 503 with a message, a refused connection, a timeout.
        await post("\(base)/switch/db/on")
        await post("\(base)/switch/slow/on")
        _ = try await upstream?.terminate()
        upstream = nil
        let broken = ["database", "refused", "slow"]
        let firing = try await eventually("one firing notification per broken source and hook") { () -> [[String: Any]]? in
            let sent = try await notifications(base)
            return sent.count >= 6 ? sent : nil
        }
        #expect(firing.count == 6)
        for hook in ["chat", "pager"] {
            let mine = firing.filter { $0["receiver"] as? String == hook }
            #expect(Set(mine.compactMap { ($0["groupLabels"] as? [String: String])?["source"] }) == Set(broken), "\(hook)")
        }
        var causes: [String: String] = [:]
        for payload in firing {
            #expect(payload["status"] as? String == "firing")
            let text = String(decoding: try JSONSerialization.data(withJSONObject: payload), as: UTF8.self)
            #expect(!text.contains("circuit_open") && !text.lowercased().contains("circuit breaker"), "\(text)")
            let annotations = try #require(payload["commonAnnotations"] as? [String: String])
            let source = (payload["groupLabels"] as? [String: String])?["source"] ?? ""
            causes[source] = annotations["description"]
            #expect(annotations["down_since"]?.hasSuffix("Z") == true, "\(source)")
            #expect(annotations["down_for"]?.hasSuffix("s") == true, "\(source)")
        }
        #expect(causes["database"]?.contains("primary database unreachable") == true)
        #expect(causes["refused"]?.lowercased().contains("refused") == true)
        #expect(causes["slow"]?.lowercased().contains("time") == true)

        // The status JSON says since when, and why, while the breakers hold calls back.
        let status =
            try JSONSerialization.jsonObject(with: Data(await http.perform(TransferRequest(url: "\(lookoutBase)/api/v1/status", timeout: .patient)).body))
            as? [String: Any]
        let sources = status?["sources"] as? [[String: Any]] ?? []
        for source in sources where broken.contains(source["name"] as? String ?? "") {
            let cause = (source["incident"] as? [String: Any])?["cause"] as? [String: Any]
            #expect(cause != nil && cause?["category"] as? String != "circuit_open")
            let incident = source["incident"] as? [String: Any]
            // The rules firing for it now (which of them have fired yet depends on timing).
            let firingRules = incident?["alerts"] as? [String] ?? []
            #expect(!firingRules.isEmpty)
            #expect(Set(firingRules).isSubset(of: ["SourceErrorRateCritical", "SourceErrorRateHigh", "SLOBurnRateFast", "CircuitOpened", "AllSourcesFailing"]))
            #expect(incident?["breaker"] is String)
            #expect(source["down_since"] is String)
        }

        // Mend them: one resolved notification per source and hook, then nothing more.
        await post("\(base)/switch/db/off")
        await post("\(base)/switch/slow/off")
        upstream = try ChildProcess("lookout-sim", ["--listen", "127.0.0.1:\(refusedPort)"])
        _ = try await upstream?.waitFor(#"listening on (http://127\.0\.0\.1:\d+)/"#)
        // Rates are counted in minute buckets: a window shorter than a minute (burn_rate[1s])
        // reads the current minute, so the burn-rate alert may wait for the next one.
        let all = try await eventually(deadline: .seconds(150), "one resolved notification per source and hook") { () -> [[String: Any]]? in
            let sent = try await notifications(base)
            return sent.filter { $0["status"] as? String == "resolved" }.count >= 6 ? sent : nil
        }
        // Twenty more evaluations: no repeat, no second page.
        let probed = { () async -> Double in
            let text = await http.perform(TransferRequest(url: "\(lookoutBase)/metrics", timeout: .patient)).bodyText
            let line = text.split(separator: "\n").first { $0.hasPrefix("lookout_scheduler_probes_started_total ") }
            return line.flatMap { Double($0.split(separator: " ").last ?? "") } ?? 0
        }
        let before = await probed()
        _ = try await eventually("twenty more rounds") { await probed() >= before + 80 ? true : nil }
        let final = try await notifications(base)
        #expect(final.count == all.count)
        #expect(final.count == 12)
        for source in broken {
            for hook in ["chat", "pager"] {
                let statuses = final.filter { $0["receiver"] as? String == hook && ($0["groupLabels"] as? [String: String])?["source"] == source }.map {
                    $0["status"] as? String ?? ""
                }
                #expect(statuses == ["firing", "resolved"], "\(source) → \(hook)")
            }
        }
        #expect(!final.contains { ($0["groupLabels"] as? [String: String])?["source"] == "healthy" })
        #expect(try await lookout.terminate() == 0)
        #expect(try await upstream?.terminate() == 0)
        #expect(try await sim.terminate() == 0)
    }
}
