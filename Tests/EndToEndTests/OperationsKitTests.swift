import Foundation
import ResilientHTTP
import Testing
import TestSupport
import Yams

/// deploy/ and Dashboards/ stay correct as the metrics change: every file parses, Prometheus'
/// own tools accept the configs, rules and dashboard queries, every metric they name is one a
/// running Lookout exports, and the systemd unit verifies.
@Suite("operations kit", .serialized)
struct OperationsKitTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    let http = CurlTransport()

    static func files(under folder: String, extensions: [String]) -> [URL] {
        let base = root.appendingPathComponent(folder)
        guard let walker = FileManager.default.enumerator(at: base, includingPropertiesForKeys: nil) else { return [] }
        return walker.compactMap { $0 as? URL }.filter { extensions.contains($0.pathExtension) }
    }

    /// The PromQL of the dashboard's panels.
    static func dashboardQueries() throws -> [String] {
        var queries: [String] = []
        for file in files(under: "Dashboards", extensions: ["json"]) {
            let dashboard = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any])
            for panel in dashboard["panels"] as? [[String: Any]] ?? [] {
                for target in panel["targets"] as? [[String: Any]] ?? [] {
                    if let expr = target["expr"] as? String { queries.append(expr) }
                }
            }
        }
        return queries
    }

    /// Every metric SPEC section 7 lists.
    static let specMetrics = [
        "lookout_probe_success", "lookout_probe_duration_seconds", "lookout_probe_phase_seconds", "lookout_probe_http_status_code",
        "lookout_probes_total", "lookout_errors_total", "lookout_retries_total", "lookout_calls_total",
        "lookout_retry_budget_exhausted_total", "lookout_error_rate", "lookout_retry_success_ratio", "lookout_availability_ratio",
        "lookout_circuit_breaker_state", "lookout_circuit_breaker_opens_total", "lookout_circuit_breaker_not_permitted_calls_total",
        "lookout_circuit_breaker_open_seconds", "lookout_rate_limiter_available_tokens", "lookout_tls_cert_expiry_timestamp_seconds",
        "lookout_download_bytes_total", "lookout_download_throughput_bytes_per_second", "lookout_download_progress_ratio",
        "lookout_download_state", "lookout_download_verify_failures_total", "lookout_partial_failure_ratio", "lookout_network_online",
        "lookout_alerts_firing", "lookout_alert_notifications_total", "lookout_alert_outbox_pending",
        "lookout_config_last_reload_successful", "lookout_config_last_reload_success_timestamp_seconds",
        "lookout_db_write_duration_seconds", "lookout_shard_info", "lookout_build_info",
        "process_cpu_seconds_total", "process_resident_memory_bytes", "process_open_fds", "process_start_time_seconds",
    ]

    /// The `lookout_*` names a PromQL text uses.
    static func metricNames(_ text: String) -> Set<String> {
        let expression = try! NSRegularExpression(pattern: "lookout_[a-z0-9_]+")
        return Set(expression.matches(in: text, range: NSRange(text.startIndex..., in: text)).compactMap {
            Range($0.range, in: text).map { String(text[$0]) }
        })
    }

    @Test func everyYAMLAndJSONFileParses() throws {
        let yamlFiles = Self.files(under: "deploy", extensions: ["yml", "yaml"]) + Self.files(under: "Dashboards", extensions: ["yml", "yaml"])
            + Self.files(under: "examples", extensions: ["yml", "yaml"])
        #expect(yamlFiles.count >= 8)
        for file in yamlFiles {
            let text = try String(contentsOf: file, encoding: .utf8)
            let documents = try Array(Yams.load_all(yaml: text))
            #expect(!documents.isEmpty, "\(file.lastPathComponent) is empty")
        }
        let jsonFiles = Self.files(under: "Dashboards", extensions: ["json"])
        #expect(!jsonFiles.isEmpty)
        for file in jsonFiles {
            #expect(throws: Never.self) { try JSONSerialization.jsonObject(with: Data(contentsOf: file)) }
        }
        let kubernetes = try String(contentsOf: Self.root.appendingPathComponent("deploy/kubernetes/lookout.yaml"), encoding: .utf8)
        let kinds = try Yams.load_all(yaml: kubernetes).compactMap { ($0 as? [String: Any])?["kind"] as? String }
        #expect(Set(kinds) == ["ConfigMap", "Service", "StatefulSet", "ServiceMonitor"])
    }

    @Test func prometheusAcceptsTheConfigRulesAndDashboardQueries() throws {
        let deploy = Self.root.appendingPathComponent("deploy")
        let config = try runTool("/usr/bin/promtool", ["check", "config", deploy.appendingPathComponent("prometheus.yml").path])
        #expect(config.status == 0, "\(config.output)")
        let rules = try runTool("/usr/bin/promtool", ["check", "rules", deploy.appendingPathComponent("lookout-rules.yml").path])
        #expect(rules.status == 0, "\(rules.output)")
        #expect(rules.output.contains("13 rules found"))
        let alertmanager = try runTool("/usr/bin/amtool", ["check-config", deploy.appendingPathComponent("alertmanager.yml").path])
        #expect(alertmanager.status == 0, "\(alertmanager.output)")

        // promtool parses each dashboard query when it is written as a recording rule.
        let queries = try Self.dashboardQueries()
        #expect(queries.count >= 16)
        let directory = try makeTemporaryDirectory("dash")
        defer { try? FileManager.default.removeItem(at: directory) }
        var file = "groups:\n  - name: dashboard\n    rules:\n"
        for (index, query) in queries.enumerated() {
            file += "      - record: dashboard:query_\(index)\n        expr: \(LogfmtJSON.quote(query))\n"
        }
        let path = directory.appendingPathComponent("dashboard-rules.yml")
        try file.write(to: path, atomically: true, encoding: .utf8)
        let parsed = try runTool("/usr/bin/promtool", ["check", "rules", path.path])
        #expect(parsed.status == 0, "\(parsed.output)")
    }

    @Test func everyMetricNamedByTheKitIsExported() async throws {
        let directory = try makeTemporaryDirectory("kit")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (sim, simBase) = try await startSimulator()
        let config = directory.appendingPathComponent("lookout.yml")
        try """
            listen: 127.0.0.1:0
            database: \(directory.path)/lookout.sqlite
            defaults: {interval: 1s, timeout: 2s}
            sources:
              - {name: api, url: "\(simBase)/ok"}
              - {name: file, kind: download, url: "\(simBase)/download/1000"}
            alerts:
              hooks: [{name: chat, type: webhook, url: "\(simBase)/webhook"}]
            """.write(to: config, atomically: true, encoding: .utf8)
        let lookout = try ChildProcess("lookout", ["serve", "--config", config.path])
        let port = try await lookout.waitFor(#"msg=listening address=127\.0\.0\.1:(\d+)"#)
        let scrape = try await eventually("both sources probed") { () -> String? in
            let text = await http.perform(TransferRequest(url: "http://127.0.0.1:\(port)/metrics")).bodyText
            return text.contains(#"lookout_probe_success{source="file"}"#) && text.contains(#"lookout_probe_success{source="api"}"#) ? text : nil
        }
        var exported = Set<String>()
        for line in scrape.split(separator: "\n") where line.hasPrefix("# TYPE ") {
            let parts = line.split(separator: " ")
            exported.insert(String(parts[2]))
            if parts[3] == "histogram" { for suffix in ["_bucket", "_sum", "_count"] { exported.insert(String(parts[2]) + suffix) } }
        }
        for name in Self.specMetrics {
            #expect(exported.contains(name), "\(name) is in SPEC section 7 but Lookout does not export it")
        }
        let rules = try String(contentsOf: Self.root.appendingPathComponent("deploy/lookout-rules.yml"), encoding: .utf8)
        let named = Self.metricNames(rules).union(Self.metricNames(try Self.dashboardQueries().joined(separator: "\n")))
        #expect(named.count >= 20)
        for name in named.sorted() {
            #expect(exported.contains(name), "\(name) is named by deploy/ or Dashboards/ but Lookout does not export it")
        }
        #expect(try await lookout.terminate() == 0)
        #expect(try await sim.terminate() == 0)
    }

    @Test func theSystemdUnitVerifies() throws {
        let unit = try String(contentsOf: Self.root.appendingPathComponent("deploy/lookout.service"), encoding: .utf8)
        for directive in ["User=lookout", "StateDirectory=lookout", "ProtectSystem=strict", "ExecReload=/bin/kill -HUP $MAINPID", "NoNewPrivileges=true"] {
            #expect(unit.contains(directive))
        }
        let directory = try makeTemporaryDirectory("unit")
        defer { try? FileManager.default.removeItem(at: directory) }
        // Verified against the binary just built, since /usr/local/bin/lookout is not installed here.
        let binary = ChildProcess.binDirectory.appendingPathComponent("lookout").path
        let path = directory.appendingPathComponent("lookout.service")
        try unit.replacingOccurrences(of: "/usr/local/bin/lookout", with: binary).write(to: path, atomically: true, encoding: .utf8)
        let verify = try runTool("/usr/bin/systemd-analyze", ["verify", path.path])
        #expect(verify.status == 0, "\(verify.output)")
        #expect(verify.output.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, "\(verify.output)")
    }

    @Test func twoShardsProbeEverySourceExactlyOnce() async throws {
        let directory = try makeTemporaryDirectory("shards")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (sim, simBase) = try await startSimulator()
        let names = (0..<12).map { "source-\($0)" }
        let config = directory.appendingPathComponent("lookout.yml")
        try """
            listen: 127.0.0.1:0
            database: ":memory:"
            defaults: {interval: 500ms, timeout: 2s}
            sources:
            \(names.map { "  - {name: \($0), url: \"\(simBase)/flaky/\($0)?fail=0\"}" }.joined(separator: "\n"))
            """.write(to: config, atomically: true, encoding: .utf8)
        let first = try ChildProcess("lookout", ["serve", "--config", config.path, "--shard", "0/2"])
        let second = try ChildProcess("lookout", ["serve", "--config", config.path, "--shard", "1/2"])
        let ports = [try await first.waitFor(#"msg=listening address=127\.0\.0\.1:(\d+)"#), try await second.waitFor(#"msg=listening address=127\.0\.0\.1:(\d+)"#)]
        func owned(_ port: String) async -> Set<String> {
            let text = await http.perform(TransferRequest(url: "http://127.0.0.1:\(port)/metrics")).bodyText
            return Set(names.filter { text.contains(#"lookout_probes_total{source="\#($0)""#) })
        }
        let shards = [await owned(ports[0]), await owned(ports[1])]
        #expect(shards[0].isDisjoint(with: shards[1]))
        #expect(shards[0].union(shards[1]) == Set(names))
        #expect(!shards[0].isEmpty && !shards[1].isEmpty)
        // Between them the two shards reach every source (the wait fails if one is never probed).
        _ = try await eventually("every source probed") { () -> [String: Int]? in
            let result = await http.perform(TransferRequest(url: "\(simBase)/counters"))
            let counters = (try? JSONSerialization.jsonObject(with: Data(result.body)) as? [String: Int]) ?? [:]
            return names.allSatisfy { (counters["/flaky/\($0)"] ?? 0) >= 1 } ? counters : nil
        }
        let info0 = await http.perform(TransferRequest(url: "http://127.0.0.1:\(ports[0])/metrics")).bodyText
        #expect(info0.contains(#"lookout_shard_info{index="0",count="2"} 1"#))
        #expect(try await first.terminate() == 0)
        #expect(try await second.terminate() == 0)
        #expect(try await sim.terminate() == 0)
    }
}

/// YAML double-quoted scalars take JSON string escapes.
enum LogfmtJSON {
    static func quote(_ text: String) -> String {
        let data = try! JSONSerialization.data(withJSONObject: [text], options: [.withoutEscapingSlashes])
        let array = String(decoding: data, as: UTF8.self)
        return String(array.dropFirst().dropLast())
    }
}
