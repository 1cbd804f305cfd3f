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

    /// Stores a window — one-off from `startsAtMs` to `endsAtMs`, or `recurring` between them —
    /// and returns its id.
    @discardableResult
    package func add(
        sources: [String], matchers: [String: String], startsAtMs: Int64, endsAtMs: Int64, recurring: MaintenanceWindow.Schedule? = nil,
        note: String, createdBy: String?
    ) throws -> Int64 {
        try database.writer.write { db in
            let sourcesText = String(decoding: try JSONSerialization.data(withJSONObject: sources), as: UTF8.self)
            var recurringText: String?
            if case .recurring(let weekdays, let minute, let duration, let zone)? = recurring {
                let object: [String: Any] = ["weekdays": weekdays.sorted(), "minute_of_day": minute, "duration_ms": duration, "time_zone": zone]
                recurringText = String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
            }
            try db.execute(
                sql: "INSERT INTO maintenance_windows (sources, matchers, starts_at_ms, ends_at_ms, note, created_by, recurring) VALUES (?, ?, ?, ?, ?, ?, ?)",
                arguments: [sourcesText, AlertStore.json(matchers), startsAtMs, endsAtMs, note, createdBy, recurringText])
            return db.lastInsertedRowID
        }
    }

    /// Windows that have not ended by `nowMs`, as the calendar takes them.
    package func current(nowMs: Int64) throws -> [MaintenanceWindow] {
        try database.writer.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM maintenance_windows WHERE ends_at_ms > ? ORDER BY id", arguments: [nowMs]).map { row in
                let id: Int64 = row["id"]
                let sources = (try? JSONSerialization.jsonObject(with: Data((row["sources"] as String).utf8)) as? [String]) ?? []
                var schedule = MaintenanceWindow.Schedule.once(startMs: row["starts_at_ms"], endMs: row["ends_at_ms"])
                if let text: String = row["recurring"],
                    let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
                    let weekdays = object["weekdays"] as? [Int], let minute = object["minute_of_day"] as? Int,
                    let duration = (object["duration_ms"] as? NSNumber)?.int64Value, let zone = object["time_zone"] as? String
                {
                    schedule = .recurring(weekdays: Set(weekdays), minuteOfDay: minute, durationMs: duration, timeZone: zone)
                }
                return MaintenanceWindow(
                    name: "api-\(id)", sources: sources, matchers: AlertStore.dictionary(row["matchers"]), schedule: schedule, note: row["note"],
                    id: id, activeFromMs: row["starts_at_ms"], activeUntilMs: row["ends_at_ms"])
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
