import GRDB
import LookoutCore
import Synchronization

/// Source names and their ids in the `sources` table: the history tables store the id, a few
/// bytes, instead of the name in every row. An id is given once and kept: a rename in the
/// config (`renamed_from`) moves the name to the new one, so history follows the source, and a
/// source removed from the config keeps its row (marked `removed_at_ms`) for the history it has.
package final class SourceIds: Sendable {
    private let known = Mutex<[String: Int64]>([:])

    package init() {}

    /// The id of `name`, adding it to `sources` in this transaction when it is new. New ids go
    /// into `added` and are remembered only once the transaction commits (`remember`): a
    /// transaction that rolls back leaves no id behind that another name could be given.
    func id(_ name: String, _ db: Database, nowMs: Int64, added: inout [String: Int64]) throws -> Int64 {
        if let id = added[name] ?? known.withLock({ $0[name] }) { return id }
        try db.execute(sql: "INSERT INTO sources (name, first_seen_ms) VALUES (?, ?) ON CONFLICT (name) DO NOTHING", arguments: [name, nowMs])
        guard let id = try Int64.fetchOne(db, sql: "SELECT id FROM sources WHERE name = ?", arguments: [name]) else {
            throw DatabaseError(resultCode: .SQLITE_INTERNAL, message: "no id for source \(name)")
        }
        added[name] = id
        return id
    }

    func remember(_ added: [String: Int64]) {
        guard !added.isEmpty else { return }
        known.withLock { $0.merge(added) { _, new in new } }
    }

    /// Every id and its name (for reading the history tables back).
    package static func names(_ db: Database) throws -> [Int64: String] {
        var names: [Int64: String] = [:]
        let rows = try Row.fetchCursor(db, sql: "SELECT id, name FROM sources")
        while let row = try rows.next() { names[row[0]] = row[1] }
        return names
    }

    /// The id of `name`, nil when it has none.
    package static func id(of name: String, _ db: Database) throws -> Int64? {
        try Int64.fetchOne(db, sql: "SELECT id FROM sources WHERE name = ?", arguments: [name])
    }

    /// Brings `sources` in line with the config: a source whose `renamed_from` names a stored
    /// source takes over its id (and its error records and breaker history) unless its own name
    /// has history already; sources in the config are marked present, the others removed (their
    /// rows stay). Returns the renames made, old name first. Forgets every cached id.
    @discardableResult
    package func sync(_ database: LookoutDatabase, sources: [SourceConfig], nowMs: Int64) throws -> [(from: String, to: String)] {
        defer { known.withLock { $0.removeAll() } }
        return try database.writer.write { db in
            var renames: [(from: String, to: String)] = []
            for source in sources where !source.renamedFrom.isEmpty {
                guard try SourceIds.id(of: source.name, db) == nil else { continue }
                // The newest of the old names that has history.
                for old in source.renamedFrom.reversed() where try SourceIds.id(of: old, db) != nil {
                    try db.execute(sql: "UPDATE sources SET name = ? WHERE name = ?", arguments: [source.name, old])
                    for table in ["error_records", "breaker_transitions", "breaker_state"] {
                        try db.execute(sql: "UPDATE \(table) SET source = ? WHERE source = ?", arguments: [source.name, old])
                    }
                    renames.append((old, source.name))
                    break
                }
            }
            try db.execute(sql: "CREATE TEMP TABLE IF NOT EXISTS configured (name TEXT PRIMARY KEY)")
            try db.execute(sql: "DELETE FROM configured")
            // Every name in one statement, as a JSON array SQLite reads (`json_each`): a statement
            // per name took a tenth of a start at 10,000 sources.
            var names: [UInt8] = [UInt8(ascii: "[")]
            for (index, source) in sources.enumerated() {
                if index > 0 { names.append(UInt8(ascii: ",")) }
                JSONText.writeString(source.name, to: &names)
            }
            names.append(UInt8(ascii: "]"))
            try db.execute(
                sql: "INSERT OR IGNORE INTO configured (name) SELECT value FROM json_each(?)", arguments: [String(decoding: names, as: UTF8.self)])
            try db.execute(sql: "UPDATE sources SET removed_at_ms = NULL WHERE removed_at_ms IS NOT NULL AND name IN (SELECT name FROM configured)")
            try db.execute(
                sql: "UPDATE sources SET removed_at_ms = ? WHERE removed_at_ms IS NULL AND name NOT IN (SELECT name FROM configured)", arguments: [nowMs])
            try db.execute(sql: "DELETE FROM configured")
            return renames
        }
    }
}
