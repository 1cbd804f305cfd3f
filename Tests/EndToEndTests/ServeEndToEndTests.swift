import Foundation
import GRDB
import ResilientHTTP
import TestSupport
import Testing

/// lookout-sim and `lookout serve` as separate processes on free loopback ports.
@Suite("serve end to end")
struct ServeEndToEndTests {
    let http = CurlTransport()

    func get(_ url: String) async -> TransferResult {
        await http.perform(TransferRequest(url: url, timeout: .seconds(10)))
    }

    /// The value of `name{source="SOURCE"}` in a scrape.
    func value(_ scrape: String, _ name: String, source: String) -> Double? {
        let prefix = "\(name){source=\"\(source)\"} "
        return scrape.split(separator: "\n").first { $0.hasPrefix(prefix) }.flatMap { Double($0.dropFirst(prefix.count)) }
    }

    @Test func probesEverySourceRecordsResultsAndServesValidMetrics() async throws {
        let directory = try makeTemporaryDirectory("lookout-e2e")
        defer { try? FileManager.default.removeItem(at: directory) }

        let sim = try ChildProcess("lookout-sim", ["--listen", "127.0.0.1:0"])
        let simPort = try await sim.waitFor(#"listening on http://127\.0\.0\.1:(\d+)/"#)
        let database = directory.appendingPathComponent("lookout.sqlite").path
        let config = directory.appendingPathComponent("lookout.yml")
        try """
        listen: 127.0.0.1:0
        database: \(database)
        defaults: {interval: 1s, timeout: 2s}
        sources:
          - {name: up, url: "http://127.0.0.1:\(simPort)/ok"}
          - {name: broken, url: "http://127.0.0.1:\(simPort)/status/500"}
          - {name: closed, url: "http://127.0.0.1:\(closedPort())/"}
        """.write(to: config, atomically: true, encoding: .utf8)
        let lookout = try ChildProcess("lookout", ["serve", "--config", config.path])
        let port = try await lookout.waitFor(#"msg=listening address=127\.0\.0\.1:(\d+)"#)
        let base = "http://127.0.0.1:\(port)"

        let scrape = try await eventually("every source in /metrics") { () -> String? in
            let text = await get("\(base)/metrics").bodyText
            let all = ["up", "broken", "closed"].allSatisfy { value(text, "lookout_probe_success", source: $0) != nil }
            return all ? text : nil
        }
        #expect(value(scrape, "lookout_probe_success", source: "up") == 1)
        // By default the status code is written while the last probe failed.
        #expect(value(scrape, "lookout_probe_http_status_code", source: "up") == nil)
        #expect(value(scrape, "lookout_probe_success", source: "broken") == 0)
        #expect(value(scrape, "lookout_probe_http_status_code", source: "broken") == 500)
        #expect(value(scrape, "lookout_probe_success", source: "closed") == 0)
        #expect(value(scrape, "lookout_probe_http_status_code", source: "closed") == 0)
        #expect(scrape.contains(#"lookout_probe_latency_seconds{source="up",quantile="0.5"} "#))
        #expect(scrape.contains("lookout_build_info{version="))

        let promtool = try await runTool("/usr/bin/promtool", ["check", "metrics"], input: scrape)
        #expect(promtool.status == 0, "promtool: \(promtool.output)")
        #expect(promtool.output.isEmpty, "promtool: \(promtool.output)")

        let healthy = await get("\(base)/-/healthy")
        #expect(healthy.httpStatus == 200)
        let page = await get("\(base)/")
        #expect(page.httpStatus == 200)
        for name in ["up", "broken", "closed"] { #expect(page.bodyText.contains(">\(name)<")) }
        #expect(page.bodyText.contains("Upstream server error"))

        let reader = try DatabaseQueue(path: database)
        let rows = try await eventually("probe_results rows for every source") { () -> [String: (ok: Bool, status: Int?, reason: String?)]? in
            let found = try reader.read { db in
                try Row.fetchAll(db, sql: "SELECT source, ok, http_status, reason FROM probe_results ORDER BY id")
            }
            var latest: [String: (ok: Bool, status: Int?, reason: String?)] = [:]
            for row in found { latest[row["source"]] = (row["ok"], row["http_status"], row["reason"]) }
            return latest.count == 3 ? latest : nil
        }
        #expect(rows["up"]?.ok == true && rows["up"]?.status == 200)
        #expect(rows["broken"]?.ok == false && rows["broken"]?.reason == "http_500")
        #expect(rows["closed"]?.ok == false && rows["closed"]?.reason == "connection_refused")

        #expect(try await lookout.terminate() == 0)
        #expect(try await sim.terminate() == 0)
    }

    @Test func checkConfigReportsEveryProblemWithItsPosition() async throws {
        let directory = try makeTemporaryDirectory("lookout-cc")
        defer { try? FileManager.default.removeItem(at: directory) }
        let broken = directory.appendingPathComponent("syntax.yml")
        try "sources:\n  - name: a\n    url: [unclosed\n".write(to: broken, atomically: true, encoding: .utf8)
        let binary = ChildProcess.binDirectory.appendingPathComponent("lookout").path
        let syntax = try await runTool(binary, ["check-config", "--config", broken.path])
        #expect(syntax.status == 1)
        #expect(syntax.output.contains("\(broken.path):4:1: YAML syntax error"), "\(syntax.output)")

        let invalid = directory.appendingPathComponent("invalid.yml")
        try "sources:\n  - name: a\n    url: http://127.0.0.1/\n    interval: 5x\n".write(to: invalid, atomically: true, encoding: .utf8)
        let semantic = try await runTool(binary, ["check-config", "--config", invalid.path])
        #expect(semantic.status == 1)
        #expect(
            semantic.output.contains(#"\#(invalid.path):4:15: sources[0].interval (source "a"): "5x" is not a duration (use 500ms, 30s, 5m, 1h)"#),
            "\(semantic.output)")

        let serve = try await runTool(binary, ["serve", "--config", invalid.path])
        #expect(serve.status == 1)
        #expect(serve.output.contains("sources[0].interval"))
    }
}
