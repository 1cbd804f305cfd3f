import GRDB
import LookoutCore

/// Reads the rollups back after a restart, so error rates, availability, the 90-day bars and the
/// response-time chart continue where they were: minute rows for the last 6 hours; hourly sums
/// for the 91 days before, from the hourly tier where `RollupTiers` has reached and from minute
/// rows past it; daily rows for days before the oldest hourly one; and response times for the
/// last 25 hours.
package enum HistoryStore {
    package static func restore(into registry: SourceRegistry, from database: LookoutDatabase, nowMs: Int64) throws {
        let sixHoursAgo = nowMs - HealthWindow.sixHours
        let since = nowMs - 91 * HealthWindow.day
        try database.writer.read { db in
            let minutes = try Row.fetchCursor(
                db, sql: "SELECT source, minute_ms, probes, failures, retried, retry_succeeded FROM probe_rollups WHERE minute_ms >= ?",
                arguments: [sixHoursAgo])
            while let row = try minutes.next() {
                registry.restore(source: row["source"], atMs: row["minute_ms"], counts: counts(row), hourly: false)
            }
            // Whole hours before the last six come from the hourly tier up to its mark; later
            // ones (and the hour the six-hour line cuts) from the minute rows.
            let hourMark = try RollupTiers.mark(db, "hour") ?? Int64.min
            let cut = min(hourMark, HealthWindow.floor(sixHoursAgo, to: HealthWindow.hour))
            let tier = try Row.fetchCursor(
                db, sql: """
                    SELECT source, hour_ms, probes, failures, retried, retry_succeeded FROM probe_rollups_hourly
                    WHERE hour_ms >= ? AND hour_ms < ?
                    """,
                arguments: [since, cut])
            while let row = try tier.next() {
                registry.restore(source: row["source"], atMs: row["hour_ms"], counts: counts(row), hourly: true)
            }
            let hours = try Row.fetchCursor(
                db, sql: """
                    SELECT source, (minute_ms / 3600000) * 3600000 AS hour_ms, SUM(probes) AS probes, SUM(failures) AS failures,
                           SUM(retried) AS retried, SUM(retry_succeeded) AS retry_succeeded
                    FROM probe_rollups WHERE minute_ms >= ? AND minute_ms < ? GROUP BY source, hour_ms
                    """,
                arguments: [max(since, cut), sixHoursAgo])
            while let row = try hours.next() {
                registry.restore(source: row["source"], atMs: row["hour_ms"], counts: counts(row), hourly: true)
            }
            // Days older than every hourly row (hour_retention shorter than the bars).
            let days = try Row.fetchCursor(
                db, sql: """
                    SELECT source, day_ms, probes, failures, retried, retry_succeeded FROM probe_rollups_daily
                    WHERE day_ms >= ? AND day_ms + 86400000 <= (SELECT COALESCE(MIN(hour_ms), ?) FROM probe_rollups_hourly)
                    """,
                arguments: [since, cut])
            while let row = try days.next() {
                registry.restore(source: row["source"], atMs: row["day_ms"], counts: counts(row), hourly: true)
            }
            // Response times of the last 25 hours: whole hours from the hourly tier (25 rows a
            // source, not 1,500 minute rows to parse at every start), minutes past its mark.
            let dayAgo = HealthWindow.floor(nowMs - 25 * HealthWindow.hour, to: HealthWindow.hour)
            let latencies = try Row.fetchCursor(
                db, sql: """
                    SELECT source, hour_ms AS at, latency_buckets FROM probe_rollups_hourly WHERE hour_ms >= ? AND hour_ms < ?
                    UNION ALL
                    SELECT source, minute_ms, latency_buckets FROM probe_rollups WHERE minute_ms >= ?
                    """,
                arguments: [dayAgo, hourMark, max(dayAgo, hourMark)])
            while let row = try latencies.next() {
                registry.restoreLatency(source: row[0], atMs: row[1], buckets: RecordWriter.buckets(row[2]))
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
    }

    /// Per UTC day from `sinceMs` (a day boundary) to now, the probes and failures of `source`
    /// (or of every source), each stretch read from the coarsest tier that holds it: days before
    /// the day mark from the day tier, hours before the hour mark from the hour tier (summed by
    /// day), the minutes since from the minute rows. Keyed by source, days in order.
    package static func days(_ database: LookoutDatabase, source: String?, sinceMs: Int64) throws -> [String: [Day]] {
        try database.writer.read { db in
            let dayMark = max(sinceMs, try RollupTiers.mark(db, "day") ?? sinceMs)
            let hourMark = max(dayMark, try RollupTiers.mark(db, "hour") ?? dayMark)
            let only = source == nil ? "" : " AND source = :source"
            let rows = try Row.fetchCursor(
                db, sql: """
                    SELECT source, day_ms AS day, probes, failures FROM probe_rollups_daily
                    WHERE day_ms >= :since AND day_ms < :dayMark\(only)
                    UNION ALL
                    SELECT source, (hour_ms / 86400000) * 86400000 AS day, SUM(probes), SUM(failures) FROM probe_rollups_hourly
                    WHERE hour_ms >= :dayMark AND hour_ms < :hourMark\(only) GROUP BY source, day
                    UNION ALL
                    SELECT source, (minute_ms / 86400000) * 86400000 AS day, SUM(probes), SUM(failures) FROM probe_rollups
                    WHERE minute_ms >= :hourMark\(only) GROUP BY source, day
                    """,
                arguments: ["since": sinceMs, "dayMark": dayMark, "hourMark": hourMark, "source": source])
            // The three parts cover disjoint times; only the day of a mark can come in two parts,
            // so rows are appended and equal days merged once at the end.
            var found: [String: [Day]] = [:]
            while let row = try rows.next() {
                found[row[0] as String, default: []].append(Day(dayMs: row[1], probes: row[2], failures: row[3]))
            }
            for (name, days) in found {
                // The rows come in time order (the tiers are keyed by time first); a source whose
                // days do not is sorted.
                let ordered = zip(days, days.dropFirst()).allSatisfy { $0.dayMs < $1.dayMs }
                if ordered { continue }
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
                found[name] = merged
            }
            return found
        }
    }

    static func counts(_ row: Row) -> BucketRing.Counts {
        BucketRing.Counts(
            probes: UInt32(clamping: row["probes"] as Int), failures: UInt32(clamping: row["failures"] as Int),
            retried: UInt32(clamping: row["retried"] as Int), retrySucceeded: UInt32(clamping: row["retry_succeeded"] as Int))
    }
}
