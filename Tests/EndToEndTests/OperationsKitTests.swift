import Foundation
import LookoutCore
import LookoutService
import ResilientHTTP
import TestSupport
import Testing
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

    static func dashboard() throws -> [String: Any] {
        let file = root.appendingPathComponent("Dashboards/lookout-overview.json")
        return try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any])
    }

    /// The panels (rows left out), with their titles.
    static func panels() throws -> [[String: Any]] {
        (try dashboard()["panels"] as? [[String: Any]] ?? []).filter { $0["type"] as? String != "row" }
    }

    /// Grafana's variables as a query runs with every value chosen ("All" is `.*`).
    static func substituted(_ query: String) -> String {
        var text = query.replacingOccurrences(of: "$__rate_interval", with: "1m")
        for name in ["job", "instance", "group", "source"] { text = text.replacingOccurrences(of: "$\(name)", with: ".*") }
        return text
    }

    /// The PromQL of the dashboard's panels, variables substituted, with each panel's title.
    static func dashboardQueries() throws -> [(panel: String, query: String)] {
        try panels().flatMap { panel in
            (panel["targets"] as? [[String: Any]] ?? []).compactMap { target in
                (target["expr"] as? String).map { (panel["title"] as? String ?? "?", substituted($0)) }
            }
        }
    }

    /// Titles of the panels that say they need `metrics: {detail: full}`.
    static func fullDetailPanels() throws -> Set<String> {
        Set(try panels().filter { ($0["description"] as? String ?? "").contains("Only with metrics: {detail: full}") }.compactMap { $0["title"] as? String })
    }

    /// Every metric SPEC section 7 lists.
    static let specMetrics = [
        "lookout_probe_success", "lookout_probe_duration_seconds", "lookout_probe_phase_seconds", "lookout_probe_http_status_code",
        "lookout_probes_total", "lookout_errors_total", "lookout_retries_total", "lookout_calls_total",
        "lookout_retry_budget_exhausted_total", "lookout_error_rate", "lookout_error_ratio", "lookout_last_outage_duration_seconds",
        "lookout_retry_success_ratio", "lookout_availability_ratio",
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
        return Set(
            expression.matches(in: text, range: NSRange(text.startIndex..., in: text)).compactMap {
                Range($0.range, in: text).map { String(text[$0]) }
            })
    }

    @Test func everyYAMLAndJSONFileParses() throws {
        let yamlFiles =
            Self.files(under: "deploy", extensions: ["yml", "yaml"]) + Self.files(under: "Dashboards", extensions: ["yml", "yaml"])
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
        #expect(Set(kinds) == ["ConfigMap", "Service", "StatefulSet", "PodDisruptionBudget", "ServiceMonitor"])
    }

    @Test func prometheusAcceptsTheConfigRulesAndDashboardQueries() async throws {
        let deploy = Self.root.appendingPathComponent("deploy")
        let config = try await runTool("/usr/bin/promtool", ["check", "config", deploy.appendingPathComponent("prometheus.yml").path])
        #expect(config.status == 0, "\(config.output)")
        let rules = try await runTool("/usr/bin/promtool", ["check", "rules", deploy.appendingPathComponent("lookout-rules.yml").path])
        #expect(rules.status == 0, "\(rules.output)")
        #expect(rules.output.contains("18 rules found"))
        // The location rules: one location failing is no page, two are one (promtool's unit test).
        let locations = try await runTool("/usr/bin/promtool", ["check", "rules", deploy.appendingPathComponent("lookout-location-rules.yml").path])
        #expect(locations.status == 0 && locations.output.contains("2 rules found"), "\(locations.output)")
        let quorum = try await runTool("/usr/bin/promtool", ["test", "rules", deploy.appendingPathComponent("lookout-location-rules.test.yml").path])
        #expect(quorum.status == 0 && quorum.output.contains("SUCCESS"), "\(quorum.output)")
        let alertmanager = try await runTool("/usr/bin/amtool", ["check-config", deploy.appendingPathComponent("alertmanager.yml").path])
        #expect(alertmanager.status == 0, "\(alertmanager.output)")

        // promtool parses each dashboard query when it is written as a recording rule.
        let queries = try Self.dashboardQueries().map(\.query)
        #expect(queries.count >= 25)
        let directory = try makeTemporaryDirectory("dash")
        defer { try? FileManager.default.removeItem(at: directory) }
        var file = "groups:\n  - name: dashboard\n    rules:\n"
        for (index, query) in queries.enumerated() {
            file += "      - record: dashboard:query_\(index)\n        expr: \(LogfmtJSON.quote(query))\n"
        }
        let path = directory.appendingPathComponent("dashboard-rules.yml")
        try file.write(to: path, atomically: true, encoding: .utf8)
        let parsed = try await runTool("/usr/bin/promtool", ["check", "rules", path.path])
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
            let text = await http.perform(TransferRequest(url: "http://127.0.0.1:\(port)/metrics", timeout: .patient)).bodyText
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
        let rules =
            try String(contentsOf: Self.root.appendingPathComponent("deploy/lookout-rules.yml"), encoding: .utf8)
            + String(contentsOf: Self.root.appendingPathComponent("deploy/lookout-location-rules.yml"), encoding: .utf8)
        let named = Self.metricNames(rules).union(Self.metricNames(try Self.dashboardQueries().map(\.query).joined(separator: "\n")))
        #expect(named.count >= 20)
        for name in named.sorted() {
            #expect(exported.contains(name), "\(name) is named by deploy/ or Dashboards/ but Lookout does not export it")
        }
        #expect(try await lookout.terminate() == 0)
        #expect(try await sim.terminate() == 0)
    }

    /// Built for 10 to 10,000 sources and for replicas: variables, units, no line per source in
    /// the overview, no hard-coded data source.
    @Test func theDashboardHasVariablesUnitsAndNoLinePerSource() throws {
        let dashboard = try Self.dashboard()
        let variables = ((dashboard["templating"] as? [String: Any])?["list"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
        #expect(variables == ["datasource", "job", "instance", "group", "source"])
        let panels = try Self.panels()
        #expect(panels.count >= 25)
        for panel in panels {
            let title = panel["title"] as? String ?? "?"
            let unit = ((panel["fieldConfig"] as? [String: Any])?["defaults"] as? [String: Any])?["unit"] as? String
            #expect(unit?.isEmpty == false, "\(title) has no unit")
            #expect((panel["datasource"] as? [String: String])?["uid"] == "${datasource}", "\(title) names a data source")
            #expect((panel["description"] as? String)?.isEmpty == false, "\(title) says nothing about itself")
        }
        // Before the drill-down row, a query either aggregates or keeps the top N: no line per source.
        let rows = (dashboard["panels"] as? [[String: Any]] ?? [])
        let drillDown = rows.firstIndex { ($0["title"] as? String)?.hasPrefix("Source drill-down") == true } ?? rows.count
        for panel in rows[..<drillDown] where panel["type"] as? String != "row" && panel["type"] as? String != "table" {
            for target in panel["targets"] as? [[String: Any]] ?? [] {
                let query = target["expr"] as? String ?? ""
                let bounded =
                    [
                        "count(", "sum(", "quantile(", "sum by (category)", "sum by (le)", "sum by (hook", "topk(", "avg(", "min(", "max(",
                        "histogram_quantile(0.", "max by (instance)", "sum by (instance)", "max by (hook)",
                    ]
                    .contains { query.hasPrefix($0) } || (panel["title"] as? String) == "Download throughput"
                #expect(bounded, "\(panel["title"] ?? "?"): \(query)")
            }
        }
    }

    /// Every panel's query returns data from a real Prometheus scraping a running Lookout with a
    /// healthy source, a failing one (errors, retries, an open breaker, an alert notified) and a
    /// download; every variable's query finds values.
    @Test func everyDashboardQueryReturnsDataFromPrometheus() async throws {
        let directory = try makeTemporaryDirectory("dashboard")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (sim, simBase) = try await startSimulator()
        let config = directory.appendingPathComponent("lookout.yml")
        try """
        listen: 127.0.0.1:0
        database: \(directory.path)/lookout.sqlite
        defaults: {interval: 1s, timeout: 2s, retry: {server_error: {max_attempts: 2, base: 10ms, max: 20ms}}, circuit_breaker: {failure_threshold: 2, open_timeout: 2s}, sla: {target: 99.9%}}
        sources:
          - {name: api, group: Payments, url: "\(simBase)/ok"}
          - {name: checkout, group: Payments, url: "\(simBase)/status/503"}
          - {name: dump, kind: download, url: "\(simBase)/download/100000?seed=1"}
        alerts:
          evaluation_interval: 1s
          rules: [{name: SourceDown, severity: critical, expr: up == 0}]
          hooks: [{name: chat, type: webhook, url: "\(simBase)/webhook", group_wait: 0s}]
        """.write(to: config, atomically: true, encoding: .utf8)
        let (lookout, base) = try await startLookout(config: config)
        let prometheus = try TestPrometheus(scraping: [String(base.dropFirst("http://".count))], in: directory)
        func results(_ query: String) async -> Int? { await prometheus.query(query)?.count }
        // Lookout runs with the default metrics detail: every panel but those that say they
        // need `detail: full` has data, and those have none (the budget of 15 series a source).
        let fullOnly = try Self.fullDetailPanels()
        #expect(fullOnly == ["Latency heatmap", "Phases of the last probe"])
        let queries = try Self.dashboardQueries()
        // Until every panel has data (a rate needs two scrapes; the breaker and the alert a few seconds).
        let empty = try await eventually(deadline: .seconds(90), "every panel's query to return data") { () -> [String]? in
            var missing: [String] = []
            for (panel, query) in queries where !fullOnly.contains(panel) {
                if (await results(query) ?? 0) == 0 { missing.append("\(panel): \(query)") }
            }
            return missing.isEmpty ? missing : nil
        }
        #expect(empty.isEmpty)
        for (panel, query) in queries where fullOnly.contains(panel) {
            #expect((await results(query) ?? 0) == 0, "\(panel) says it needs detail: full but has data")
        }
        // The variables: label_values(QUERY, label) finds values.
        let variables = (try Self.dashboard()["templating"] as? [String: Any])?["list"] as? [[String: Any]] ?? []
        for variable in variables where variable["type"] as? String == "query" {
            let definition = variable["definition"] as? String ?? ""
            let arguments = definition.dropFirst("label_values(".count)
            let inner = String(arguments[..<(arguments.lastIndex(of: ",") ?? arguments.endIndex)])
            #expect((await results(Self.substituted(inner)) ?? 0) > 0, "the \(variable["name"] ?? "?") variable finds nothing: \(definition)")
        }
        // The firing-alerts table names the source.
        #expect((await results(#"lookout_alert_active{alertname="SourceDown", source="checkout"}"#) ?? 0) == 1)
        #expect((await results(#"lookout_source_info{source="api", group="Payments"}"#) ?? 0) == 1)
        _ = try await prometheus.process.terminate()
        #expect(try await lookout.terminate() == 0)
        #expect(try await sim.terminate() == 0)
    }

    /// `--shard auto` in a StatefulSet: pod NAME-k is replica k mod R of shard k div R; a pod
    /// past the shards refuses to start, saying how many pods there should be.
    @Test func shardAutoTakesTheShardFromThePodsOrdinal() async throws {
        let directory = try makeTemporaryDirectory("auto")
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = directory.appendingPathComponent("lookout.yml")
        try """
        listen: 127.0.0.1:0
        database: ":memory:"
        shard: {count: 2}
        defaults: {interval: 1h}
        sources:
        \((0..<8).map { "  - {name: s\($0), url: \"http://127.0.0.1:1/\($0)\"}" }.joined(separator: "\n"))
        """.write(to: config, atomically: true, encoding: .utf8)
        let pod = try ChildProcess("lookout", ["serve", "--config", config.path, "--shard", "auto", "--replicas", "2"], environment: ["HOSTNAME": "lookout-3"])
        let port = try await pod.waitFor(#"msg=listening address=127\.0\.0\.1:(\d+)"#)
        #expect(pod.text.contains("shard=1/2") && pod.text.contains("replica=1"))
        let metrics = await http.perform(TransferRequest(url: "http://127.0.0.1:\(port)/metrics", timeout: .patient)).bodyText
        #expect(metrics.contains(#"lookout_shard_info{index="1",count="2"} 1"#))
        #expect(metrics.contains(#"replica="1"} 1"#))
        #expect(try await pod.terminate() == 0)
        let binary = ChildProcess.binDirectory.appendingPathComponent("lookout").path
        for (host, message) in [
            ("lookout-4", "that is shard 2, but shard.count is 2; set the StatefulSet's replicas to shard.count × --replicas (4)"),
            ("laptop", "needs a StatefulSet pod's host name"),
        ] {
            let refused = try await runTool(
                "/usr/bin/env", ["HOSTNAME=\(host)", binary, "serve", "--config", config.path, "--shard", "auto", "--replicas", "2"])
            #expect(refused.status == 1)
            #expect(refused.output.contains(message), "\(refused.output)")
        }
    }

    /// A ConfigMap update — Kubernetes swaps a `..data` symlink — is picked up without a restart
    /// or a signal; a broken update keeps the running config.
    @Test func aConfigMapUpdateIsReloadedByItself() async throws {
        let directory = try makeTemporaryDirectory("configmap")
        defer { try? FileManager.default.removeItem(at: directory) }
        let files = FileManager.default
        func version(_ name: String, _ text: String) throws {
            let folder = directory.appendingPathComponent(name)
            try files.createDirectory(at: folder, withIntermediateDirectories: true)
            try text.write(to: folder.appendingPathComponent("lookout.yml"), atomically: true, encoding: .utf8)
            // As the kubelet does: a new ..data link, renamed over the old one.
            let link = directory.appendingPathComponent("..data_tmp").path
            try? files.removeItem(atPath: link)
            try files.createSymbolicLink(atPath: link, withDestinationPath: name)
            _ = rename(link, directory.appendingPathComponent("..data").path)
        }
        let head = "listen: 127.0.0.1:0\ndatabase: \":memory:\"\ndefaults: {interval: 1h}\nsources:\n  - {name: a, url: \"http://127.0.0.1:1/\"}\n"
        try version("v1", head)
        let config = directory.appendingPathComponent("lookout.yml").path
        try files.createSymbolicLink(atPath: config, withDestinationPath: "..data/lookout.yml")
        let (lookout, base) = try await startLookout(config: URL(fileURLWithPath: config))
        func names() async -> [String] {
            let result = await http.perform(TransferRequest(url: "\(base)/api/v1/status", timeout: .patient))
            let object = (try? JSONSerialization.jsonObject(with: Data(result.body)) as? [String: Any]) ?? [:]
            return (object["sources"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }.sorted()
        }
        #expect(await names() == ["a"])
        try version("v2", head + "  - {name: b, url: \"http://127.0.0.1:1/b\"}\n")
        _ = try await eventually(deadline: .seconds(30), "the new source") { await names() == ["a", "b"] ? true : nil }
        try version("v3", head + "  - {name: b, url: \"http://127.0.0.1:1/b\", interval: 5x}\n")
        _ = try await eventually(deadline: .seconds(30), "the failed reload") { () -> Bool? in
            let text = await http.perform(TransferRequest(url: "\(base)/metrics", timeout: .patient)).bodyText
            return text.contains("lookout_config_last_reload_successful 0") ? true : nil
        }
        #expect(await names() == ["a", "b"])
        #expect(lookout.text.contains("config file changed; reloading"))
        #expect(try await lookout.terminate() == 0)
    }

    /// The manifests against Kubernetes' own schemas (kubernetes-validate from PyPI, installed
    /// by `make test`), strictly: no unknown field; the ConfigMap's config passes check-config;
    /// the StatefulSet's pods take their shard from their ordinal, replicas = shards × 2.
    @Test func theKubernetesManifestsValidate() async throws {
        let manifest = Self.root.appendingPathComponent("deploy/kubernetes/lookout.yaml").path
        let pydeps = ProcessInfo.processInfo.environment["LOOKOUT_PYDEPS"] ?? Self.root.appendingPathComponent(".build/pydeps").path
        let validated = try await runTool("/usr/bin/env", ["PYTHONPATH=\(pydeps)", "python3", "-m", "kubernetes_validate", "--strict", manifest])
        #expect(validated.status == 0, "\(validated.output)")
        for kind in ["configmap", "service", "statefulset", "poddisruptionbudget"] {
            #expect(validated.output.contains("passed for resource \(kind)/lookout"), "\(validated.output)")
        }
        let documents = try Yams.load_all(yaml: String(contentsOfFile: manifest, encoding: .utf8)).compactMap { $0 as? [String: Any] }
        let configMap = try #require(documents.first { $0["kind"] as? String == "ConfigMap" })
        let text = try #require((configMap["data"] as? [String: String])?["lookout.yml"])
        let directory = try makeTemporaryDirectory("k8s")
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = directory.appendingPathComponent("lookout.yml")
        try text.write(to: config, atomically: true, encoding: .utf8)
        let binary = ChildProcess.binDirectory.appendingPathComponent("lookout").path
        let checked = try await runTool(binary, ["check-config", "--config", config.path])
        #expect(checked.status == 0, "\(checked.output)")
        let loaded = try LookoutApp.loadConfig(path: config.path)
        let set = try #require(documents.first { $0["kind"] as? String == "StatefulSet" })
        let spec = try #require(set["spec"] as? [String: Any])
        let args = ((((spec["template"] as? [String: Any])?["spec"] as? [String: Any])?["containers"] as? [[String: Any]])?.first?["args"] as? [String]) ?? []
        let replicasPerShard = args.firstIndex(of: "--replicas").flatMap { Int(args[$0 + 1]) } ?? 1
        #expect(args.contains("auto"))
        #expect(spec["replicas"] as? Int == loaded.shard.count * replicasPerShard)
    }

    @Test func theSystemdUnitVerifies() async throws {
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
        let verify = try await runTool("/usr/bin/systemd-analyze", ["verify", path.path])
        #expect(verify.status == 0, "\(verify.output)")
        #expect(verify.output.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, "\(verify.output)")
    }

    /// The packages the `apt-get install` of one Dockerfile stage names: the stage `FROM … AS
    /// build`, or the last one (what runs); empty when there is no such stage or line.
    static func dockerPackages(runtime: Bool) throws -> Set<String> {
        let lines = try String(contentsOf: root.appendingPathComponent("deploy/Dockerfile"), encoding: .utf8).split(separator: "\n")
        let starts = lines.indices.filter { lines[$0].uppercased().hasPrefix("FROM ") }
        let start = runtime ? starts.last : starts.first { lines[$0].lowercased().hasSuffix(" as build") }
        guard let start else { return [] }
        let end = starts.first { $0 > start } ?? lines.endIndex
        let stage = lines[start..<end].joined(separator: " ")
        guard let install = stage.range(of: "apt-get install") else { return [] }
        let words = stage[install.upperBound...].prefix { $0 != "&" }.split(whereSeparator: { $0 == " " || $0 == "\\" })
        return Set(words.map(String.init).filter { !$0.hasPrefix("-") })
    }

    /// The image builds with every library `make` installs to build, and runs with the package of
    /// every library the binary links (the Swift runtime aside: the image links it statically).
    /// The image itself is not built here (no Docker), so this is what keeps the lists honest.
    @Test func theDockerfileInstallsWhatTheBuildAndTheBinaryNeed() async throws {
        let makefile = try String(contentsOf: Self.root.appendingPathComponent("Makefile"), encoding: .utf8)
        let line = try #require(makefile.split(separator: "\n").first { $0.hasPrefix("APT_BUILD :=") })
        let build = Set(line.dropFirst("APT_BUILD :=".count).split(separator: " ").map(String.init))
        #expect(!build.isEmpty)
        let missing = build.subtracting(try Self.dockerPackages(runtime: false))
        #expect(missing.isEmpty, "missing from the build stage: \(missing.sorted())")

        let binary = ChildProcess.binDirectory.appendingPathComponent("lookout").path
        let dynamic = try await runTool("/usr/bin/readelf", ["-d", binary])
        let needed = dynamic.output.split(separator: "\n").filter { $0.contains("(NEEDED)") }.compactMap { line -> String? in
            guard let open = line.lastIndex(of: "["), let close = line.lastIndex(of: "]") else { return nil }
            return String(line[line.index(after: open)..<close])
        }
        let swiftRuntime = ["libswift", "libFoundation", "lib_FoundationICU", "libdispatch", "libBlocksRuntime"]
        let system = needed.filter { name in !swiftRuntime.contains { name.hasPrefix($0) } }
        #expect(system.contains("libcurl.so.4"), "\(needed)")
        // In every Debian image, slim included.
        var packages: Set<String> = ["libc6", "libgcc-s1", "libstdc++6"]
        let runtime = try Self.dockerPackages(runtime: true)
        #expect(runtime.contains("libcurl4"), "\(runtime)")
        packages.formUnion(runtime)
        for library in system {
            let owner = try await runTool("/usr/bin/dpkg", ["-S", "*/\(library)"])
            let package = String(owner.output.prefix { $0 != ":" })
            #expect(packages.contains(package), "\(library) comes from \(package), which the runtime stage does not install")
        }
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
        let ports = [
            try await first.waitFor(#"msg=listening address=127\.0\.0\.1:(\d+)"#), try await second.waitFor(#"msg=listening address=127\.0\.0\.1:(\d+)"#),
        ]
        func owned(_ port: String) async -> Set<String> {
            let text = await http.perform(TransferRequest(url: "http://127.0.0.1:\(port)/metrics", timeout: .patient)).bodyText
            return Set(names.filter { text.contains(#"lookout_probes_total{source="\#($0)""#) })
        }
        let shards = [await owned(ports[0]), await owned(ports[1])]
        #expect(shards[0].isDisjoint(with: shards[1]))
        #expect(shards[0].union(shards[1]) == Set(names))
        #expect(!shards[0].isEmpty && !shards[1].isEmpty)
        // Between them the two shards reach every source (the wait fails if one is never probed).
        _ = try await eventually("every source probed") { () -> [String: Int]? in
            let result = await http.perform(TransferRequest(url: "\(simBase)/counters", timeout: .patient))
            let counters = (try? JSONSerialization.jsonObject(with: Data(result.body)) as? [String: Int]) ?? [:]
            return names.allSatisfy { (counters["/flaky/\($0)"] ?? 0) >= 1 } ? counters : nil
        }
        let info0 = await http.perform(TransferRequest(url: "http://127.0.0.1:\(ports[0])/metrics", timeout: .patient)).bodyText
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
