import Foundation
import ResilientHTTP
import TestSupport
import Testing

/// What Prometheus and blackbox_exporter users see: /probe beside blackbox_exporter's own
/// output, and a real Prometheus scraping /metrics.
@Suite("serving end to end", .serialized)
struct ServingEndToEndTests {
    let http = CurlTransport()

    /// `# TYPE name type` lines of an exposition, for names starting with `prefix`.
    func types(_ text: String, prefix: String) -> [String: String] {
        var types: [String: String] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix("# TYPE \(prefix)") {
            let parts = line.split(separator: " ")
            if parts.count == 4 { types[String(parts[2])] = String(parts[3]) }
        }
        return types
    }

    func startNginx(_ directory: URL) throws -> (ChildProcess, Int) {
        let port = Int(closedPort())
        try """
        worker_processes 1;
        daemon off;
        pid \(directory.path)/nginx.pid;
        error_log \(directory.path)/nginx-error.log;
        events { worker_connections 256; }
        http { access_log off; server { listen 127.0.0.1:\(port); location / { return 200 "ok\\n"; } } }
        """.write(to: directory.appendingPathComponent("nginx.conf"), atomically: true, encoding: .utf8)
        return (try ChildProcess("/usr/sbin/nginx", ["-c", "\(directory.path)/nginx.conf", "-p", directory.path]), port)
    }

    @Test func probeAnswersWithEveryMetricBlackboxExporterGives() async throws {
        let directory = try makeTemporaryDirectory("serving")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (nginx, nginxPort) = try startNginx(directory)
        let target = "http://127.0.0.1:\(nginxPort)/"
        _ = try await eventually("nginx") { await http.perform(TransferRequest(url: target, timeout: .patient)).httpStatus == 200 ? true : nil }

        let blackboxPort = closedPort()
        try "modules:\n  http_2xx:\n    prober: http\n    timeout: 5s\n".write(
            to: directory.appendingPathComponent("blackbox.yml"), atomically: true, encoding: .utf8)
        let blackbox = try ChildProcess(
            "/usr/bin/prometheus-blackbox-exporter",
            [
                "--config.file=\(directory.path)/blackbox.yml", "--web.listen-address=127.0.0.1:\(blackboxPort)",
            ])
        let theirs = try await eventually("blackbox_exporter's probe") { () -> String? in
            let result = await http.perform(TransferRequest(url: "http://127.0.0.1:\(blackboxPort)/probe?target=\(target)&module=http_2xx", timeout: .patient))
            return result.httpStatus == 200 ? result.bodyText : nil
        }

        let config = directory.appendingPathComponent("lookout.yml")
        try """
        listen: 127.0.0.1:0
        database: ":memory:"
        probe_modules:
          http_2xx: {kind: http, timeout: 5s, allow: ["http://127\\\\.0\\\\.0\\\\.1:[0-9]+/.*"]}
        sources:
          - {name: nginx, url: "\(target)", interval: 1h}
        """.write(to: config, atomically: true, encoding: .utf8)
        let (lookout, base) = try await startLookout(config: config)
        let ours = await http.perform(
            TransferRequest(
                url: "\(base)/probe?target=\(target)&module=http_2xx", headers: [("X-Prometheus-Scrape-Timeout-Seconds", "4")], timeout: .patient))
        #expect(ours.httpStatus == 200)
        let expected = types(theirs, prefix: "probe_")
        let got = types(ours.bodyText, prefix: "probe_")
        #expect(expected.count >= 10)
        for (name, type) in expected {
            #expect(got[name] == type, "\(name): blackbox_exporter says \(type), Lookout says \(got[name] ?? "nothing")")
        }
        #expect(ours.bodyText.contains("probe_success 1\n"))
        #expect(ours.bodyText.contains("probe_http_status_code 200\n"))
        #expect(ours.bodyText.contains("probe_retries 0\n"))

        let refused = await http.perform(TransferRequest(url: "\(base)/probe?target=http://example.org/&module=http_2xx", timeout: .patient))
        #expect(refused.httpStatus == 403)
        let unknown = await http.perform(TransferRequest(url: "\(base)/probe?target=\(target)&module=nope", timeout: .patient))
        #expect(unknown.httpStatus == 400)
        let down = await withRefusingPort { port in
            await http.perform(TransferRequest(url: "\(base)/probe?target=http://127.0.0.1:\(port)/&module=http_2xx", timeout: .patient))
        }
        #expect(down.bodyText.contains("probe_success 0\n"))
        #expect(down.bodyText.contains(#"probe_failure_info{category="transient",reason="connection_refused"} 1"#))

        #expect(try await lookout.terminate() == 0)
        _ = try await blackbox.terminate()
        _ = try await nginx.terminate()
    }

