import GRDB
import LookoutCore

/// The statements behind each kind of record, prepared once per batch.
final class BatchStatements {
    let db: Database
    private var prepared: [Int: Statement] = [:]

    init(_ db: Database) {
        self.db = db
    }

    func statement(_ slot: Int, _ sql: @autoclosure () -> String) throws -> Statement {
        if let statement = prepared[slot] { return statement }
        let statement = try db.cachedStatement(sql: sql())
        prepared[slot] = statement
        return statement
    }
}

extension RecordWriter {
    static func insert(_ record: StoreRecord, _ statements: BatchStatements) throws {
        switch record {
        case .probe(let result):
            try statements.statement(0, """
                INSERT INTO probe_results (ts_ms, source, ok, category, reason, http_status, attempts, duration_ms, bytes, message, fallback)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """).execute(arguments: [
                result.timestampMs, result.source, result.ok, result.failure?.category.rawValue, result.failure?.reason,
                result.httpStatus, result.attempts, result.durationSeconds * 1000, result.bytes, result.message, result.fallbackInUse,
            ])
        case .error(let error):
            try statements.statement(1, """
                INSERT INTO error_records (ts_ms, source, category, reason, http_status, curl_code, message, server_message, attempt, was_retried, retry_succeeded)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """).execute(arguments: [
                error.tsMs, error.source, error.category, error.reason, error.httpStatus, error.curlCode.map { Int($0) }, error.message,
                error.serverMessage, error.attempt, error.wasRetried, error.retrySucceeded,
            ])
        case .transition(let source, let transition):
            try statements.statement(2, """
                INSERT INTO breaker_transitions (ts_ms, source, from_state, to_state, consecutive_failures, open_timeout_ms)
                VALUES (?, ?, ?, ?, ?, ?)
                """).execute(arguments: [
                transition.atMs, source, transition.from.rawValue, transition.to.rawValue, transition.consecutiveFailures,
                transition.openTimeoutMs,
            ])
        case .breakerState(let source, let state, let atMs):
            try statements.statement(3, """
                INSERT INTO breaker_state (source, state, consecutive_failures, consecutive_successes, opened_at_ms, next_attempt_at_ms, open_count, open_timeout_ms, updated_at_ms)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT(source) DO UPDATE SET state = excluded.state, consecutive_failures = excluded.consecutive_failures,
                  consecutive_successes = excluded.consecutive_successes, opened_at_ms = excluded.opened_at_ms,
                  next_attempt_at_ms = excluded.next_attempt_at_ms, open_count = excluded.open_count,
                  open_timeout_ms = excluded.open_timeout_ms, updated_at_ms = excluded.updated_at_ms
                WHERE excluded.updated_at_ms >= breaker_state.updated_at_ms
                """).execute(arguments: [
                source, state.state.rawValue, state.consecutiveFailures, state.consecutiveSuccesses, state.openedAtMs,
                state.nextAttemptAtMs, state.openCount, state.openTimeoutMs, atMs,
            ])
        }
    }

    static func upsert(_ key: RollupKey, _ rollup: Rollup, _ statements: BatchStatements) throws {
        try statements.statement(4, """
            INSERT OR REPLACE INTO probe_rollups (minute_ms, source, probes, failures, retried, retry_succeeded, duration_ms_sum, duration_ms_max, latency_buckets)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """).execute(arguments: [
            key.minuteMs, key.source, rollup.probes, rollup.failures, rollup.retried, rollup.retrySucceeded,
            rollup.durationMsSum, rollup.durationMsMax, rollup.latencyBuckets.map(String.init).joined(separator: ","),
        ])
    }
}
