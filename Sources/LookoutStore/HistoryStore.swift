import GRDB
import LookoutCore

/// Reads the rollups back after a restart, so error rates and availability continue where they
/// were: minute rows for the last 6 hours, hourly sums for the 91 days before (the page's 90-day
/// bars; as far back as `retention` keeps rows), and response times for the last 25 hours.
package enum HistoryStore {
    package static func restore(into registry: SourceRegistry, from database: LookoutDatabase, nowMs: Int64) throws {
        let sixHoursAgo = nowMs - HealthWindow.sixHours
        let monthAgo = nowMs - 91 * HealthWindow.day
        try database.writer.read { db in
            let minutes = try Row.fetchCursor(
                db, sql: "SELECT source, minute_ms, probes, failures, retried, retry_succeeded FROM probe_rollups WHERE minute_ms >= ?",
                arguments: [sixHoursAgo])
            while let row = try minutes.next() {
                registry.restore(source: row["source"], atMs: row["minute_ms"], counts: counts(row), hourly: false)
            }
            let hours = try Row.fetchCursor(
                db, sql: """
                    SELECT source, (minute_ms / 3600000) * 3600000 AS hour_ms, SUM(probes) AS probes, SUM(failures) AS failures,
                           SUM(retried) AS retried, SUM(retry_succeeded) AS retry_succeeded
                    FROM probe_rollups WHERE minute_ms >= ? AND minute_ms < ? GROUP BY source, hour_ms
                    """,
                arguments: [monthAgo, sixHoursAgo])
            while let row = try hours.next() {
                registry.restore(source: row["source"], atMs: row["hour_ms"], counts: counts(row), hourly: true)
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
