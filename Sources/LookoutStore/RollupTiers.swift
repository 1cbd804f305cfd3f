import Foundation
import GRDB
import LookoutCore

/// The coarser history tiers: finished hours of per-minute rollups (`probe_rollups`) are summed
/// into `probe_rollups_hourly`, finished days of those into `probe_rollups_daily`. Each hour or
/// day is one transaction that also moves the tier's mark in `rollup_progress`, so a kill -9 in
/// the middle of a step loses nothing and counts nothing twice (a step recomputes its whole
/// hour from the finer rows, and the finer rows are pruned only behind the mark).
package enum RollupTiers {
    /// Minute rows may still change this long after their minute: a probe is filed under the
    /// minute it started and written when it ends, and the writer commits up to a second behind.
    /// The least grace; `Retention` passes more when a source's calls may last longer.
    package static let graceMs: Int64 = 5 * 60_000

    package struct Tier: Sendable {
        /// The mark's name in `rollup_progress`.
        var name: String
        var source: String
        var sourceTime: String
        var target: String
        var targetTime: String
        var widthMs: Int64
    }

    static let hour = Tier(
        name: "hour", source: "probe_rollups", sourceTime: "minute_ms", target: "probe_rollups_hourly", targetTime: "hour_ms",
        widthMs: HealthWindow.hour)
    static let day = Tier(
        name: "day", source: "probe_rollups_hourly", sourceTime: "hour_ms", target: "probe_rollups_daily", targetTime: "day_ms",
        widthMs: HealthWindow.day)

    /// Where a tier is complete up to (exclusive), nil before its first step.
    package static func mark(_ db: Database, _ tier: String) throws -> Int64? {
        try Int64.fetchOne(db, sql: "SELECT done_until_ms FROM rollup_progress WHERE tier = ?", arguments: [tier])
    }

    /// Rolls up what has finished by `nowMs`, at most `maxSteps` hours and days; returns how
    /// many of each it wrote.
    @discardableResult
    package static func advance(
        _ database: LookoutDatabase, nowMs: Int64, graceMs: Int64 = RollupTiers.graceMs, maxSteps: Int = 24 * 400
    ) throws -> (hours: Int, days: Int) {
        let hours = try advance(hour, in: database, until: HealthWindow.floor(nowMs - max(RollupTiers.graceMs, graceMs), to: hour.widthMs), maxSteps: maxSteps)
        // A day is finished once every hour of it is.
        let hourMark = try database.writer.read { db in try mark(db, hour.name) } ?? 0
        let days = try advance(day, in: database, until: HealthWindow.floor(hourMark, to: day.widthMs), maxSteps: maxSteps)
        return (hours, days)
    }

    private static func advance(_ tier: Tier, in database: LookoutDatabase, until limit: Int64, maxSteps: Int) throws -> Int {
        var steps = 0
        while steps < maxSteps {
            let wrote = try database.writer.write { db -> Bool in
                // Start at the mark, skipping stretches without rows (a first run, a long stop).
                let mark = try mark(db, tier.name) ?? Int64.min
                guard
                    let next = try Int64.fetchOne(
                        db, sql: "SELECT MIN(\(tier.sourceTime)) FROM \(tier.source) WHERE \(tier.sourceTime) >= ?", arguments: [mark])
                else { return false }
                let start = HealthWindow.floor(next, to: tier.widthMs)
                guard start + tier.widthMs <= limit else { return false }
                try roll(tier, from: start, db)
                try db.execute(
                    sql: "INSERT INTO rollup_progress (tier, done_until_ms) VALUES (?, ?) ON CONFLICT (tier) DO UPDATE SET done_until_ms = excluded.done_until_ms",
                    arguments: [tier.name, start + tier.widthMs])
                return true
            }
            guard wrote else { break }
            steps += 1
        }
        return steps
    }

    /// Sums one hour (or day) of the finer rows into the coarser table, per source.
    private static func roll(_ tier: Tier, from start: Int64, _ db: Database) throws {
        var sums: [String: Rollup] = [:]
        let rows = try Row.fetchCursor(
            db, sql: """
                SELECT source, probes, failures, retried, retry_succeeded, duration_ms_sum, duration_ms_max, latency_buckets
                FROM \(tier.source) WHERE \(tier.sourceTime) >= ? AND \(tier.sourceTime) < ?
                """,
            arguments: [start, start + tier.widthMs])
        while let row = try rows.next() {
            let source: String = row["source"]
            var sum = sums[source] ?? Rollup()
            sum.probes += row["probes"] as Int
            sum.failures += row["failures"] as Int
            sum.retried += row["retried"] as Int
            sum.retrySucceeded += row["retry_succeeded"] as Int
            sum.durationMsSum += row["duration_ms_sum"] as Double
            sum.durationMsMax = max(sum.durationMsMax, row["duration_ms_max"] as Double)
            for (index, count) in RecordWriter.buckets(row["latency_buckets"]).enumerated() { sum.latencyBuckets[index] += count }
            sums[source] = sum
        }
        for (source, sum) in sums {
            try db.execute(
                sql: """
                    INSERT OR REPLACE INTO \(tier.target) (\(tier.targetTime), source, probes, failures, retried, retry_succeeded, duration_ms_sum, duration_ms_max, latency_buckets)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    start, source, sum.probes, sum.failures, sum.retried, sum.retrySucceeded, sum.durationMsSum, sum.durationMsMax,
                    sum.latencyBuckets.map(String.init).joined(separator: ","),
                ])
        }
    }
}
