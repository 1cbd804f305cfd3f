import Foundation
import GRDB
import LookoutCore

/// The `announcements` and `announcement_updates` tables: notes posted through the admin API,
/// kept across restarts.
package struct AnnouncementStore: Sendable {
    let database: LookoutDatabase

    package init(database: LookoutDatabase) {
        self.database = database
    }

    /// Stores a new announcement with its first update; returns its id.
    @discardableResult
    package func add(title: String, sources: [String], first: Announcement.Update, createdBy: String?) throws -> Int64 {
        try database.writer.write { db in
            let sourcesText = String(decoding: try JSONSerialization.data(withJSONObject: sources), as: UTF8.self)
            try db.execute(sql: "INSERT INTO announcements (title, sources, created_by) VALUES (?, ?, ?)", arguments: [title, sourcesText, createdBy])
            let id = db.lastInsertedRowID
            try AnnouncementStore.insert(first, into: id, db)
            return id
        }
    }

    /// Adds an update to announcement `id`; false when there is no such announcement.
    package func update(_ id: Int64, with update: Announcement.Update) throws -> Bool {
        try database.writer.write { db in
            guard try Int64.fetchOne(db, sql: "SELECT id FROM announcements WHERE id = ?", arguments: [id]) != nil else { return false }
            try AnnouncementStore.insert(update, into: id, db)
            return true
        }
    }

    /// Deletes announcement `id` (one posted by mistake); false when there is none.
    package func delete(_ id: Int64) throws -> Bool {
        try database.writer.write { db in
            try db.execute(sql: "DELETE FROM announcement_updates WHERE announcement_id = ?", arguments: [id])
            try db.execute(sql: "DELETE FROM announcements WHERE id = ?", arguments: [id])
            return db.changesCount > 0
        }
    }

    /// Announcements still open, and those updated since `sinceMs`; newest first. Rows are read
    /// as a damaged file may hold them: an update with a value of the wrong type, or a time
    /// outside years 1970–9999, is left out.
    package func recent(sinceMs: Int64) throws -> [Announcement] {
        let times = 0...Timestamp.writable.upperBound
        return try database.writer.read { db in
            var byID: [Int64: Announcement] = [:]
            var order: [Int64] = []
            let rows = try Row.fetchCursor(
                db,
                sql: """
                    SELECT a.id, a.title, a.sources, u.at_ms, u.state, u.message FROM announcements a
                    JOIN announcement_updates u ON u.announcement_id = a.id ORDER BY a.id, u.at_ms, u.id
                    """)
            while let row = try rows.next() {
                guard let id = row.integer("id"), let atMs = row.integer("at_ms"), times.contains(atMs) else { continue }
                let update = Announcement.Update(
                    atMs: atMs, state: row.text("state").flatMap(Announcement.State.init(rawValue:)) ?? .investigating, message: row.text("message") ?? "")
                if byID[id] == nil {
                    let sources = row.text("sources").flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String] } ?? []
                    byID[id] = Announcement(id: String(id), title: row.text("title") ?? "", sources: sources, updates: [])
                    order.append(id)
                }
                byID[id]?.updates.append(update)
            }
            return order.reversed().compactMap { byID[$0] }.filter { $0.isOpen || $0.updatedAtMs >= sinceMs }
        }
    }

    private static func insert(_ update: Announcement.Update, into id: Int64, _ db: Database) throws {
        try db.execute(
            sql: "INSERT INTO announcement_updates (announcement_id, at_ms, state, message) VALUES (?, ?, ?, ?)",
            arguments: [id, update.atMs, update.state.rawValue, update.message])
    }
}