    @Test func aRealPrometheusScrapesEverySource() async throws {
        let directory = try makeTemporaryDirectory("serving")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (sim, simBase) = try await startSimulator()
        let config = directory.appendingPathComponent("lookout.yml")
        try """
        listen: 127.0.0.1:0
        database: \(directory.path)/lookout.sqlite
        defaults: {interval: 1s, timeout: 2s}
        sources:
          - {name: up, url: "\(simBase)/ok"}
          - {name: "odd\\"name", url: "\(simBase)/status/500"}
          - {name: feed, kind: rss, url: "\(simBase)/rss/valid"}
        """.write(to: config, atomically: true, encoding: .utf8)
        let problems = try await runTool(ChildProcess.binDirectory.appendingPathComponent("lookout").path, ["check-config", "--config", config.path])
        // A quote is not allowed in a source name: the name rule keeps label values simple.
        #expect(problems.status == 1)
        try String(contentsOf: config, encoding: .utf8).replacingOccurrences(of: #""odd\"name""#, with: "odd.name")
            .write(to: config, atomically: true, encoding: .utf8)

        let lookout = try ChildProcess("lookout", ["serve", "--config", config.path])
        let port = try await lookout.waitFor(#"msg=listening address=127\.0\.0\.1:(\d+)"#)
        let scrape = try await eventually("every source in /metrics") { () -> String? in
            let text = await http.perform(TransferRequest(url: "http://127.0.0.1:\(port)/metrics", timeout: .patient)).bodyText
            return ["up", "odd.name", "feed"].allSatisfy { text.contains(#"lookout_probe_success{source="\#($0)"}"#) } ? text : nil
        }
        let promtool = try await runTool("/usr/bin/promtool", ["check", "metrics"], input: scrape)
        #expect(promtool.status == 0, "\(promtool.output)")
        #expect(promtool.output.isEmpty, "\(promtool.output)")

        let prometheus = try TestPrometheus(scraping: ["127.0.0.1:\(port)"], in: directory)
        let series = try await eventually("Prometheus to have lookout_probe_success for every source") { () -> [String: String]? in
            var values: [String: String] = [:]
            for item in await prometheus.query("lookout_probe_success") ?? [] {
                if let metric = item["metric"] as? [String: String], let source = metric["source"], let value = item["value"] as? [Any] {
                    values[source] = value.last as? String
                }
            }
            return values.count == 3 ? values : nil
        }
        #expect(series == ["up": "1", "odd.name": "0", "feed": "1"])
        _ = try await prometheus.process.terminate()
        #expect(try await lookout.terminate() == 0)
        #expect(try await sim.terminate() == 0)
    }

    /// `curl --compressed` gets /metrics gzipped; it decompresses to exactly the plain scrape
    /// (the process's own figures and the database's aside, which move between two requests),
    /// and promtool accepts it. The page is gzipped the same way.
    @Test func curlCompressedGetsTheSameScrape() async throws {
        let directory = try makeTemporaryDirectory("compressed")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (sim, simBase) = try await startSimulator()
        let config = directory.appendingPathComponent("lookout.yml")
        try """
        listen: 127.0.0.1:0
        database: \(directory.path)/lookout.sqlite
        defaults: {interval: 1h, timeout: 2s}
        sources:
          - {name: up, url: "\(simBase)/ok"}
          - {name: down, url: "\(simBase)/status/503"}
          - {name: feed, kind: rss, url: "\(simBase)/rss/valid"}
        """.write(to: config, atomically: true, encoding: .utf8)
        let (lookout, base) = try await startLookout(config: config)
        _ = try await eventually("every source probed") { () -> Bool? in
            let text = await http.perform(TransferRequest(url: "\(base)/metrics", timeout: .patient)).bodyText
            return ["up", "down", "feed"].allSatisfy { text.contains(#"lookout_probes_total{source="\#($0)",result="#) } ? true : nil
        }
        let headers = directory.appendingPathComponent("headers").path
        let compressed = try await runTool("/usr/bin/curl", ["-sS", "--compressed", "-D", headers, "\(base)/metrics"])
        let plain = try await runTool("/usr/bin/curl", ["-sS", "\(base)/metrics"])
        #expect(compressed.status == 0 && plain.status == 0)
        let received = try String(contentsOfFile: headers, encoding: .utf8).lowercased()
        #expect(received.contains("content-encoding: gzip"))
        func steady(_ text: String) -> [Substring] {
            text.split(separator: "\n").filter { line in
                !["process_", "lookout_db_", "lookout_http_", "lookout_heap_", "# HELP process_", "# TYPE process_"].contains { line.hasPrefix($0) }
            }
        }
        #expect(steady(compressed.output) == steady(plain.output))
        #expect(steady(plain.output).count > 100)
        let promtool = try await runTool("/usr/bin/promtool", ["check", "metrics"], input: compressed.output)
        #expect(promtool.status == 0 && promtool.output.isEmpty, "\(promtool.output)")
        // The page too, a few megabytes at 1,000 sources.
        let page = try await runTool("/usr/bin/curl", ["-sS", "--compressed", "-D", headers, "\(base)/"])
        #expect(page.output.contains("</html>"))
        #expect(try String(contentsOfFile: headers, encoding: .utf8).lowercased().contains("content-encoding: gzip"))
        #expect(try await lookout.terminate() == 0)
        #expect(try await sim.terminate() == 0)
    }
}
