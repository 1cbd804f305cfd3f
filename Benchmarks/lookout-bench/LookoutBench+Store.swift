import Foundation
import Logging
import LookoutAlerting
import LookoutCore
import LookoutStore
import LookoutWeb
import ResilientHTTP

extension LookoutBench {
    /// Error records per second through the batched writer into a SQLite file (WAL).
    static func store() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("bench-\(UUID().uuidString).sqlite").path
        defer {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
        let database = try LookoutDatabase(path: path)
        let writer = RecordWriter(database: database, logger: Logger(label: "bench"))
        let total = 200_000
        let failure = Failure(category: .serverError, reason: "http_503", httpStatus: 503, serverMessage: "busy")
        let records = (0..<1000).map { index in
            ErrorRecord(
                tsMs: 1_700_000_000_000 + Int64(index), source: "source-\(index)", category: "server_error", reason: "http_503",
                httpStatus: 503, curlCode: nil, message: failure.message(operation: "probing source-\(index)"),
                serverMessage: "busy", attempt: 1, wasRetried: true, retrySucceeded: false)
        }
        let started = ContinuousClock.now
        for index in 0..<total {
            writer.enqueue(.error(records[index % 1000]))
            if index % 10_000 == 9_999 { writer.flush() }
        }
        writer.flush()
        let elapsed = (ContinuousClock.now - started).totalSeconds
        let rate = Double(total) / elapsed
        row("error records written per second (batched, WAL, on disk)", "lookout-bench store", String(format: "%.0f /s", rate), "target ≥ 50000 /s", String(format: "%.2f", rate / 50_000))
    }

    /// The time to compute the status of 10,000 sources: the alert rules over every source, the
    /// status JSON and the metrics page.
    static func status() {
        let count = 10_000
        let sources = (0..<count).map { SourceConfig(name: "source-\($0)", url: "http://127.0.0.1:9/\($0)") }
        let monitor = Monitor(
            config: LookoutConfig(sources: sources), configPath: nil, client: ResilientClient(), logger: Logger(label: "bench"))
        monitor.start()
        for source in sources { monitor.client.configure(upstream: source.name, policy: source.policy) }
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        for (index, source) in sources.enumerated() {
            for minute in 0..<30 {
                let failed = (index + minute) % 7 == 0
                let result = ProbeResult(
                    source: source.name, timestampMs: now - Int64(minute) * 60_000, ok: !failed,
                    failure: failed ? Failure(category: .serverError, reason: "http_503", httpStatus: 503) : nil,
                    httpStatus: failed ? 503 : 200, attempts: failed ? 2 : 1, durationSeconds: 0.01 + Double(minute) / 1000)
                monitor.board.record(result)
                monitor.health.record(result)
            }
        }
        var evaluator = AlertEvaluator(rules: AlertRule.defaults)
        let context = LookoutContext(monitor: monitor)
        // The first evaluation starts every alert; the figure is for the evaluations after it.
        _ = evaluator.evaluate(nowMs: now - 15_000, monitor.alertInputs(nowMs: now))
        let rounds = 5
        var evaluation = Duration.zero
        var statusJSON = Duration.zero
        var metrics = Duration.zero
        var bytes = 0
        for round in 0..<rounds {
            let clock = ContinuousClock()
            var start = clock.now
            let inputs = monitor.alertInputs(nowMs: now)
            _ = evaluator.evaluate(nowMs: now + Int64(round) * 15_000, inputs)
            evaluation += clock.now - start
            start = clock.now
            bytes = StatusAPI(context: context).statusBytes().count
            statusJSON += clock.now - start
            start = clock.now
            _ = MetricsPage(context: context).render()
            metrics += clock.now - start
        }
        func ms(_ duration: Duration) -> Double { duration.totalSeconds * 1000 / Double(rounds) }
        row("alert rules over \(count) sources (one evaluation)", "lookout-bench status", String(format: "%.1f ms", ms(evaluation)), "target < 50 ms", String(format: "%.2f", ms(evaluation) / 50))
        row("status of \(count) sources (GET /api/v1/status, \(bytes / 1024) KiB)", "lookout-bench status", String(format: "%.1f ms", ms(statusJSON)), "target < 50 ms", String(format: "%.2f", ms(statusJSON) / 50))
        let size = MetricsPage(context: context).render().utf8.count
        row("/metrics render at \(count) sources (\(size / 1024) KiB)", "lookout-bench status", String(format: "%.1f ms", ms(metrics)), "", "")
    }
}
