import Foundation
import Logging
import LookoutCore
import LookoutStore
import ResilientHTTP

extension LookoutBench {
    /// `lookout-bench sla [SOURCES] [MONTHS] [PATH]`: SOURCES sources with an `sla`, each with
    /// three outages a month over MONTHS months (2026) stored through the real registry edges
    /// and writer, Lookout running throughout; then the time of one month's report for every
    /// source (the median of 5) and of all the months' (what `/api/v1/sla` and the page read).
    /// With PATH the database is kept there (the docs' screenshots are taken from one).
    static func sla(sources: Int, months: Int, keepAt path: String?) throws {
        let file = path ?? FileManager.default.temporaryDirectory.appendingPathComponent("sla-\(UUID().uuidString).sqlite").path
        defer {
            if path == nil { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: file + suffix) } }
        }
        let database = try LookoutDatabase(path: file)
        let writer = RecordWriter(database: database, logger: Logger(label: "bench") { _ in SwiftLogNoOpLogHandler() })
        var sla = SLASettings()
        sla.target = 0.9995
        sla.credits = [.init(below: 0.9995, credit: 0.10), .init(below: 0.99, credit: 0.25)]
        let configs = (0..<sources).map { index -> SourceConfig in
            var source = SourceConfig(name: "source-\(index)", url: "http://127.0.0.1:1/\(index)")
            source.sla = sla
            return source
        }
        let registry = SourceRegistry(sources: configs)
        registry.onOutageEdge { writer.enqueue(.outageEdge($0, location: "eu-west")) }
        let start: Int64 = 1_767_225_600_000  // 2026-01-01
        let month: Int64 = 30 * 86_400_000
        let end = start + Int64(months) * month
        let runs = RunStore(database: database)
        _ = try runs.begin(nowMs: start - 86_400_000)
        try runs.alive(startedAtMs: start - 86_400_000, nowMs: end + 86_400_000)
        let failure = Failure(category: .serverError, reason: "http_503", httpStatus: 503, detail: "HTTP 503", serverMessage: "upstream database unavailable")
        let building = ContinuousClock().now
        for (index, source) in configs.enumerated() {
            // Its first probe, through the writer too: the source was measured from then on.
            let first = ProbeResult(source: source.name, timestampMs: start - 60_000, ok: true, httpStatus: 200)
            registry.record(first)
            writer.record(first)
            for monthIndex in 0..<months {
                for outage in 0..<3 {
                    // Spread over the month; 2 to 13 minutes long.
                    let begin = start + Int64(monthIndex) * month + Int64(outage) * 9 * 86_400_000 + Int64((index * 7_919 + outage * 104_729) % 86_400) * 1000
                    let minutes = 2 + (index + outage + monthIndex) % 12
                    for step in 0...minutes {
                        registry.record(
                            ProbeResult(
                                source: source.name, timestampMs: begin + Int64(step) * 60_000, ok: step == minutes, failure: step == minutes ? nil : failure,
                                httpStatus: step == minutes ? 200 : 503))
                    }
                }
            }
            if index % 500 == 499 { writer.flush() }
        }
        writer.flush()
        let built = (ContinuousClock().now - building).seconds
        let store = SLAStore(database: database)
        let now = end + 86_400_000
        let periods = (0..<months).map { SLAPeriod(kind: .month, year: 2026, number: $0 % 12 + 1) }
        var outages = 0
        let one = milliseconds(rounds: 5) {
            outages = (try? store.reports(sources: configs, period: periods[months / 2], windows: [], nowMs: now))?.reduce(0) { $0 + $1.outages.count } ?? -1
        }
        let clock = ContinuousClock()
        let began = clock.now
        for period in periods { _ = try store.reports(sources: configs, period: period, windows: [], nowMs: now) }
        let all = (clock.now - began).seconds * 1000
        row(
            "SLA report: one month for \(sources) sources, \(months) months of outages stored (\(3 * months * sources) rows; \(outages) in the month)",
            "lookout-bench sla \(sources) \(months)", String(format: "%.0f ms a month; all %d months %.0f ms", one, months, all), "target < 1 s",
            String(format: "%.2f (stored in %.0f s)", one / 1000, built))
    }
}
