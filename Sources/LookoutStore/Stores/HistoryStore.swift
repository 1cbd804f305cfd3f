import Dispatch
import GRDB
import GRDBSQLite
import LookoutCore
import Synchronization

/// Reads the rollups back after a restart, so error rates, availability, the 90-day bars and the
/// response-time chart continue where they were: minute rows for the last 6 hours; hourly sums
/// for the day before, from the hourly tier where `RollupTiers` has reached and from minute rows
/// past it; daily rows for the 91 days before that; and response times for the last 25 hours.
package enum HistoryStore {
    package static func restore(into registry: SourceRegistry, from database: LookoutDatabase, nowMs: Int64) throws {
        let sixHoursAgo = nowMs - HealthWindow.sixHours
        let since = nowMs - 91 * HealthWindow.day
        try database.writer.read { db in
            let names = try SourceIds.names(db)
            func each(_ sql: String, _ arguments: StatementArguments, _ body: (String, Row) -> Void) throws {
                let rows = try Row.fetchCursor(db, sql: sql, arguments: arguments)
                while let row = try rows.next() {
                    if let name = names[row["source_id"]] { body(name, row) }
                }
            }
            let counts = "probes, failures, retried, retry_succeeded"
            try each("SELECT source_id, minute_ms, \(counts) FROM minute_rollups WHERE minute_ms >= ?", [sixHoursAgo]) { name, row in
                registry.restore(source: name, atMs: row["minute_ms"], counts: HistoryStore.counts(row), hourly: false)
            }
            // Before the last six hours, hours: from the hourly tier up to its mark, from minute
            // rows after it (and for the hour the six-hour line cuts). Before the hourly ring's
            // 25 hours, whole days from the day tier, up to its mark.
            let hourMark = try RollupTiers.mark(db, HistoryTier.hour.name) ?? Int64.min
            let dayMark = try RollupTiers.mark(db, HistoryTier.day.name) ?? Int64.min
            let cut = min(hourMark, HealthWindow.floor(sixHoursAgo, to: HealthWindow.hour))
            let dayCut = min(dayMark, HealthWindow.floor(nowMs - 25 * HealthWindow.hour, to: HealthWindow.day))
            try each("SELECT source_id, hour_ms, \(counts) FROM hour_rollups WHERE hour_ms >= ? AND hour_ms < ?", [max(since, dayCut), cut]) { name, row in
                registry.restore(source: name, atMs: row["hour_ms"], counts: HistoryStore.counts(row), hourly: true)
            }
            try each(
                """
                SELECT source_id, (minute_ms / 3600000) * 3600000 AS hour_ms, SUM(probes) AS probes, SUM(failures) AS failures,
                       SUM(retried) AS retried, SUM(retry_succeeded) AS retry_succeeded
                FROM minute_rollups WHERE minute_ms >= ? AND minute_ms < ? GROUP BY hour_ms, source_id
                """, [max(since, cut), sixHoursAgo]
            ) { name, row in
                registry.restore(source: name, atMs: row["hour_ms"], counts: HistoryStore.counts(row), hourly: true)
            }
            try each(
                "SELECT d.source_id, d.day_ms, \(counts) FROM sources s CROSS JOIN day_rollups d ON d.source_id = s.id AND d.day_ms >= ? AND d.day_ms < ?",
                [HealthWindow.floor(since, to: HealthWindow.day), dayCut]
            ) { name, row in
                registry.restore(source: name, atMs: row["day_ms"], counts: HistoryStore.counts(row), hourly: true)
            }
            // Response times of the last 25 hours: whole hours from the hourly tier (25 rows a
            // source, not 1,500 minute rows to decode at every start), minutes past its mark.
            let dayAgo = HealthWindow.floor(nowMs - 25 * HealthWindow.hour, to: HealthWindow.hour)
            try each(
                """
                SELECT source_id, hour_ms AS at, latency FROM hour_rollups WHERE hour_ms >= ? AND hour_ms < ?
                UNION ALL
                SELECT source_id, minute_ms, latency FROM minute_rollups WHERE minute_ms >= ?
                """, [dayAgo, hourMark, max(dayAgo, hourMark)]
            ) { name, row in
                registry.restoreLatency(source: name, atMs: row["at"], buckets: LatencyBlob.decode(row["latency"]))
            }
        }
    }

    /// One day's probes and failures.
    package struct Day: Sendable, Equatable {
        package var dayMs: Int64
        package var probes: Int
        package var failures: Int

        package init(dayMs: Int64, probes: Int, failures: Int) {
            self.dayMs = dayMs
            self.probes = probes
            self.failures = failures
        }

        /// The share of probes that succeeded; nil without probes.
        package var availability: Double? { HealthWindow.availability(probes: probes, failures: failures) }
    }

    /// Per UTC day from `sinceMs` (a day boundary) to now, the probes and failures of `source`
    /// (or of every source), each stretch read from the coarsest tier that holds it: days before
    /// the day mark from the day tier, hours before the hour mark from the hour tier (summed by
    /// day), the minutes since from the minute rows. Keyed by source, days in order.
    package static func days(_ database: LookoutDatabase, source: String?, sinceMs: Int64) throws -> [String: [Day]] {
        if let source {
            return try database.writer.read { db in
                guard let id = try SourceIds.id(of: source, db) else { return [:] }
                return try days(db, ids: id...id, names: [id: source], sinceMs: sinceMs)
            }
        }
        // Every source: the ids in two halves, read side by side on two of the pool's reader
        // connections (90 days of 1,000 sources are 90,000 rows; one core steps through them in
        // about 15 ms). Each half is one consistent read of its own sources, marks included.
        let writer = database.writer  // one file for every read, even if the stand-in is swapped meanwhile
        guard let (low, high) = try writer.read({ db in try idRange(db) }) else { return [:] }
        let middle = low &+ Int64(UInt64(bitPattern: high &- low) / 2)  // ids from the file: no overflow
        let halves = middle < high ? [low...middle, (middle + 1)...high] : [low...high]
        let results = Mutex<[Result<[String: [Day]], any Error>]>([])
        DispatchQueue.concurrentPerform(iterations: halves.count) { index in
            let half = Result {
                try writer.read { db in try days(db, ids: halves[index], names: try SourceIds.names(db), sinceMs: sinceMs) }
            }
            results.withLock { $0.append(half) }
        }
        var found: [String: [Day]] = [:]
        for half in results.withLock({ $0 }) { found.merge(try half.get()) { first, _ in first } }
        return found
    }

    private static func idRange(_ db: Database) throws -> (Int64, Int64)? {
        guard let row = try Row.fetchOne(db, sql: "SELECT MIN(id), MAX(id) FROM sources"),
            let low = row[0] as Int64?, let high = row[1] as Int64?, low <= high
        else { return nil }
        return (low, high)
    }

    /// The days of the sources whose ids are in `ids`, in one read.
    private static func days(_ db: Database, ids: ClosedRange<Int64>, names: [Int64: String], sinceMs: Int64) throws -> [String: [Day]] {
        let dayMark = max(sinceMs, try RollupTiers.mark(db, HistoryTier.day.name) ?? sinceMs)
        let hourMark = max(dayMark, try RollupTiers.mark(db, HistoryTier.hour.name) ?? dayMark)
        let rows: Statement
        if ids.lowerBound == ids.upperBound {
            rows = try oneSource(ids.lowerBound, db, since: sinceMs, dayMark: dayMark, hourMark: hourMark)
        } else {
            rows = try db.makeStatement(
                sql: """
                    SELECT d.source_id, d.day_ms AS day, d.probes, d.failures FROM sources s
                    CROSS JOIN day_rollups d ON d.source_id = s.id AND d.day_ms >= :since AND d.day_ms < :dayMark
                    WHERE s.id BETWEEN :low AND :high
                    UNION ALL
                    SELECT source_id, (hour_ms / 86400000) * 86400000 AS day, SUM(probes), SUM(failures) FROM hour_rollups
                    WHERE hour_ms >= :dayMark AND hour_ms < :hourMark AND source_id BETWEEN :low AND :high GROUP BY source_id, day
                    UNION ALL
                    SELECT source_id, (minute_ms / 86400000) * 86400000 AS day, SUM(probes), SUM(failures) FROM minute_rollups
                    WHERE minute_ms >= :hourMark AND source_id BETWEEN :low AND :high GROUP BY source_id, day
                    """)
            try rows.setArguments(["since": sinceMs, "dayMark": dayMark, "hourMark": hourMark, "low": ids.lowerBound, "high": ids.upperBound])
        }
        // The three parts cover disjoint times; only the day of a mark can come in two parts,
        // so rows are appended and equal days merged once at the end. Each part comes grouped
        // by source: a run of one source's rows is gathered, then stored (one dictionary
        // access per run, not per row). Stepped through with the C API: 90 days of 1,000
        // sources are 90,000 rows, and decoding each through `Row` cost a third of the time.
        var byId: [Int64: [Day]] = [:]
        var runId: Int64?
        var run: [Day] = []
        let statement = rows.sqliteStatement
        defer { sqlite3_reset(statement) }
        while true {
            let code = sqlite3_step(statement)
            if code == SQLITE_DONE { break }
            guard code == SQLITE_ROW else {
                throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)), sql: rows.sql)
            }
            let id = sqlite3_column_int64(statement, 0)
            if id != runId {
                if let runId { byId[runId, default: []].append(contentsOf: run) }
                runId = id
                run.removeAll(keepingCapacity: true)
            }
            run.append(
                Day(
                    dayMs: sqlite3_column_int64(statement, 1), probes: Int(sqlite3_column_int64(statement, 2)),
                    failures: Int(sqlite3_column_int64(statement, 3))))
        }
        if let runId { byId[runId, default: []].append(contentsOf: run) }
        var found: [String: [Day]] = [:]
        found.reserveCapacity(byId.count)
        for (id, days) in byId {
            guard let name = names[id] else { continue }
            found[name] = merged(days)
        }
        return found
    }

    /// One source's days: its day rows by key, then its hours and minutes since the marks one
    /// key at a time (the hour and minute tiers are keyed by time first; reading their stretch
    /// would read every source's rows).
    private static func oneSource(_ id: Int64, _ db: Database, since: Int64, dayMark: Int64, hourMark: Int64) throws -> Statement {
        let oldestHour = try Int64.fetchOne(db, sql: "SELECT MIN(hour_ms) FROM hour_rollups") ?? hourMark
        let oldestMinute = try Int64.fetchOne(db, sql: "SELECT MIN(minute_ms) FROM minute_rollups") ?? Int64.max
        let newestMinute = try Int64.fetchOne(db, sql: "SELECT MAX(minute_ms) FROM minute_rollups") ?? Int64.min
        let hourFrom = HealthWindow.floor(max(dayMark, oldestHour), to: HealthWindow.hour)
        let minuteFrom = HealthWindow.floor(max(hourMark, oldestMinute), to: HealthWindow.minute)
        let statement = try db.makeStatement(
            sql: """
                WITH RECURSIVE
                  hours(t) AS (SELECT :hourFrom WHERE :hourFrom < :hourMark
                               UNION ALL SELECT t + 3600000 FROM hours WHERE t + 3600000 < :hourMark),
                  minutes(t) AS (SELECT :minuteFrom WHERE :minuteFrom <= :newestMinute
                                 UNION ALL SELECT t + 60000 FROM minutes WHERE t + 60000 <= :newestMinute)
                SELECT source_id, day_ms, probes, failures FROM day_rollups
                WHERE source_id = :id AND day_ms >= :since AND day_ms < :dayMark
                UNION ALL
                SELECT source_id, (hour_ms / 86400000) * 86400000 AS day, SUM(probes), SUM(failures)
                FROM hours JOIN hour_rollups ON hour_ms = hours.t AND source_id = :id GROUP BY day
                UNION ALL
                SELECT source_id, (minute_ms / 86400000) * 86400000 AS day, SUM(probes), SUM(failures)
                FROM minutes JOIN minute_rollups ON minute_ms = minutes.t AND source_id = :id GROUP BY day
                """)
        try statement.setArguments([
            "id": id, "since": since, "dayMark": dayMark, "hourMark": hourMark, "hourFrom": hourFrom, "minuteFrom": minuteFrom,
            "newestMinute": newestMinute,
        ])
        return statement
    }

    /// Days in order with equal days summed (the tiers return them in order, but for the day of a mark).
    static func merged(_ days: [Day]) -> [Day] {
        if zip(days, days.dropFirst()).allSatisfy({ $0.dayMs < $1.dayMs }) { return days }
        var merged: [Day] = []
        merged.reserveCapacity(days.count)
        for day in days.sorted(by: { $0.dayMs < $1.dayMs }) {
            if merged.last?.dayMs == day.dayMs {
                merged[merged.count - 1].probes &+= day.probes
                merged[merged.count - 1].failures &+= day.failures
            } else {
                merged.append(day)
            }
        }
        return merged
    }

    static func counts(_ row: Row) -> BucketCounts {
        BucketCounts(
            probes: UInt32(clamping: row["probes"] as Int), failures: UInt32(clamping: row["failures"] as Int),
            retried: UInt32(clamping: row["retried"] as Int), retrySucceeded: UInt32(clamping: row["retry_succeeded"] as Int))
    }
}
