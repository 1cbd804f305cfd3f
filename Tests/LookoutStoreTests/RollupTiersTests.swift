import Foundation
import GRDB
import Logging
import LookoutCore
import LookoutStore
import Testing

/// History in tiers: minute rows summed into hours, hours into days, each step one transaction
/// with its mark; retention never deletes what the next tier does not hold yet.
@Suite("rollup tiers")
struct RollupTiersTests {
    let hour = HealthWindow.hour
    let day = HealthWindow.day
    /// Midnight UTC, 20,000 days after 1970.
    var midnight: Int64 { 20_000 * day }

    /// Three days of probes every 5 minutes for two sources, some failing, through the writer.
    func written(_ database: LookoutDatabase, until nowMs: Int64) {
        let writer = RecordWriter(database: database, logger: Logger(label: "test"))
        var at = nowMs - 3 * day
        var index = 0
        while at < nowMs {
            for source in ["a", "b"] {
                let ok = (index + (source == "a" ? 0 : 3)) % 7 != 0
                writer.record(
                    ProbeResult(
                        source: source, timestampMs: at, ok: ok, attempts: ok ? 1 : 2, durationSeconds: 0.01 * Double(index % 9),
                        latencySeconds: 0.01 * Double(index % 9)))
            }
            at += 5 * 60_000
            index += 1
        }
        writer.flush()
    }

    struct Totals: Equatable {
        var probes = 0
        var failures = 0
        var retried = 0
    }

    func totals(_ database: LookoutDatabase, _ table: String, _ time: String, from: Int64, to: Int64, source: String = "a") throws -> Totals {
        try database.writer.read { db in
            let row = try Row.fetchOne(
                db, sql: "SELECT SUM(probes) AS p, SUM(failures) AS f, SUM(retried) AS r FROM \(table) WHERE source = ? AND \(time) >= ? AND \(time) < ?",
                arguments: [source, from, to])
            return Totals(probes: row?["p"] ?? 0, failures: row?["f"] ?? 0, retried: row?["r"] ?? 0)
        }
    }

    /// Source a's whole history, each stretch from the tier that holds it: days wholly before the
    /// first hourly row (as the page's restore reads them), hours up to the hour mark, minutes after.
    func history(_ database: LookoutDatabase, until now: Int64) throws -> Totals {
        let hourMark = try database.writer.read { db in try RollupTiers.mark(db, "hour") } ?? 0
        let oldestHour = try database.writer.read { db in try Int64.fetchOne(db, sql: "SELECT MIN(hour_ms) FROM probe_rollups_hourly") } ?? 0
        return [
            try totals(database, "probe_rollups_daily", "day_ms", from: 0, to: HealthWindow.floor(oldestHour, to: day)),
            try totals(database, "probe_rollups_hourly", "hour_ms", from: oldestHour, to: hourMark),
            try totals(database, "probe_rollups", "minute_ms", from: hourMark, to: now),
        ].reduce(Totals()) { Totals(probes: $0.probes + $1.probes, failures: $0.failures + $1.failures, retried: $0.retried + $1.retried) }
    }

    @Test func aDaysAvailabilityIsTheSameFromEveryTier() throws {
        let database = try LookoutDatabase(path: ":memory:")
        let now = midnight + 30 * 60_000
        written(database, until: now)
        let steps = try RollupTiers.advance(database, nowMs: now)
        #expect(steps.hours == 3 * 24 && steps.days == 3)  // from 00:30 three days ago to midnight
        let yesterday = (midnight - day, midnight)
        let raw = try database.writer.read { db in
            let row = try Row.fetchOne(
                db, sql: "SELECT COUNT(*) AS p, SUM(ok = 0) AS f, SUM(attempts > 1) AS r FROM probe_results WHERE source = 'a' AND ts_ms >= ? AND ts_ms < ?",
                arguments: [yesterday.0, yesterday.1])
            return Totals(probes: row?["p"] ?? 0, failures: row?["f"] ?? 0, retried: row?["r"] ?? 0)
        }
        #expect(raw.probes == 288 && raw.failures > 0)
        #expect(try totals(database, "probe_rollups", "minute_ms", from: yesterday.0, to: yesterday.1) == raw)
        #expect(try totals(database, "probe_rollups_hourly", "hour_ms", from: yesterday.0, to: yesterday.1) == raw)
        #expect(try totals(database, "probe_rollups_daily", "day_ms", from: yesterday.0, to: yesterday.1) == raw)
        // Latency buckets add up too.
        let buckets = try database.writer.read { db in
            try Data.fetchOne(db, sql: "SELECT latency_buckets FROM probe_rollups_daily WHERE source = 'a' AND day_ms = ?", arguments: [yesterday.0])
        }
        #expect(LatencyBlob.decode(buckets).reduce(0, +) == 288)
        // The current hour (and the grace after it) is not rolled up yet; the current day neither.
        let marks = try database.writer.read { db in (try RollupTiers.mark(db, "hour"), try RollupTiers.mark(db, "day")) }
        #expect(marks.0 == midnight && marks.1 == midnight)
        // Running again changes nothing.
        #expect(try RollupTiers.advance(database, nowMs: now) == (0, 0))
        #expect(try totals(database, "probe_rollups_daily", "day_ms", from: yesterday.0, to: yesterday.1) == raw)
    }

