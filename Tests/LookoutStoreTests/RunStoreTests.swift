import GRDB
import LookoutStore
import Testing

/// Each start of `serve` is a row of `runs`; the next start learns how long nothing was probed.
@Suite("runs")
struct RunStoreTests {
    let hour: Int64 = 3_600_000

    @Test func aFirstStartHasNoGap() throws {
        let runs = RunStore(database: try LookoutDatabase(path: ":memory:"))
        #expect(try runs.begin(nowMs: 10 * hour) == nil)
    }

    @Test func theGapRunsFromThePreviousRunsLastHeartbeatToThisStart() throws {
        let runs = RunStore(database: try LookoutDatabase(path: ":memory:"))
        _ = try runs.begin(nowMs: 10 * hour)
        try runs.alive(startedAtMs: 10 * hour, nowMs: 11 * hour)
        #expect(try runs.begin(nowMs: 13 * hour) == MonitoringGap(fromMs: 11 * hour, toMs: 13 * hour))
        // The next start counts from this run, not from the one before it.
        try runs.alive(startedAtMs: 13 * hour, nowMs: 14 * hour)
        #expect(try runs.begin(nowMs: 14 * hour + 3 * 60_000) == MonitoringGap(fromMs: 14 * hour, toMs: 14 * hour + 3 * 60_000))
    }

    @Test func aQuickRestartOrAClockThatWentBackIsNoGap() throws {
        let runs = RunStore(database: try LookoutDatabase(path: ":memory:"))
        _ = try runs.begin(nowMs: 10 * hour)
        #expect(try runs.begin(nowMs: 10 * hour + RunStore.minimumGap - 1) == nil)
        #expect(try runs.begin(nowMs: 9 * hour) == nil)
    }

    /// A start the file could not record (read-only, full) is recorded by its first heartbeat
    /// that can be: the next start measures from this run, not the one before.
    @Test func aHeartbeatRecordsARunItsStartCouldNot() throws {
        let runs = RunStore(database: try LookoutDatabase(path: ":memory:"))
        _ = try runs.begin(nowMs: 10 * hour)
        try runs.alive(startedAtMs: 12 * hour, nowMs: 13 * hour)
        #expect(try runs.begin(nowMs: 13 * hour + 60_000) == nil)
    }

    /// After the clock stepped back, a run may start "before" the one that came ahead of it:
    /// the gap counts from the latest heartbeat of any run.
    @Test func theLatestHeartbeatCountsWhateverTheStarts() throws {
        let runs = RunStore(database: try LookoutDatabase(path: ":memory:"))
        _ = try runs.begin(nowMs: 10 * hour)
        try runs.alive(startedAtMs: 10 * hour, nowMs: 12 * hour)
        _ = try runs.begin(nowMs: 9 * hour)  // the clock went back an hour
        try runs.alive(startedAtMs: 9 * hour, nowMs: 11 * hour)
        #expect(try runs.begin(nowMs: 14 * hour) == MonitoringGap(fromMs: 12 * hour, toMs: 14 * hour))
    }

    @Test func aDamagedHeartbeatIsNoGap() throws {
        let database = try LookoutDatabase(path: ":memory:")
        let runs = RunStore(database: database)
        for value in ["'yesterday'", "-9223372036854775808", "9223372036854775807"] {
            _ = try runs.begin(nowMs: 10 * hour)
            try database.writer.write { db in try db.execute(sql: "UPDATE runs SET alive_at_ms = \(value)") }
            #expect(try runs.begin(nowMs: 11 * hour) == nil)
            try database.writer.write { db in try db.execute(sql: "DELETE FROM runs") }
        }
    }

    @Test func aHeartbeatMarksOnlyItsOwnRun() throws {
        let database = try LookoutDatabase(path: ":memory:")
        let runs = RunStore(database: database)
        _ = try runs.begin(nowMs: 10 * hour)
        _ = try runs.begin(nowMs: 12 * hour)
        try runs.alive(startedAtMs: 12 * hour, nowMs: 13 * hour)
        let rows = try database.writer.read { db in
            try Row.fetchAll(db, sql: "SELECT started_at_ms, alive_at_ms FROM runs ORDER BY started_at_ms").map { [$0[0] as Int64, $0[1] as Int64] }
        }
        #expect(rows == [[10 * hour, 10 * hour], [12 * hour, 13 * hour]])
    }

    /// Runs of the SLA history's 400 days are all kept (a report tells the time between runs as
    /// not measured); older ones beyond the latest hundred go.
    @Test func runsOfTheSLAHistoryAndTheLatestHundredAreKept() throws {
        let database = try LookoutDatabase(path: ":memory:")
        let runs = RunStore(database: database)
        let day = 24 * hour
        // 130 daily restarts long ago, then 130 in the last 130 days.
        let now = 2_000 * day
        for start in 1...130 { _ = try runs.begin(nowMs: Int64(start) * day) }
        for start in 1...130 { _ = try runs.begin(nowMs: now - Int64(131 - start) * day) }
        let (count, oldest) = try database.writer.read { db in
            (try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM runs")!, try Int64.fetchOne(db, sql: "SELECT MIN(started_at_ms) FROM runs")!)
        }
        #expect(count == 130)
        #expect(oldest == now - 130 * day)
    }
}
