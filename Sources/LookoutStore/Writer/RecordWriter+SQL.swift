import Foundation
import GRDB
import LookoutCore

/// The statements behind each kind of record, prepared once per batch, and what the batch
/// added: new source ids (remembered once it commits) and rows per history table.
final class BatchStatements {
    let db: Database
    /// nil where every row already carries its source's id (rolling up).
    let ids: SourceIds?
    let nowMs: Int64
    private(set) var addedIds: [String: Int64] = [:]
    private var prepared: [Int: Statement] = [:]
    private var addedRows: [String: Int] = [:]

    init(_ db: Database, ids: SourceIds? = nil, nowMs: Int64 = 0) {
        self.db = db
        self.ids = ids
        self.nowMs = nowMs
    }

    func statement(_ slot: Int, _ sql: @autoclosure () -> String) throws -> Statement {
        if let statement = prepared[slot] { return statement }
        let statement = try db.cachedStatement(sql: sql())
        prepared[slot] = statement
        return statement
    }

    func id(_ source: String) throws -> Int64 {
        guard let ids else { throw DatabaseError(resultCode: .SQLITE_MISUSE, message: "no source ids in this batch") }
        return try ids.id(source, db, nowMs: nowMs, added: &addedIds)
    }

    func counted(_ tier: String, _ rows: Int = 1) {
        addedRows[tier, default: 0] += rows
    }

    /// Adds the batch's rows to `tier_rows`, in its transaction.
    func writeRowCounts() throws {
        try RecordWriter.addRowCounts(addedRows, db)
    }
}

extension RecordWriter {
    static func insert(_ record: StoreRecord, _ statements: BatchStatements) throws {
        switch record {
        case .probe(let result):
            var row = RowBinder(
                try statements.statement(
                    0,
                    """
                    INSERT INTO raw_results (ts_ms, source_id, ok, category, reason, http_status, attempts, duration_us, bytes, message, fallback)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """))
            row.bind(result.timestampMs)
            row.bind(try statements.id(result.source))
            row.bind(result.ok)
            row.bind(result.failure?.category.rawValue)
            row.bind(result.failure?.reason)
            row.bind(result.httpStatus)
            row.bind(result.attempts)
            row.bind(Microseconds.from(seconds: result.durationSeconds))
            row.bind(result.bytes)
            row.bind(result.message)
            row.bind(result.fallbackInUse)
            try row.run(statements.db)
            statements.counted("raw")
        case .error(let error):
            try statements.statement(
                1,
                """
                INSERT INTO error_records (ts_ms, source, category, reason, http_status, curl_code, message, server_message, attempt, was_retried, retry_succeeded)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """
            ).execute(arguments: [
                error.tsMs, error.source, error.category, error.reason, error.httpStatus, error.curlCode.map { Int($0) }, error.message,
                error.serverMessage, error.attempt, error.wasRetried, error.retrySucceeded,
            ])
        case .transition(let source, let transition):
            try statements.statement(
                2,
                """
                INSERT INTO breaker_transitions (ts_ms, source, from_state, to_state, consecutive_failures, open_timeout_ms)
                VALUES (?, ?, ?, ?, ?, ?)
                """
            ).execute(arguments: [
                transition.atMs, source, transition.from.rawValue, transition.to.rawValue, transition.consecutiveFailures,
                transition.openTimeoutMs,
            ])
        case .outage(let source, let failed?):
            // The cause is the latest failure, except one while Lookout itself was offline (as
            // the registry keeps it): that one only counts.
            guard let failure = failed.failure else { return }
            try statements.statement(
                failed.duringOffline ? 9 : 7,
                """
                INSERT INTO outages (source_id, down_since_ms, failed_probes, last_failed_ms, category, reason, http_status, curl_code, detail, server_message)
                VALUES (?, ?, 1, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT(source_id) DO UPDATE SET failed_probes = failed_probes + 1\(failed.duringOffline ? "" : """
                    , last_failed_ms = excluded.last_failed_ms, category = excluded.category,
                      reason = excluded.reason, http_status = excluded.http_status, curl_code = excluded.curl_code,
                      detail = excluded.detail, server_message = excluded.server_message
                    """)
                """
            ).execute(arguments: [
                try statements.id(source), failed.timestampMs, failed.timestampMs, failure.category.rawValue, failure.reason,
                failure.httpStatus, failure.curlCode.map { Int($0) }, failure.detail, failure.serverMessage,
            ])
        case .forgetOutages:
            try statements.db.execute(sql: "DELETE FROM outages")
        case .outageEdge(let edge, let location):
            try SLAStore.write(edge, location: location, sourceId: try statements.id(edge.source), statements.db)
        case .outage(let source, nil):
            try statements.statement(8, "DELETE FROM outages WHERE source_id = ?").execute(arguments: [try statements.id(source)])
        case .breakerState(let source, let state, let atMs):
            try statements.statement(
                3,
                """
                INSERT INTO breaker_state (source, state, consecutive_failures, consecutive_successes, opened_at_ms, next_attempt_at_ms, open_count, open_timeout_ms, updated_at_ms)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT(source) DO UPDATE SET state = excluded.state, consecutive_failures = excluded.consecutive_failures,
                  consecutive_successes = excluded.consecutive_successes, opened_at_ms = excluded.opened_at_ms,
                  next_attempt_at_ms = excluded.next_attempt_at_ms, open_count = excluded.open_count,
                  open_timeout_ms = excluded.open_timeout_ms, updated_at_ms = excluded.updated_at_ms
                WHERE excluded.updated_at_ms >= breaker_state.updated_at_ms
                """
            ).execute(arguments: [
                source, state.state.rawValue, state.consecutiveFailures, state.consecutiveSuccesses, state.openedAtMs,
                state.nextAttemptAtMs, state.openCount, state.openTimeoutMs, atMs,
            ])
        }
    }