    /// A source whose calls may last hours (a big download) holds the hour tier back that long:
    /// a row filed under its start minute and written at its end is never left behind the mark.
    @Test func aLongerGraceHoldsTheHourTierBack() throws {
        let database = try LookoutDatabase(path: ":memory:")
        let now = midnight + 30 * 60_000
        written(database, until: now)
        try RollupTiers.advance(database, nowMs: now, graceMs: 3 * hour)
        let mark = try database.writer.read { db in try RollupTiers.mark(db, "hour") }
        #expect(mark == HealthWindow.floor(now - 3 * hour, to: hour))
        // A late row for an hour not rolled yet is counted when the hour is.
        let late = midnight - 2 * hour + 10 * 60_000
        let writer = RecordWriter(database: database, logger: Logger(label: "test"))
        writer.record(ProbeResult(source: "a", timestampMs: late, ok: false))
        writer.flush()
        let before = try totals(database, "probe_rollups", "minute_ms", from: midnight - 2 * hour, to: midnight - hour)
        try RollupTiers.advance(database, nowMs: now + 4 * hour, graceMs: 3 * hour)
        #expect(try totals(database, "probe_rollups_hourly", "hour_ms", from: midnight - 2 * hour, to: midnight - hour) == before)
    }

    /// Availability over any window reads each stretch from the coarsest tier that holds it, and
    /// gets the same days as the raw results, before and after rolling up and pruning.
    @Test func daysReadTheCoarsestTierAndAgreeWithTheRawResults() throws {
        let database = try LookoutDatabase(path: ":memory:")
        let now = midnight + 30 * 60_000
        written(database, until: now)
        let since = midnight - 3 * day
        let raw = try database.writer.read { db in
            try Row.fetchAll(
                db,
                sql: "SELECT (ts_ms / 86400000) * 86400000 AS d, COUNT(*) AS p, SUM(ok = 0) AS f FROM probe_results WHERE source = 'b' GROUP BY d ORDER BY d"
            ).map { HistoryStore.Day(dayMs: $0["d"], probes: $0["p"], failures: $0["f"]) }
        }
        #expect(raw.count == 4)
        #expect(try HistoryStore.days(database, source: "b", sinceMs: since)["b"] == raw)  // all from minute rows
        try Retention(retention: .seconds(30 * 86_400), rawRetention: .seconds(86_400), tiers: RollupRetention()).prune(database, nowMs: now)
        #expect(try HistoryStore.days(database, source: "b", sinceMs: since)["b"] == raw)  // days, then minutes
        let everyone = try HistoryStore.days(database, source: nil, sinceMs: since)
        #expect(Set(everyone.keys) == ["a", "b"] && everyone["b"] == raw)
        #expect(try HistoryStore.days(database, source: "b", sinceMs: midnight)["b"] == Array(raw.suffix(1)))
    }

