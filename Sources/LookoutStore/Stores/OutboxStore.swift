import GRDB
import LookoutCore

/// A notification waiting in the outbox.
package struct OutboxRow: Sendable, Equatable {
    package var id: Int64
    package var hook: String
    package var alertID: Int64
    package var payload: String
    package var attempts: Int
    package var nextAttemptAtMs: Int64
}

/// Reads and updates `alert_outbox` for the deliverer.
package struct OutboxStore: Sendable {
    let database: LookoutDatabase

    package init(database: LookoutDatabase) {
        self.database = database
    }

    /// The oldest undelivered row of `hook`: rows go out in order, one at a time.
    package func head(hook: String) throws -> OutboxRow? {
        try database.writer.read { db in
            try Row.fetchOne(
                db, sql: "SELECT * FROM alert_outbox WHERE hook = ? AND delivered_at_ms IS NULL AND set_aside_at_ms IS NULL ORDER BY id LIMIT 1",
                arguments: [hook]
            ).map(OutboxStore.row)
        }
    }

    package func markDelivered(_ id: Int64, nowMs: Int64) throws {
        try database.writer.write { db in
            try db.execute(
                sql: "UPDATE alert_outbox SET delivered_at_ms = ?, attempts = MIN(attempts, 1000000000) + 1, last_error = NULL WHERE id = ?",
                arguments: [nowMs, id])
        }
    }

    package func markFailed(_ id: Int64, error: String, nextAttemptAtMs: Int64) throws {
        try database.writer.write { db in
            try db.execute(
                sql: "UPDATE alert_outbox SET attempts = MIN(attempts, 1000000000) + 1, last_error = ?, next_attempt_at_ms = ? WHERE id = ?",
                arguments: [String(error.prefix(500)), nextAttemptAtMs, id])
        }
    }

    /// Undelivered rows per hook, in one read: those waiting for delivery, and those set aside
    /// (refused by their receiver too often, kept for an admin's retry).
    package func backlog() throws -> [String: (pending: Int, setAside: Int)] {
        try database.writer.read { db in
            var counts: [String: (pending: Int, setAside: Int)] = [:]
            let sql = """
                SELECT hook, SUM(set_aside_at_ms IS NULL) AS pending, SUM(set_aside_at_ms IS NOT NULL) AS aside
                FROM alert_outbox WHERE delivered_at_ms IS NULL GROUP BY hook
                """
            for row in try Row.fetchAll(db, sql: sql) { counts[row["hook"]] = (row["pending"] ?? 0, row["aside"] ?? 0) }
            return counts
        }
    }

    /// Undelivered rows per hook (set aside ones apart).
    package func pending() throws -> [String: Int] { try backlog().mapValues(\.pending).filter { $0.value > 0 } }

    /// Rows set aside per hook.
    package func setAside() throws -> [String: Int] { try backlog().mapValues(\.setAside).filter { $0.value > 0 } }

    /// Sets a row aside: no more tries until `retrySetAside`; the hook's later rows go on.
    package func setAside(_ id: Int64, error: String, nowMs: Int64) throws {
        try database.writer.write { db in
            try db.execute(
                sql: "UPDATE alert_outbox SET attempts = MIN(attempts, 1000000000) + 1, last_error = ?, set_aside_at_ms = ? WHERE id = ?",
                arguments: [String(error.prefix(500)), nowMs, id])
        }
    }

    /// Queues the hook's set-aside rows again, as new (attempts from 0); returns how many.
    @discardableResult
    package func retrySetAside(hook: String, nowMs: Int64) throws -> Int {
        try database.writer.write { db in
            try db.execute(
                sql:
                    "UPDATE alert_outbox SET set_aside_at_ms = NULL, attempts = 0, next_attempt_at_ms = ? WHERE hook = ? AND set_aside_at_ms IS NOT NULL AND delivered_at_ms IS NULL",
                arguments: [nowMs, hook])
            return db.changesCount
        }
    }

    /// A row as a damaged file may hold it: a value of the wrong type reads as the harmless
    /// default (the row is still delivered, or fails and is retried, in its turn), and counts and
    /// times are kept where no arithmetic on them can overflow.
    static func row(_ row: Row) -> OutboxRow {
        return OutboxRow(
            id: row.integer("id") ?? 0, hook: row.text("hook") ?? "", alertID: row.integer("alert_id") ?? 0, payload: row.text("payload") ?? "",
            attempts: row.boundedCount("attempts") ?? 0,
            nextAttemptAtMs: min(max(row.integer("next_attempt_at_ms") ?? 0, 0), Timestamp.writable.upperBound))
    }
}
