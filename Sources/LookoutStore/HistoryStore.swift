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
            let cut = min(try RollupTiers.mark(db, "hour") ?? Int64.min, RollupTiers.floor(sixHoursAgo, HealthWindow.hour))
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
            let latencies = try Row.fetchCursor(
                db, sql: "SELECT source, minute_ms, latency_buckets FROM probe_rollups WHERE minute_ms >= ?",
                arguments: [nowMs - 25 * HealthWindow.hour])
            while let row = try latencies.next() {
                registry.restoreLatency(source: row["source"], atMs: row["minute_ms"], buckets: RecordWriter.buckets(row["latency_buckets"]))
            }
        }
    }

    static func counts(_ row: Row) -> BucketRing.Counts {
        BucketRing.Counts(
            probes: UInt32(clamping: row["probes"] as Int), failures: UInt32(clamping: row["failures"] as Int),
            retried: UInt32(clamping: row["retried"] as Int), retrySucceeded: UInt32(clamping: row["retry_succeeded"] as Int))
    }
}
