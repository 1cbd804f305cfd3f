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
        let elapsed = (ContinuousClock.now - started).seconds
        let rate = Double(total) / elapsed
        row(
            "error records written per second (batched, WAL, on disk)", "lookout-bench store", String(format: "%.0f /s", rate), "target ≥ 50000 /s",
            String(format: "%.2f", rate / 50_000))
        try resultsWhileTheDiskRefuses()
    }

    /// What recording a probe costs while the database refuses every write and the queue is at
    /// its bound (a disk full for long): the probers wait on this under the queue's lock.
    static func resultsWhileTheDiskRefuses() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bench-\(UUID().uuidString)")
        let database = try LookoutDatabase.openOrStandIn(path: directory.appendingPathComponent("missing/lookout.sqlite").path)
        let writer = RecordWriter(database: database, logger: Logger(label: "bench") { _ in SwiftLogNoOpLogHandler() })
        let results = (0..<1000).map {
            ProbeResult(source: "source-\($0)", timestampMs: 1_700_000_000_000 + Int64($0), ok: true, httpStatus: 200, durationSeconds: 0.01)
        }
        for index in 0..<RecordWriter.defaultMaxQueued { writer.record(results[index % 1000]) }
        let total = 100_000
        let started = ContinuousClock.now
        for index in 0..<total { writer.record(results[index % 1000]) }
        let microseconds = (ContinuousClock.now - started).seconds * 1e6 / Double(total)
        row(
            "recording a probe result while the disk refuses writes (\(RecordWriter.defaultMaxQueued) queued, oldest raw results dropped)",
            "lookout-bench store",
            String(format: "%.2f µs", microseconds), "target < 10 µs", String(format: "%.2f", microseconds / 10))
    }

    /// A monitor with `count` sources and 30 minutes of results each (one in seven failed).
    static func populatedMonitor(_ count: Int, history: Bool = false, detail: MetricsDetail = .default, failing: Bool = true) -> Monitor {
        let sources = (0..<count).map { index in
            var source = SourceConfig(name: "source-\(index)", url: "http://127.0.0.1:9/\(index)")
            source.group = "group-\(index % 10)"
            return source
        }
        var config = LookoutConfig(sources: sources)
        config.metricsDetail = detail
        // The fixture flaps sources on purpose: their outage lines would only fill stderr.
        let monitor = Monitor(config: config, configPath: nil, logger: Logger(label: "bench") { _ in SwiftLogNoOpLogHandler() })
        monitor.start()
        for source in sources { monitor.client.configure(upstream: source.name, policy: source.policy) }
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        for (index, source) in sources.enumerated() {
            for minute in 0..<30 {
                let failed = failing && (index + minute) % 7 == 0
                let result = ProbeResult(
                    source: source.name, timestampMs: now - Int64(minute) * 60_000, ok: !failed,
                    failure: failed ? Failure(category: .serverError, reason: "http_503", httpStatus: 503, serverMessage: "busy") : nil,
                    httpStatus: failed ? 503 : 200, attempts: failed ? 2 : 1, durationSeconds: 0.01 + Double(minute) / 1000)
                monitor.registry.record(result)
            }
            // What a restart restores: 90 days of hourly sums and a day of latency buckets.
            guard history else { continue }
            for hour in 1..<(90 * 24) {
                let failures = UInt32((index + hour) % 97 == 0 ? 3 : 0)
                monitor.registry.restore(
                    source: source.name, atMs: now - Int64(hour) * 3_600_000, counts: BucketCounts(probes: 120, failures: failures), hourly: true)
            }
            for minute in stride(from: 0, to: 24 * 60, by: 10) {
                var buckets = [Int](repeating: 0, count: Histogram.latencyBuckets.count + 1)
                buckets[4 + (index + minute) % 4] = 10
                monitor.registry.restoreLatency(source: source.name, atMs: now - Int64(minute) * 60_000, buckets: buckets)
            }
        }
        return monitor
    }

    /// The median of `rounds` runs of `body`, in milliseconds (the median, because this shared
    /// machine has runs slowed by its neighbours).
    static func milliseconds(rounds: Int = 9, _ body: () -> Void) -> Double {
        body()  // warm up
        let clock = ContinuousClock()
        let times = (0..<rounds).map { _ in
            let start = clock.now
            body()
            return (clock.now - start).seconds * 1000
        }
        return times.sorted()[rounds / 2]
    }

    /// Status and scrape costs: the alert rules and the status JSON over 10,000 sources, /metrics
    /// at 10,000 sources, the status page at 1,000.
    static func status() throws {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let large = populatedMonitor(10_000)
        let context = try LookoutContext(monitor: large)
        var evaluator = AlertEvaluator(rules: AlertRule.defaults)
        _ = evaluator.evaluate(nowMs: now - 15_000, AlertEvaluator.Inputs(large.snapshot(nowMs: now)))  // starts every alert
        // A snapshot computes every source's summary and the partial-failure ratio.
        let analysis = milliseconds { _ = large.registry.snapshot(nowMs: now) }
        var round: Int64 = 0
        let evaluation = milliseconds {
            round += 1
            _ = evaluator.evaluate(nowMs: now + round * 15_000, AlertEvaluator.Inputs(large.snapshot(nowMs: now)))
        }
        var statusBytes = 0
        let statusJSON = milliseconds { statusBytes = StatusAPI(context: context).statusBytes().count }
        var metricsBytes = 0
        let metrics = milliseconds { metricsBytes = MetricsExposition(context: context).renderBody().count }
        let small = try LookoutContext(monitor: populatedMonitor(1_000, history: true))
        var pageBytes = 0
        let statusPage = StatusPage(context: small)
        let page = milliseconds { pageBytes = statusPage.renderBytes().count }
        let badges = Badges(context: small)
        let badge = milliseconds(rounds: 101) { _ = badges.badge("source-500", kind: "uptime/30d.svg") }
        let groupBadge = milliseconds(rounds: 21) { _ = badges.badge("group:group-5", kind: "status.svg") }
        row(
            "health status of 10000 sources (error rates, retry success, availability, burn over every window)", "lookout-bench status",
            String(format: "%.1f ms", analysis), "target < 50 ms", String(format: "%.2f", analysis / 50))
        row("alert rules over 10000 sources (one evaluation)", "lookout-bench status", String(format: "%.1f ms", evaluation), "no target", "")
        row(
            "status of 10000 sources (GET /api/v1/status, \(statusBytes / 1024) KiB)", "lookout-bench status", String(format: "%.1f ms", statusJSON),
            "no target", "")
        row(
            "/metrics at 10000 sources (\(metricsBytes / 1024) KiB)", "lookout-bench status", String(format: "%.1f ms", metrics), "target < 100 ms",
            String(format: "%.2f", metrics / 100))
        row(
            "status page at 1000 sources in 10 groups, 90-day bars and 24 h charts (\(pageBytes / 1024) KiB)", "lookout-bench status",
            String(format: "%.1f ms", page), "target < 50 ms", String(format: "%.2f", page / 50))
        row("a source's uptime badge (1000 sources)", "lookout-bench status", String(format: "%.3f ms", badge), "target < 1 ms", String(format: "%.2f", badge))
        row("a group's status badge (100 of 1000 sources)", "lookout-bench status", String(format: "%.3f ms", groupBadge), "no target", "")
    }
}
