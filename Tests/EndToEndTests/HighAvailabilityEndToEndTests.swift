import Foundation
import ResilientHTTP
import TestSupport
import Testing

/// Three shards × two replicas on loopback, alerting through two clustered Alertmanagers, with a
/// real Prometheus scraping all six: each source is probed by exactly the two replicas of its
/// shard; the receiver hears each firing and each resolution once, even with one replica killed
/// with -9; every instance's page lists every source and marks the dead one unreachable.
@Suite("high availability end to end")
struct HighAvailabilityEndToEndTests {
    let http = CurlTransport()

    func lines(_ base: String) async -> String {
        await http.perform(TransferRequest(url: "\(base)/metrics", timeout: .patient)).bodyText
    }

    @Test func threeShardsTwoReplicasTwoAlertmanagers() async throws {
        let directory = try makeTemporaryDirectory("ha")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (sim, simBase) = try await startSimulator()

        // Two Alertmanagers in one cluster: whichever sends first, the other stays quiet.
        let (am1, am2, c1, c2) = (closedPort(), closedPort(), closedPort(), closedPort())
        try """
        route: {receiver: hook, group_by: [alertname, source], group_wait: 1s, group_interval: 4s, repeat_interval: 1h}
        receivers: [{name: hook, webhook_configs: [{url: "\(simBase)/webhook", send_resolved: true}]}]
        """.write(to: directory.appendingPathComponent("alertmanager.yml"), atomically: true, encoding: .utf8)
        var alertmanagers: [ChildProcess] = []
        for (index, (web, own, other)) in [(am1, c1, c2), (am2, c2, c1)].enumerated() {
            alertmanagers.append(
                try ChildProcess(
                    "/usr/bin/prometheus-alertmanager",
                    [
                        "--config.file=\(directory.path)/alertmanager.yml", "--storage.path=\(directory.path)/am\(index)",
                        "--web.listen-address=127.0.0.1:\(web)", "--cluster.listen-address=127.0.0.1:\(own)", "--cluster.peer=127.0.0.1:\(other)",
                        "--cluster.peer-timeout=2s", "--cluster.gossip-interval=50ms", "--cluster.settle-timeout=1s",
                        "--cluster.reconnect-interval=1s",
                    ]))
            // One at a time: the second joins a first that already listens, instead of both
            // failing their first join and waiting for a reconnect (a fresh-clone CI run timed
            // out waiting for the cluster once).
            _ = try await eventually("Alertmanager on \(web) ready") { () -> Bool? in
                await http.perform(TransferRequest(url: "http://127.0.0.1:\(web)/-/ready", timeout: .patient)).httpStatus == 200 ? true : nil
            }
        }
        _ = try await eventually("the Alertmanager cluster formed") { () -> Bool? in
            let status = await http.perform(TransferRequest(url: "http://127.0.0.1:\(am1)/api/v2/status", timeout: .patient)).bodyText
            return status.components(separatedBy: "\"address\"").count - 1 >= 2 ? true : nil
        }

        // Six instances of one config: shard 0..2, replicas a and b; each lists all six as peers.
        let ports = (0..<6).map { _ in closedPort() }
        let names = (0..<11).map { "s\($0)" } + ["flaky"]
        let config = directory.appendingPathComponent("lookout.yml")
        try """
        database: ":memory:"
        shard: {count: 3}
        defaults: {interval: 500ms, timeout: 2s, retry: {server_error: {max_attempts: 1}}, circuit_breaker: {failure_threshold: 1000}}
        sources:
        \(names.map { "  - {name: \($0), url: \"\(simBase)/\($0 == "flaky" ? "switch/ha-flaky" : "ok")\"}" }.joined(separator: "\n"))
        peers: [\(ports.map { "\"http://127.0.0.1:\($0)\"" }.joined(separator: ", "))]
        alerts:
          evaluation_interval: 500ms
          rules: [{name: SourceDown, severity: critical, expr: up == 0}]
          hooks:
            - {name: am1, type: alertmanager, url: "http://127.0.0.1:\(am1)"}
            - {name: am2, type: alertmanager, url: "http://127.0.0.1:\(am2)"}
        """.write(to: config, atomically: true, encoding: .utf8)
        var instances: [ChildProcess] = []
        for (index, port) in ports.enumerated() {
            instances.append(
                try ChildProcess(
                    "lookout",
                    [
                        "serve", "--config", config.path, "--listen", "127.0.0.1:\(port)", "--shard", "\(index / 2)/3", "--replica", index % 2 == 0 ? "a" : "b",
                    ]))
        }
        for instance in instances { _ = try await instance.waitFor(#"msg=listening address=127\.0\.0\.1:(\d+)"#) }
        let bases = ports.map { "http://127.0.0.1:\($0)" }

        // Every source is probed by exactly the two replicas of one shard.
        let owners = try await eventually("every source probed") { () -> [String: [Int]]? in
            var owners: [String: [Int]] = [:]
            for (index, base) in bases.enumerated() {
                let text = await lines(base)
                for name in names where text.contains(#"lookout_probes_total{source="\#(name)",result="success"}"#) { owners[name, default: []].append(index) }
            }
            return owners.count == names.count ? owners : nil
        }
        for (name, instances) in owners {
            #expect(instances.count == 2 && instances[0] / 2 == instances[1] / 2 && instances[0] % 2 == 0, "\(name) is probed by \(instances)")
        }
        // Prometheus scraping all six sees each source twice: once per replica.
        let prometheus = try TestPrometheus(scraping: ports.map { "127.0.0.1:\($0)" }, in: directory)
        _ = try await eventually("Prometheus to see every source from two replicas") { () -> Bool? in
            let counts = await prometheus.query("count by (source) (lookout_probe_success)") ?? []
            let twice = counts.filter { (($0["value"] as? [Any])?.last as? String) == "2" }
            return counts.count == names.count && twice.count == names.count ? true : nil
        }

        // flaky fails while both replicas of its shard run: both notify both Alertmanagers; the
        // receiver hears it once.
        let flakyShard = (owners["flaky"] ?? [0])[0] / 2
        _ = await http.perform(TransferRequest(url: "\(simBase)/switch/ha-flaky/on", method: "POST", timeout: .patient))
        func notifications(_ status: String) async throws -> Int {
            try await simulatorWebhookLog(simBase).compactMap { $0["payload"] as? [String: Any] }.filter { payload in
                payload["status"] as? String == status
                    && (payload["alerts"] as? [[String: Any]] ?? []).contains { ($0["labels"] as? [String: String])?["source"] == "flaky" }
            }.count
        }
        let firedAt = try await eventually("the firing notification") { () -> ContinuousClock.Instant? in
            try await notifications("firing") >= 1 ? ContinuousClock.now : nil
        }
        // The second Alertmanager sends only if the first one's notification log has not
        // reached it within its peer timeout (2 s; at 500 ms a loaded machine delayed the gossip
        // past it and both sent). A flush of the second one that began before the resolution
        // reached it still holds the firing state, and sends it if the first one's resolved
        // notification is logged meanwhile (a peer timeout of 3 s heard firing, resolved,
        // firing, resolved every time): the group interval (4 s) is longer than the peer timeout,
        // as in Alertmanager's defaults (5 min, 15 s), and the resolution waits until three peer
        // timeouts after the firing.
        _ = try await eventually("three peer timeouts after the firing") { () -> Bool? in
            ContinuousClock.now - firedAt >= .seconds(6) ? true : nil
        }
        #expect(try await notifications("firing") == 1)

        // One replica of that shard dies without a word; the other resolves the incident.
        let killed = flakyShard * 2
        kill(instances[killed].pid, SIGKILL)
        _ = await http.perform(TransferRequest(url: "\(simBase)/switch/ha-flaky/off", method: "POST", timeout: .patient))
        let resolvedAt = try await eventually("the resolved notification") { () -> ContinuousClock.Instant? in
            try await notifications("resolved") >= 1 ? ContinuousClock.now : nil
        }
        // Again three peer timeouts, then count.
        _ = try await eventually("three peer timeouts after the resolution") { () -> Bool? in
            ContinuousClock.now - resolvedAt >= .seconds(6) ? true : nil
        }
        #expect(try await notifications("firing") == 1)
        #expect(try await notifications("resolved") == 1)

        // Every surviving instance lists every source and the dead one as unreachable. (Another
        // peer may also show as unreachable for a moment when a loaded machine keeps it from
        // answering within the 5-s timeout; that is the page telling the truth.)
        let viewer = bases[(killed + 2) % 6]
        let page = try await eventually(deadline: .seconds(40), "the dead replica marked unreachable") { () -> String? in
            let page = await http.perform(TransferRequest(url: "\(viewer)/", timeout: .patient)).bodyText
            let unreachable = page.components(separatedBy: #"data-peer="unreachable">"#).dropFirst()
            return unreachable.contains { $0.prefix(2_000).contains("(\(bases[killed]))") } ? page : nil
        }
        #expect(page.contains("<h2>Other instances (5)</h2>"))
        for name in names { #expect(page.contains(">\(name)<"), "\(name) is not on the merged page") }

        _ = try await prometheus.process.terminate()
        for (index, instance) in instances.enumerated() where index != killed { #expect(try await instance.terminate() == 0) }
        for alertmanager in alertmanagers { _ = try await alertmanager.terminate() }
        #expect(try await sim.terminate() == 0)
    }
}
