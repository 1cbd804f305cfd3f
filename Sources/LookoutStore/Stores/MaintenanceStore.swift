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

    /// Windows that have not ended by `nowMs`, as the calendar takes them. Rows are read as a
    /// damaged file may hold them: one with a value of the wrong type, or a schedule the API
    /// would refuse (a negative duration, weekday 8), is left out rather than trusted.
    package func current(nowMs: Int64) throws -> [MaintenanceWindow] {
        try database.writer.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM maintenance_windows WHERE ends_at_ms > ? ORDER BY id", arguments: [nowMs]).compactMap { row in
                guard let id = row.integer("id"), let startsAtMs = row.integer("starts_at_ms"), let endsAtMs = row.integer("ends_at_ms"), startsAtMs < endsAtMs
                else { return nil }
                let sources = row.text("sources").flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String] } ?? []
                var schedule = MaintenanceWindow.Schedule.once(startMs: startsAtMs, endMs: endsAtMs)
                if let recurring = row.text("recurring") {
                    guard let object = try? JSONSerialization.jsonObject(with: Data(recurring.utf8)) as? [String: Any],
                        let weekdays = object["weekdays"] as? [Int], let minute = object["minute_of_day"] as? Int,
                        let duration = (object["duration_ms"] as? NSNumber)?.int64Value, let zone = object["time_zone"] as? String
                    else { return nil }
                    schedule = .recurring(weekdays: Set(weekdays), minuteOfDay: minute, durationMs: duration, timeZone: zone)
                }
                guard schedule.isWellFormed else { return nil }
                return MaintenanceWindow(
                    name: "api-\(id)", sources: sources, matchers: row.text("matchers").map(AlertStore.dictionary) ?? [:], schedule: schedule,
                    note: row.text("note") ?? "", id: id, activeFromMs: startsAtMs, activeUntilMs: endsAtMs)
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
