import Foundation
import Logging
import LookoutCore
import ResilientHTTP
import Testing

@testable import LookoutWeb

/// `/metrics`, the status JSON and the status page for the demo config after a fixed ten minutes
/// of probes, byte for byte against `Tests/Golden/`. A refactoring that is meant to change
/// nothing a user sees must leave these files alone; a change that is meant to show something
/// new rewrites them (`LOOKOUT_UPDATE_GOLDEN=1 swift test --filter GoldenOutputTests`) and the
/// diff is reviewed with it.
@Suite("golden outputs")
struct GoldenOutputTests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Golden")
    /// 2026-11-02T12:00:00Z: a Monday, so the page's day axis is fixed too.
    static let nowMs: Int64 = 1_793_620_800_000

    /// Ten minutes of the demo's story, one probe a source every 10 s.
    static func demo() throws -> LookoutContext {
        let repository = directory.deletingLastPathComponent().deletingLastPathComponent()
        var config = try ConfigLoader.load(path: repository.appendingPathComponent("examples/demo.yml").path, environment: [:])
        config.database = ":memory:"
        let monitor = Monitor(config: config, configPath: nil, logger: Logger(label: "golden") { _ in SwiftLogNoOpLogHandler() })
        monitor.start()
        let start = nowMs - 600_000
        for step in 0..<60 {
            let at = start + Int64(step) * 10_000
            func ok(_ name: String, _ latency: Double, status: Int = 200) {
                monitor.registry.record(
                    ProbeResult(source: name, timestampMs: at, ok: true, httpStatus: status, durationSeconds: latency, latencySeconds: latency, bytes: 512))
            }
            func failed(_ name: String, _ failure: Failure, status: Int? = nil, latency: Double? = nil, attempts: Int = 1) {
                monitor.registry.record(
                    ProbeResult(
                        source: name, timestampMs: at, ok: false, failure: failure, httpStatus: status, attempts: attempts,
                        durationSeconds: latency ?? 0.001, latencySeconds: latency))
            }
            ok("healthy-api", 0.012 + Double(step % 5) * 0.001)
            if step < 6 {
                failed("flaky-api", Failure(category: .serverError, reason: "http_503", httpStatus: 503), status: 503, latency: 0.004, attempts: 3)
            } else {
                ok("flaky-api", 0.006)
            }
            failed(
                "failing-api", Failure(category: .serverError, reason: "http_503", httpStatus: 503, serverMessage: "maintenance window"), status: 503,
                latency: 0.003, attempts: 3)
            failed(
                "slow-api", Failure(category: .invalidResponse, reason: "slow_response", httpStatus: 200, detail: "answered in 1.5 s, over 1 s"),
                status: 200, latency: 1.5)
            ok("news-feed", 0.008)
            if step % 3 == 2 {
                failed("rate-limited-api", Failure(category: .rateLimited, reason: "http_429", httpStatus: 429), status: 429, latency: 0.002)
            } else {
                ok("rate-limited-api", 0.002)
            }
            failed("unreachable-api", Failure(category: .transient, reason: "connection_refused", curlCode: 7, detail: "Connection refused"), attempts: 3)
        }
        var context = try LookoutContext(monitor: monitor)
        context.instanceID = "golden"
        _ = context.alerts.evaluate(nowMs: nowMs)
        return context
    }

    /// Lines that are the process's, not the demo's: memory, clocks, and counters other tests in
    /// this process move.
    static let processLines = [
        "lookout_heap_", "lookout_db_memory_bytes", "lookout_db_size_bytes", "process_", "lookout_start_time", "lookout_uptime",
        "lookout_config_last_reload", "lookout_probe_endpoint_refused_total", "lookout_log_lines_dropped_total",
    ]

    static func check(_ text: String, against name: String) throws {
        let file = directory.appendingPathComponent(name)
        if ProcessInfo.processInfo.environment["LOOKOUT_UPDATE_GOLDEN"] == "1" {
            try Data(text.utf8).write(to: file)
            return
        }
        let expected = try String(contentsOf: file, encoding: .utf8)
        guard text != expected else { return }
        let got = text.components(separatedBy: "\n")
        let want = expected.components(separatedBy: "\n")
        let line = zip(got, want).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(got.count, want.count)
        Issue.record(
            """
            \(name) differs from Tests/Golden/\(name) at line \(line + 1):
              golden: \(line < want.count ? want[line] : "(end)")
              now:    \(line < got.count ? got[line] : "(end)")
            If the change is meant, rewrite it with LOOKOUT_UPDATE_GOLDEN=1 and review the diff.
            """)
    }

    @Test func metricsAreAsBefore() throws {
        let context = try Self.demo()
        let text = MetricsExposition(context: context, version: "golden").render(nowMs: Self.nowMs)
        let kept = text.components(separatedBy: "\n").filter { line in
            !Self.processLines.contains { line.hasPrefix($0) || line.hasPrefix("# HELP \($0)") || line.hasPrefix("# TYPE \($0)") }
        }
        try Self.check(kept.joined(separator: "\n"), against: "metrics.txt")
    }

    @Test func theStatusJSONIsAsBefore() throws {
        let context = try Self.demo()
        try Self.check(String(decoding: StatusAPI(context: context).statusBytes(nowMs: Self.nowMs), as: UTF8.self), against: "status.json")
    }

    @Test func thePageIsAsBefore() throws {
        let context = try Self.demo()
        try Self.check(StatusPage(context: context).render(nowMs: Self.nowMs), against: "page.html")
        try Self.check(StatusPage(context: context).render(nowMs: Self.nowMs, audience: .public), against: "public.html")
    }
}