    /// Writes a minute's rollup: the row of that minute replaced when the writer knows it
    /// `stored`, otherwise a new row. A minute the writer does not know may be in the file all
    /// the same: a result that comes in after its minute left memory (a long call), or a
    /// minute from before a restart. Then the two are added, and the counts found are
    /// returned for the writer to add to its own.
    static func upsert(_ key: RollupKey, _ rollup: Rollup, stored: Bool, _ statements: BatchStatements) throws -> Rollup? {
        let sourceId = try statements.id(key.source)
        if !stored {
            if try insert(.minute, timeMs: key.minuteMs, sourceId: sourceId, rollup, statements, slot: 4) {
                statements.counted(HistoryTier.minute.name)
                return nil
            }
            // The insert was ignored: the row is there already.
            guard let found = try storedRollup(.minute, timeMs: key.minuteMs, sourceId: sourceId, statements) else { return nil }
            var merged = found
            merged.add(rollup)
            _ = try write(.minute, timeMs: key.minuteMs, sourceId: sourceId, merged, stored: true, statements, slot: 4)
            return found
        }
        if try write(.minute, timeMs: key.minuteMs, sourceId: sourceId, rollup, stored: true, statements, slot: 4) {
            statements.counted(HistoryTier.minute.name)  // the row had gone (pruned): written anew
        }
        return nil
    }

    static func storedRollup(_ tier: HistoryTier, timeMs: Int64, sourceId: Int64, _ statements: BatchStatements) throws -> Rollup? {
        let statement = try statements.statement(6, "SELECT * FROM \(tier.table) WHERE \(tier.time) = ? AND source_id = ?")
        return try Row.fetchOne(statement, arguments: [timeMs, sourceId]).map(rollup)
    }

