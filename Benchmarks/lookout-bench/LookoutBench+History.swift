import Foundation
import GRDB
import Logging
import LookoutCore
import LookoutStore

extension LookoutBench {
    /// `lookout-bench history [SOURCES] [DAYS]`: the real writer, rollup tiers and retention
    /// (default retentions) driven by a fake clock — SOURCES sources probed every 30 s for DAYS
    /// days — printing the database's size per simulated week and each tier's bytes per source,
    /// extrapolated to 10,000 sources every 30 s. Retention runs every simulated hour (serve runs
    /// it every 10 minutes; the rows it deletes are the same, in larger chunks).
    static func history(sources: Int, days: Int) throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("history-\(UUID().uuidString).sqlite").path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let database = try LookoutDatabase(path: path)
        let writer = RecordWriter(database: database, logger: Logger(label: "bench") { _ in SwiftLogNoOpLogHandler() })
        let defaults = LookoutConfig()
        let retention = Retention(retention: defaults.retention, rawRetention: defaults.rawRetention, tiers: defaults.rollupRetention)
        let names = (0..<sources).map { "source-\($0)" }
        let start: Int64 = 1_767_225_600_000  // 2026-01-01
        var weekly: [Double] = []
        let clock = ContinuousClock()
        let began = clock.now
        for minute in 0..<(days * 1440) {
            let now = start + Int64(minute) * 60_000
            for half in 0..<2 {
                for (index, name) in names.enumerated() {
                    let tick = 2 * minute + half
                    writer.record(
                        ProbeResult(
                            source: name, timestampMs: now + Int64(half) * 30_000 + Int64(index), ok: (tick + index) % 97 != 0, httpStatus: 200,
                            attempts: 1, durationSeconds: 0.01 + Double(tick % 50) / 1000, bytes: 1_200 + tick % 300))
                }
            }
            guard minute % 60 == 59 else { continue }
            writer.flush()
            try retention.prune(database, nowMs: now)
            if minute % (7 * 1440) == 7 * 1440 - 1 {
                try database.writer.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
                weekly.append(Double(database.sizeBytes) / 1_048_576)
            }
        }
        let elapsed = (clock.now - began).seconds
        // Bytes per table and its indexes, from SQLite's dbstat.
        let tiers = ["raw_results", "minute_rollups", "hour_rollups", "day_rollups"]
        let sizes = try database.writer.read { db -> [String: Int64] in
            var sizes: [String: Int64] = [:]
            let rows = try Row.fetchAll(
                db, sql: "SELECT tbl_name AS t, SUM(pgsize) AS size FROM dbstat JOIN sqlite_master ON sqlite_master.name = dbstat.name GROUP BY tbl_name")
            for row in rows { sizes[row["t"]] = row["size"] }
            return sizes
        }
        let shown = weekly.enumerated().filter { [0, 3, 12, 13, 25, 51].contains($0.offset) || $0.offset == weekly.count - 1 }
        let series = shown.map { "w\($0.offset + 1) \(String(format: "%.1f", $0.element))" }.joined(separator: ", ")
        row(
            "history: \(sources) sources every 30 s over \(days) simulated days, database MiB by week (default retentions)",
            "lookout-bench history \(sources) \(days)",
            series,
            "flat after the hour tier's 90 d; the day tier adds \(String(format: "%.0f", Double(sizes["day_rollups"] ?? 0) / Double(max(1, days)) / Double(sources))) B per source a day",
            String(format: "%.0f s", elapsed))
        // Per source, each tier at its retention (the day tier scaled to its 730 days).
        var perSource: [String] = []
        var extrapolated = 0.0
        for tier in tiers {
            let bytes = Double(sizes[tier] ?? 0) / Double(sources)
            perSource.append("\(tier) \(String(format: "%.0f", bytes / 1024)) KiB")
            extrapolated += bytes * 10_000
        }
        let dayShare = Double(sizes["day_rollups"] ?? 0) / Double(sources) * (730.0 / Double(max(1, min(days, 730)))) * 10_000
        extrapolated += dayShare - Double(sizes["day_rollups"] ?? 0) / Double(sources) * 10_000
        row(
            "history per source at steady state: \(perSource.joined(separator: ", "))", "lookout-bench history \(sources) \(days)",
            String(format: "%.1f GB at 10,000 sources every 30 s", extrapolated / 1e9), "target ≤ 3 GB (SPEC section 5)",
            String(format: "%.2f", extrapolated / 3e9))
    }

    /// The history queries at steady state: 1,000 sources with 730 days of daily rows and 90
    /// days of hourly rows (the default retentions), marks at today; the median of 9 runs of a
    /// 90-day daily availability for every source, and of a 1-year one for one source.
    static func historyQueries() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("queries-\(UUID().uuidString).sqlite").path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let database = try LookoutDatabase(path: path)
        let day = HealthWindow.day
        let hour = HealthWindow.hour
        let now = Timestamp.nowMs()
        let today = now - now % day
        try database.writer.write { db in
            let source = try db.makeStatement(sql: "INSERT INTO sources (id, name, first_seen_ms) VALUES (?, ?, 0)")
            let blob = { (count: Int) in LatencyBlob.encode([0, 0, 0, 0, count] + [Int](repeating: 0, count: 11)) }
            let daily = try db.makeStatement(sql: "INSERT INTO day_rollups VALUES (?, ?, 2880, ?, 0, 0, 0, 0, ?)")
            let hourly = try db.makeStatement(sql: "INSERT INTO hour_rollups VALUES (?, ?, 120, ?, 0, 0, 0, 0, ?)")
            for index in 0..<1_000 {
                try source.execute(arguments: [index + 1, "source-\(index)"])
                for back in 1...730 { try daily.execute(arguments: [today - Int64(back) * day, index + 1, (index + back) % 13 == 0 ? 3 : 0, blob(2880)]) }
            }
            for back in 1...(90 * 24) {
                for index in 0..<1_000 { try hourly.execute(arguments: [today - Int64(back) * hour, index + 1, (index + back) % 97 == 0 ? 1 : 0, blob(120)]) }
            }
            try db.execute(sql: "INSERT INTO rollup_progress VALUES ('hour', ?), ('day', ?)", arguments: [today, today])
        }
        var rows = 0
        let everyone = milliseconds {
            rows = (try? HistoryStore.days(database, source: nil, sinceMs: today - 90 * day).values.reduce(0) { $0 + $1.count }) ?? 0
        }
        var year = 0
        let one = milliseconds(rounds: 21) {
            year = (try? HistoryStore.days(database, source: "source-500", sinceMs: today - 365 * day)["source-500"]?.count) ?? 0
        }
        row(
            "90-day daily availability of 1000 sources from the tiers (\(rows) days; GET /api/v1/availability?days=90)", "lookout-bench history",
            String(format: "%.1f ms", everyone), "target < 20 ms", String(format: "%.2f", everyone / 20))
        row(
            "one source's 1-year daily availability (\(year) days)", "lookout-bench history", String(format: "%.2f ms", one), "target < 5 ms",
            String(format: "%.2f", one / 5))
    }
}
