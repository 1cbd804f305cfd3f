import Foundation
import GRDB
import LookoutCore

/// The coarser history tiers: finished hours of per-minute rollups (`minute_rollups`) are summed
/// into `hour_rollups`, finished days of those into `day_rollups`. Each hour or
/// day is one transaction that also moves the tier's mark in `rollup_progress`, so a kill -9 in
/// the middle of a step loses nothing and counts nothing twice (a step recomputes its whole
/// hour from the finer rows, and the finer rows are pruned only behind the mark).
package enum RollupTiers {
    /// Minute rows may still change this long after their minute: a probe is filed under the
    /// minute it started and written when it ends, and the writer commits up to a second behind.
    /// The least grace; `Retention` passes more when a source's calls may last longer.
    package static let graceMs: Int64 = 5 * 60_000

    /// A step of rolling up: the finer tier read, the coarser one written (whose name is the mark's).
    struct Step {
        var from: HistoryTier
        var to: HistoryTier
    }

    static let hour = Step(from: .minute, to: .hour)
    static let day = Step(from: .hour, to: .day)

    /// Where a tier is complete up to (exclusive), nil before its first step, and for a value
    /// no step writes (a damaged file: not a number, before 1970 or after 9999).
    package static func mark(_ db: Database, _ tier: String) throws -> Int64? {
        try DatabaseValue.fetchOne(db, sql: "SELECT done_until_ms FROM rollup_progress WHERE tier = ?", arguments: [tier])
            .flatMap(Int64.fromDatabaseValue)
            .flatMap { (0...Timestamp.writable.upperBound).contains($0) ? $0 : nil }
    }

    /// Rolls up what has finished by `nowMs`, at most `maxSteps` hours and days; returns how
    /// many of each it wrote.
    @discardableResult
    package static func advance(
        _ database: LookoutDatabase, nowMs: Int64, graceMs: Int64 = RollupTiers.graceMs, maxSteps: Int = 24 * 400
    ) throws -> (hours: Int, days: Int) {
        let hours = try advance(
            hour, in: database, until: HealthWindow.floor(nowMs - max(RollupTiers.graceMs, graceMs), to: hour.to.widthMs), maxSteps: maxSteps)
        // A day is finished once every hour of it is.
        let hourMark = try database.writer.read { db in try mark(db, hour.to.name) } ?? 0
        let days = try advance(day, in: database, until: HealthWindow.floor(hourMark, to: day.to.widthMs), maxSteps: maxSteps)
        return (hours, days)
    }

    private static func advance(_ step: Step, in database: LookoutDatabase, until limit: Int64, maxSteps: Int) throws -> Int {
        var steps = 0
        let (finer, coarser) = (step.from, step.to)
        while steps < maxSteps {
            let wrote = try database.writer.write { db -> Bool in
                // Start at the mark, skipping stretches without rows (a first run, a long stop).
                // Both finer tiers are keyed by time first: this is one seek.
                // Rows before 1970 are never rolled up (only a damaged file holds them).
                let mark = try mark(db, coarser.name) ?? 0
                guard
                    let next = try Int64.fetchOne(
                        db, sql: "SELECT MIN(\(finer.time)) FROM \(finer.table) WHERE \(finer.time) >= ?", arguments: [mark])
                else { return false }
                let start = HealthWindow.floor(next, to: coarser.widthMs)
                guard start <= limit - coarser.widthMs else { return false }
                try roll(step, from: start, db)
                try db.execute(
                    sql:
                        "INSERT INTO rollup_progress (tier, done_until_ms) VALUES (?, ?) ON CONFLICT (tier) DO UPDATE SET done_until_ms = excluded.done_until_ms",
                    arguments: [coarser.name, start + coarser.widthMs])
                return true
            }
            guard wrote else { break }
            steps += 1
        }
        return steps
    }

    /// Sums one hour (or day) of the finer rows into the coarser table, per source.
    private static func roll(_ step: Step, from start: Int64, _ db: Database) throws {
        var sums: [Int64: Rollup] = [:]
        let rows = try Row.fetchCursor(
            db, sql: "SELECT * FROM \(step.from.table) WHERE \(step.from.time) >= ? AND \(step.from.time) < ?",
            arguments: [start, start + step.to.widthMs])
        while let row = try rows.next() {
            sums[row["source_id"], default: Rollup()].add(RecordWriter.rollup(row))
        }
        let statements = BatchStatements(db)
        // In source order: the day tier is keyed by source first.
        for (source, sum) in sums.sorted(by: { $0.key < $1.key }) {
            if try RecordWriter.write(step.to, timeMs: start, sourceId: source, sum, stored: false, statements, slot: 0) {
                statements.counted(step.to.name)
            }
        }
        try statements.writeRowCounts()
    }
}