    /// Inserts a rollup row of `tier`, or replaces the one with its key; true when it is new
    /// (for `tier_rows`). Tries the update first when the row is expected to exist (`stored`),
    /// the insert first otherwise: one statement when the expectation holds, two when not.
    static func write(
        _ tier: HistoryTier, timeMs: Int64, sourceId: Int64, _ rollup: Rollup, stored: Bool, _ statements: BatchStatements, slot: Int
    ) throws -> Bool {
        if stored {
            if try update(tier, timeMs: timeMs, sourceId: sourceId, rollup, statements, slot: slot + 1) { return false }
            return try insert(tier, timeMs: timeMs, sourceId: sourceId, rollup, statements, slot: slot)
        }
        if try insert(tier, timeMs: timeMs, sourceId: sourceId, rollup, statements, slot: slot) { return true }
        _ = try update(tier, timeMs: timeMs, sourceId: sourceId, rollup, statements, slot: slot + 1)
        return false
    }

    /// Inserts a rollup row unless one has its key; true when it did.
    static func insert(_ tier: HistoryTier, timeMs: Int64, sourceId: Int64, _ rollup: Rollup, _ statements: BatchStatements, slot: Int) throws -> Bool {
        let columns = "\(tier.time), source_id, probes, failures, retried, retry_succeeded, duration_us_sum, duration_us_max, latency"
        let statement = try statements.statement(slot, "INSERT OR IGNORE INTO \(tier.table) (\(columns)) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)")
        return try run(statement, timeMs: timeMs, sourceId: sourceId, rollup, statements.db)
    }

    /// Replaces the counts of the rollup row with this key; true when there was one.
    private static func update(_ tier: HistoryTier, timeMs: Int64, sourceId: Int64, _ rollup: Rollup, _ statements: BatchStatements, slot: Int) throws -> Bool {
        let statement = try statements.statement(
            slot,
            """
            UPDATE \(tier.table) SET probes = ?3, failures = ?4, retried = ?5, retry_succeeded = ?6, duration_us_sum = ?7,
              duration_us_max = ?8, latency = ?9 WHERE \(tier.time) = ?1 AND source_id = ?2
            """)
        return try run(statement, timeMs: timeMs, sourceId: sourceId, rollup, statements.db)
    }

    /// Binds a rollup row's columns in order and runs the statement; true when it changed a row.
    private static func run(_ statement: Statement, timeMs: Int64, sourceId: Int64, _ rollup: Rollup, _ db: Database) throws -> Bool {
        var row = RowBinder(statement)
        row.bind(timeMs)
        row.bind(sourceId)
        row.bind(rollup.probes)
        row.bind(rollup.failures)
        row.bind(rollup.retried)
        row.bind(rollup.retrySucceeded)
        row.bind(rollup.durationUsSum)
        row.bind(rollup.durationUsMax)
        row.bind(blob: LatencyBlob.encode(rollup.latencyBuckets))
        try row.run(db)
        return db.changesCount > 0
    }

    /// A rollup row's counts (the columns after the time and the source id).
    static func rollup(_ row: Row) -> Rollup {
        var rollup = Rollup()
        rollup.probes = row["probes"]
        rollup.failures = row["failures"]
        rollup.retried = row["retried"]
        rollup.retrySucceeded = row["retry_succeeded"]
        rollup.durationUsSum = row["duration_us_sum"]
        rollup.durationUsMax = row["duration_us_max"]
        rollup.latencyBuckets = LatencyBlob.decode(row["latency"])
        return rollup
    }

    /// Adds (or with negative counts, takes away) rows per history table in `tier_rows`.
    static func addRowCounts(_ rows: [String: Int], _ db: Database) throws {
        for (tier, count) in rows where count != 0 {
            try db.execute(sql: "UPDATE tier_rows SET rows = MAX(0, rows + ?) WHERE tier = ?", arguments: [count, tier])
        }
    }

    /// Rows per history table (raw, minute, hour, day), as `tier_rows` counts them.
    package static func rowCounts(_ database: LookoutDatabase) throws -> [String: Int] {
        try database.writer.read { db in
            var counts: [String: Int] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT tier, rows FROM tier_rows") { counts[row[0]] = row[1] }
            return counts
        }
    }
}
