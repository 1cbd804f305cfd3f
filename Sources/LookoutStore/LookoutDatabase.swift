// LookoutStore: the SQLite side of Lookout — schema and migrations, the batched writer, queries.
import Foundation
import GRDB

/// The database file: opened in WAL mode and migrated to the current schema.
///
/// ```swift
/// let database = try LookoutDatabase(path: "lookout.sqlite")
/// ```
public final class LookoutDatabase: Sendable {
    /// GRDB's pool (file) or queue (`:memory:`); both serialize writes and let reads run alongside.
    public let writer: any DatabaseWriter
    public let path: String

    public init(path: String) throws {
        self.path = path
        var configuration = Configuration()
        configuration.busyMode = .timeout(5)
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
        }
        do {
            if path == ":memory:" {
                writer = try DatabaseQueue(configuration: configuration)
            } else {
                writer = try DatabasePool(path: path, configuration: configuration)
            }
            try LookoutDatabase.migrator.migrate(writer)
        } catch let error as DatabaseError where error.resultCode == .SQLITE_NOTADB || error.resultCode == .SQLITE_CORRUPT {
            throw StoreError.corrupt(path: path, detail: error.message ?? "\(error)")
        } catch let error as DatabaseError {
            throw StoreError.cannotOpen(path: path, detail: error.message ?? "\(error)")
        }
    }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: probe_results") { db in
            try db.create(table: "probe_results") { table in
                table.autoIncrementedPrimaryKey("id")
                table.column("ts_ms", .integer).notNull()
                table.column("source", .text).notNull()
                table.column("ok", .boolean).notNull()
                table.column("category", .text)
                table.column("reason", .text)
                table.column("http_status", .integer)
                table.column("attempts", .integer).notNull()
                table.column("duration_ms", .double).notNull()
                table.column("bytes", .integer).notNull()
                table.column("message", .text)
            }
            try db.create(index: "probe_results_source_ts", on: "probe_results", columns: ["source", "ts_ms"])
            try db.create(index: "probe_results_ts", on: "probe_results", columns: ["ts_ms"])
        }
        return migrator
    }
}

/// Why the store cannot be used, in words that tell the operator what to do.
public enum StoreError: Error, CustomStringConvertible {
    case corrupt(path: String, detail: String)
    case cannotOpen(path: String, detail: String)

    public var description: String {
        switch self {
        case .corrupt(let path, let detail):
            return "database \(path) is not a valid SQLite database (\(detail)); move it aside to start with an empty one, or restore it from a backup"
        case .cannotOpen(let path, let detail):
            return "cannot open database \(path): \(detail); check that its directory exists and is writable"
        }
    }
}
