import GRDB
import LookoutCore
import ResilientHTTP

/// Reads the breakers saved before a restart.
package enum BreakerStore {
    /// The furthest ahead a saved breaker's next trial may be (the longest open period a config
    /// may set is far shorter).
    static let furthestTrialMs: Int64 = 366 * 86_400_000

    /// Every source's saved breaker. Rows are read as a damaged file may hold them: one with a
    /// value of the wrong type is left out; a time outside years 1970–9999 (the next trial: not
    /// between 1970 and a year after `nowMs`) is dropped, and counts are kept within a billion, so
    /// no arithmetic on them can overflow.
    package static func load(_ database: LookoutDatabase, nowMs: Int64 = Timestamp.nowMs()) throws -> [String: PersistedBreaker] {
        let nowMs = max(nowMs, 0)  // a clock before 1970 makes no range empty
        return try database.writer.read { db in
            var saved: [String: PersistedBreaker] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT * FROM breaker_state") {
                guard let source = row.text("source"),
                    let state = row.text("state").flatMap(BreakerState.init(rawValue:)),
                    let failures = row.boundedCount("consecutive_failures"), let successes = row.boundedCount("consecutive_successes"),
                    let openCount = row.boundedCount("open_count"), let openTimeoutMs = row.integer("open_timeout_ms")
                else { continue }
                saved[source] = PersistedBreaker(
                    state: state, consecutiveFailures: failures, consecutiveSuccesses: successes,
                    openedAtMs: row.integer("opened_at_ms").flatMap { (0...Timestamp.writable.upperBound).contains($0) ? $0 : nil },
                    nextAttemptAtMs: row.integer("next_attempt_at_ms").flatMap { (0...nowMs.addingClamped(furthestTrialMs)).contains($0) ? $0 : nil },
                    openCount: openCount, openTimeoutMs: max(0, openTimeoutMs))
            }
            return saved
        }
    }
}
