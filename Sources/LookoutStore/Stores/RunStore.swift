import GRDB
import LookoutCore

/// A stretch of time in which Lookout did not run, so nothing was probed: from the last time the
/// previous run was known alive to this run's start.
package struct MonitoringGap: Sendable, Equatable {
    /// When the previous run was last known alive (its last heartbeat, or its clean stop).
    package var fromMs: Int64
    /// When this run started.
    package var toMs: Int64

    package init(fromMs: Int64, toMs: Int64) {
        self.fromMs = fromMs
        self.toMs = toMs
    }

    package var durationMs: Int64 { toMs - fromMs }
}

/// The `runs` table: one row per start of `serve`, with the last time that run was known alive
/// (a heartbeat every `heartbeat`, and its clean stop). At the next start it tells how long
/// nothing was probed, which the status page and the JSON API say: an alert restored from
/// before the stop reads "for 3h", and part of that time nobody was looking.
package struct RunStore: Sendable {
    let database: LookoutDatabase
    /// How often a run marks itself alive: after a kill -9 a gap may begin this much earlier
    /// than Lookout actually stopped.
    package static let heartbeat: Duration = .seconds(30)
    /// Shorter gaps are a restart, not a stretch without monitoring worth telling.
    package static let minimumGap: Int64 = 120_000
    /// Runs kept, newest first, beyond the SLA history's 400 days; older rows are deleted at
    /// each start.
    static let kept = 100

    package init(database: LookoutDatabase) {
        self.database = database
    }

    /// Records a run that starts at `nowMs`; returns the gap since any run was last alive, if
    /// it was more than `minimumGap` (none on a first start, or when the clock went back).
    package func begin(nowMs: Int64) throws -> MonitoringGap? {
        try database.writer.write { db in
            // The latest heartbeat of any run, not the latest run's: after the clock stepped back
            // a run can start "before" the one that came ahead of it.
            let previous = try DatabaseValue.fetchOne(db, sql: "SELECT MAX(alive_at_ms) FROM runs WHERE typeof(alive_at_ms) = 'integer'")
                .flatMap { Int64.fromDatabaseValue($0) }
            try db.execute(sql: "INSERT OR REPLACE INTO runs (started_at_ms, alive_at_ms) VALUES (?, ?)", arguments: [nowMs, nowMs])
            // The last `kept` runs, and every run of the SLA history (the reports tell the time
            // between runs as not measured: a run forgotten would turn measured time into a gap).
            try db.execute(
                sql:
                    "DELETE FROM runs WHERE started_at_ms < ? AND started_at_ms < (SELECT started_at_ms FROM runs ORDER BY started_at_ms DESC LIMIT 1 OFFSET ?)",
                arguments: [nowMs - Retention.slaHistoryMs, RunStore.kept - 1])
            // A damaged file may hold any number: only a time before this start counts.
            guard let previous, previous >= 0, previous <= nowMs, nowMs - previous > RunStore.minimumGap else { return nil }
            return MonitoringGap(fromMs: previous, toMs: nowMs)
        }
    }

    /// Marks the run that started at `startedAtMs` alive at `nowMs`; records the run first if its
    /// start could not be (the file was read-only or full then).
    package func alive(startedAtMs: Int64, nowMs: Int64) throws {
        try database.writer.write { db in
            try db.execute(
                sql: "INSERT INTO runs (started_at_ms, alive_at_ms) VALUES (?, ?) ON CONFLICT(started_at_ms) DO UPDATE SET alive_at_ms = excluded.alive_at_ms",
                arguments: [startedAtMs, nowMs])
        }
    }

    /// Marks the run alive every `heartbeat` until cancelled, and once more then (a clean stop).
    /// A write that fails (a full disk) is skipped: the next one may work. While none does, the
    /// gap told at the next start begins at the last one that did.
    package func keepAlive(startedAtMs: Int64) async {
        while !Task.isCancelled {
            do { try await Task.sleep(for: RunStore.heartbeat) } catch { break }
            try? alive(startedAtMs: startedAtMs, nowMs: Timestamp.nowMs())
        }
        try? alive(startedAtMs: startedAtMs, nowMs: Timestamp.nowMs())
    }
}
