import GRDB
import ResilientHTTP

/// Reads the breakers saved before a restart.
package enum BreakerStore {
    package static func load(_ database: LookoutDatabase) throws -> [String: PersistedBreaker] {
        try database.writer.read { db in
            var saved: [String: PersistedBreaker] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT * FROM breaker_state") {
                guard let state = BreakerState(rawValue: row["state"]) else { continue }
                saved[row["source"]] = PersistedBreaker(
                    state: state, consecutiveFailures: row["consecutive_failures"], consecutiveSuccesses: row["consecutive_successes"],
                    openedAtMs: row["opened_at_ms"], nextAttemptAtMs: row["next_attempt_at_ms"], openCount: row["open_count"],
                    openTimeoutMs: row["open_timeout_ms"])
            }
            return saved
        }
    }
}