    /// A step that fails half-way (as a kill -9 would end it) leaves the mark before it: the rerun
    /// completes the tiers, nothing lost, nothing counted twice.
    @Test func aStepThatFailsHalfWayIsRedoneWhole() throws {
        let database = try LookoutDatabase(path: ":memory:")
        let now = midnight + 30 * 60_000
        written(database, until: now)
        let broken = midnight - 10 * hour
        try database.writer.write { db in
            try db.execute(
                sql: """
                    CREATE TRIGGER fail_once BEFORE INSERT ON hour_rollups WHEN NEW.hour_ms = \(broken) AND NEW.source_id = (SELECT id FROM sources WHERE name = 'b')
                    BEGIN SELECT RAISE(ABORT, 'killed'); END
                    """)
        }
        #expect(throws: (any Error).self) { try RollupTiers.advance(database, nowMs: now) }
        #expect(try database.writer.read { db in try RollupTiers.mark(db, "hour") } == broken)
        // Nothing of the failed hour was kept, not even source a's row written before b's failed.
        #expect(try totals(database, "probe_rollups_hourly", "hour_ms", from: broken, to: broken + hour) == Totals())
        // Retention never deletes minute rows the hourly tier does not hold.
        #expect(throws: (any Error).self) {
            try Retention(retention: .seconds(86_400), rawRetention: .seconds(3600), tiers: RollupRetention()).prune(database, nowMs: now + 10 * day)
        }
        #expect(try totals(database, "probe_rollups", "minute_ms", from: broken, to: broken + hour).probes == 12)
        try database.writer.write { db in try db.execute(sql: "DROP TRIGGER fail_once") }
        try RollupTiers.advance(database, nowMs: now)
        for source in ["a", "b"] {
            let minutes = try totals(database, "probe_rollups", "minute_ms", from: midnight - 2 * day, to: midnight, source: source)
            #expect(try totals(database, "probe_rollups_hourly", "hour_ms", from: midnight - 2 * day, to: midnight, source: source) == minutes)
            #expect(try totals(database, "probe_rollups_daily", "day_ms", from: midnight - 2 * day, to: midnight, source: source) == minutes)
        }
    }

    /// Each tier is pruned after its own retention, and only behind the next tier's mark.
    @Test func retentionKeepsEachTierForItsOwnTime() throws {
        let database = try LookoutDatabase(path: ":memory:")
        let now = midnight + 30 * 60_000
        written(database, until: now)
        let before = try totals(database, "probe_rollups", "minute_ms", from: 0, to: now)
        var tiers = RollupRetention()
        tiers.minute = .seconds(25 * 3600)
        tiers.hour = .seconds(2 * 86_400)
        let deleted = try Retention(retention: .seconds(30 * 86_400), rawRetention: .seconds(6 * 3600), tiers: tiers).prune(database, nowMs: now)
        #expect((deleted["probe_rollups"] ?? 0) > 0 && (deleted["probe_rollups_hourly"] ?? 0) > 0)
        // Minute rows of the last 25 hours, hourly rows of the last 2 days, days behind them: the
        // whole history is still there, once.
        let oldestMinute = try database.writer.read { db in try Int64.fetchOne(db, sql: "SELECT MIN(minute_ms) FROM probe_rollups") } ?? 0
        #expect(oldestMinute >= now - 26 * hour && oldestMinute % hour == 0)
        let dayMark = try database.writer.read { db in try RollupTiers.mark(db, "day") } ?? 0
        let oldestHour = try database.writer.read { db in try Int64.fetchOne(db, sql: "SELECT MIN(hour_ms) FROM probe_rollups_hourly") } ?? 0
        let stitched = try history(database, until: now)
        #expect(oldestHour % day == 0 && oldestHour <= dayMark)
        #expect(stitched == before)
    }

    /// A database written before the tiers existed (schema v5) keeps every record: its minute
    /// rows are folded into hours and days before any is pruned.
    @Test func anUpgradeFoldsTheOldMinuteRowsIntoTheTiers() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("upgrade-\(UUID().uuidString).sqlite").path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let old = try DatabaseQueue(path: path)
        try LookoutDatabase.migrator.migrate(old, upTo: "v5: announcements")
        let now = midnight + 12 * hour
        var expected = Totals()
        try old.write { db in
            for minute in stride(from: now - 20 * day, to: now, by: 30 * 60_000) {
                let failures = minute % (7 * 30 * 60_000) == 0 ? 1 : 0
                try db.execute(
                    sql:
                        "INSERT INTO probe_rollups (minute_ms, source, probes, failures, retried, retry_succeeded, duration_ms_sum, duration_ms_max, latency_buckets) VALUES (?, 'a', 2, ?, 0, 0, 20, 10, '0,0,0,0,2,0,0,0,0,0,0,0,0,0,0,0')",
                    arguments: [minute, failures])
                expected.probes += 2
                expected.failures += failures
            }
        }
        try old.close()
        let database = try LookoutDatabase(path: path)
        try Retention(retention: .seconds(30 * 86_400), rawRetention: .seconds(86_400), tiers: RollupRetention()).prune(database, nowMs: now)
        let hourMark = try database.writer.read { db in try RollupTiers.mark(db, "hour") } ?? 0
        let kept = try history(database, until: now)
        #expect(kept == expected)
        // Minute rows older than 48 h are gone; the 90-day tier kept all 20 days by the hour.
        #expect(try totals(database, "probe_rollups", "minute_ms", from: 0, to: now - 48 * hour).probes == 0)
        #expect(
            try totals(database, "probe_rollups_hourly", "hour_ms", from: now - 20 * day, to: hourMark).probes == expected.probes
                - (try totals(database, "probe_rollups", "minute_ms", from: hourMark, to: now)).probes)
    }
}
