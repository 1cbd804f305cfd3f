import Foundation
import GRDB
import LookoutCore

/// The `maintenance_windows` table: one-off windows added through the admin API, kept across
/// restarts.
package struct MaintenanceStore: Sendable {
    let database: LookoutDatabase

    package init(database: LookoutDatabase) {
        self.database = database
    }

    /// Stores a one-off window; returns its id.
    @discardableResult
    package func add(sources: [String], matchers: [String: String], startsAtMs: Int64, endsAtMs: Int64, note: String, createdBy: String?) throws -> Int64 {
        try database.writer.write { db in
            let sourcesText = String(decoding: try JSONSerialization.data(withJSONObject: sources), as: UTF8.self)
            try db.execute(
                sql: "INSERT INTO maintenance_windows (sources, matchers, starts_at_ms, ends_at_ms, note, created_by) VALUES (?, ?, ?, ?, ?, ?)",
                arguments: [sourcesText, AlertStore.json(matchers), startsAtMs, endsAtMs, note, createdBy])
            return db.lastInsertedRowID
        }
    }

    /// Windows that have not ended by `nowMs`, as the calendar takes them.
    package func current(nowMs: Int64) throws -> [MaintenanceWindow] {
        try database.writer.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM maintenance_windows WHERE ends_at_ms > ? ORDER BY id", arguments: [nowMs]).map { row in
                let id: Int64 = row["id"]
                let sources = (try? JSONSerialization.jsonObject(with: Data((row["sources"] as String).utf8)) as? [String]) ?? []
                return MaintenanceWindow(
                    name: "api-\(id)", sources: sources, matchers: AlertStore.dictionary(row["matchers"]),
                    schedule: .once(startMs: row["starts_at_ms"], endMs: row["ends_at_ms"]), note: row["note"], id: id)
            }
        }
    }

    /// Ends window `id` now; false when it does not exist or has already ended.
    package func end(_ id: Int64, nowMs: Int64) throws -> Bool {
        try database.writer.write { db in
            try db.execute(sql: "UPDATE maintenance_windows SET ends_at_ms = ? WHERE id = ? AND ends_at_ms > ?", arguments: [nowMs, id, nowMs])
            return db.changesCount > 0
        }
    }
}
