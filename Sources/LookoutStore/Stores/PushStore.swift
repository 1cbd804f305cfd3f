import GRDB
import LookoutCore

/// The `push_calls` table: each push source's last success and failure from its job, written at
/// each call (a job calls in rarely; the rate limit keeps a flood out) and read back at start.
package struct PushStore: Sendable {
    let database: LookoutDatabase

    package init(database: LookoutDatabase) {
        self.database = database
    }

    /// Keeps `entry` as `source`'s last calls.
    package func save(_ source: String, _ entry: PushLedger.Entry) throws {
        try database.writer.write { db in
            try db.execute(
                sql: """
                    INSERT INTO push_calls (source, last_success_ms, last_failure_ms, message, exit_status) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT(source) DO UPDATE SET last_success_ms = excluded.last_success_ms, last_failure_ms = excluded.last_failure_ms,
                    message = excluded.message, exit_status = excluded.exit_status
                    """,
                arguments: [source, entry.lastSuccessMs, entry.lastFailureMs, entry.message, entry.exitStatus])
        }
    }

    /// Every source's last calls. Rows are read as a damaged file may hold them: a time outside
    /// years 0–9999 or an exit status outside 0–255 is left out.
    package func load() throws -> [String: PushLedger.Entry] {
        try database.writer.read { db in
            var saved: [String: PushLedger.Entry] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT * FROM push_calls") {
                guard let source = row.text("source") else { continue }
                func time(_ column: String) -> Int64? { row.integer(column).flatMap { Timestamp.writable.contains($0) ? $0 : nil } }
                saved[source] = PushLedger.Entry(
                    lastSuccessMs: time("last_success_ms"), lastFailureMs: time("last_failure_ms"), message: row.text("message"),
                    exitStatus: row.integer("exit_status").flatMap { (0...255).contains($0) ? Int($0) : nil })
            }
            return saved
        }
    }
}
