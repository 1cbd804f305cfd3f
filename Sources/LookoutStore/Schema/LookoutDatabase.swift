// LookoutStore: the SQLite side of Lookout — schema and migrations, the batched writer, queries.
import Foundation
import GRDB
import GRDBSQLite
import Synchronization

/// The database file: opened in WAL mode and migrated to the current schema.
///
/// ```swift
/// let database = try LookoutDatabase(path: "lookout.sqlite")
/// ```
///
/// A file that cannot be written at start (read-only, no permission, a read-only mount) does not
/// stop Lookout: `openOrStandIn` serves from the file opened for reading, or where that cannot
/// be done an empty stand-in — every write fails as on a full disk, so records wait in memory — and `reopenWhenWritable` switches to the file
/// as soon as it can be opened for writing.
package final class LookoutDatabase: Sendable {
    /// GRDB's pool (file) or queue (`:memory:`); both serialize writes and let reads run alongside.
    package var writer: any DatabaseWriter { current.withLock { $0 } }
    package let path: String
    private let current: Mutex<any DatabaseWriter>
    private let standInReason = Mutex<String?>(nil)
    private let integrity = Mutex(Integrity.unchecked)

    /// Closes the connections once nothing writes any more (`serve` has stopped). The file first
    /// gets a checkpoint that moves every commit in the WAL into it and empties the WAL, so the
    /// file alone then holds everything; a stand-in (`:memory:`, or a file that cannot be
    /// written) has no WAL of its own to fold. Throws while a statement still runs.
    package func close() throws {
        let writer = self.writer
        if path != ":memory:", unwritableReason == nil {
            try writer.writeWithoutTransaction { db in _ = try db.checkpoint(.truncate) }
        }
        try writer.close()
    }

    /// What `PRAGMA quick_check` found.
    package enum Integrity: Sendable, Equatable {
        case unchecked
        case ok
        case damaged(String)
    }

    package init(path: String) throws {
        self.path = path
        standInReadTheFile = false
        current = Mutex(try LookoutDatabase.open(path))
    }

    /// Whether the stand-in read the file itself (opened for reading only): what was restored
    /// from it at start is the file's, and must not be taken back again once it opens.
    package let standInReadTheFile: Bool

    private init(path: String, standIn: any DatabaseWriter, reason: String, readsFile: Bool) {
        self.path = path
        standInReadTheFile = readsFile
        current = Mutex(standIn)
        standInReason.withLock { $0 = reason }
    }

    /// Opens `path`; when it cannot be written, an in-memory stand-in that refuses writes, so that
    /// probing and serving go on (the reason is in `unwritableReason`). A damaged file still throws.
    /// SQLite's soft heap limit: what its caches may hold, all connections together.
    package static let memoryCeilingBytes = 24 << 20

    /// The bytes SQLite holds now, all connections together (`lookout_db_memory_bytes`).
    package static var memoryUsedBytes: Int64 { sqlite3_memory_used() }

    package static func openOrStandIn(path: String) throws -> LookoutDatabase {
        do {
            return try LookoutDatabase(path: path)
        } catch StoreError.cannotOpen(_, let detail) {
            if let file = readOnly(path) { return LookoutDatabase(path: path, standIn: file, reason: detail, readsFile: true) }
            let standIn = try DatabaseQueue()
            try prepareSchema(standIn)
            // Not `PRAGMA query_only`: GRDB turns that off again after each read.
            standIn.add(transactionObserver: RefuseCommits(path: path), extent: .databaseLifetime)
            return LookoutDatabase(path: path, standIn: standIn, reason: detail, readsFile: false)
        }
    }

    /// The file opened for reading only, when it can be and already has the current schema: the
    /// stand-in then serves what the file holds (firing alerts, silences, maintenance, history),
    /// so nothing is taken back twice once it opens for writing. Every write to it fails as
    /// read-only, as on a full disk. On a read-only mount, where SQLite cannot make the WAL's
    /// shared-memory file, the file is read as immutable.
    private static func readOnly(_ path: String) -> (any DatabaseWriter)? {
        guard path != ":memory:", FileManager.default.isReadableFile(atPath: path) else { return nil }
        var configuration = Configuration()
        configuration.readonly = true
        configuration.busyMode = .timeout(5)
        var immutable = URLComponents()
        immutable.scheme = "file"
        immutable.path = path
        immutable.queryItems = [URLQueryItem(name: "immutable", value: "1")]
        for candidate in [path, immutable.string].compactMap({ $0 }) {
            guard let queue = try? DatabaseQueue(path: candidate, configuration: configuration),
                (try? queue.read({ db in try migrator.hasCompletedMigrations(db) })) == true
            else { continue }
            return queue
        }
        return nil
    }

    /// Why the file could not be opened for writing, while the stand-in serves; nil otherwise.
    package var unwritableReason: String? { standInReason.withLock { $0 } }

    /// Tries to open the file every `interval` while the stand-in serves; returns once it has
    /// switched to the file (or when cancelled).
    package func reopenWhenWritable(every interval: Duration = .seconds(5), opened: @Sendable () -> Void = {}) async {
        while unwritableReason != nil {
            do { try await Task.sleep(for: interval) } catch { return }
            guard let file = try? LookoutDatabase.open(path) else { continue }
            current.withLock { $0 = file }
            standInReason.withLock { $0 = nil }
            opened()
        }
    }

    /// The result of the last integrity check.
    package var integrityStatus: Integrity { integrity.withLock { $0 } }

    /// Runs `PRAGMA quick_check` (a read: the writer goes on meanwhile) and keeps the result.
    @discardableResult
    package func checkIntegrity() async -> Integrity {
        let result: Integrity
        do {
            let lines = try await writer.read { db in try String.fetchAll(db, sql: "PRAGMA quick_check(10)") }
            result = lines == ["ok"] ? .ok : .damaged(lines.joined(separator: "; "))
        } catch let error as DatabaseError where error.resultCode == .SQLITE_CORRUPT || error.resultCode == .SQLITE_NOTADB {
            result = .damaged(error.message ?? "\(error)")
        } catch {
            return integrityStatus  // cancelled, busy…: no verdict
        }
        integrity.withLock { $0 = result }
        return result
    }

    private static func open(_ path: String) throws -> any DatabaseWriter {
        var configuration = Configuration()
        configuration.busyMode = .timeout(5)
        configuration.prepareDatabase { db in
            // NORMAL is durable in WAL mode up to the last checkpointed commit. The history
            // tables are appended at their end (keyed by time, or without an index), so the
            // writer's batches touch few pages: 8 MiB of cache per connection is plenty.
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
            try db.execute(sql: "PRAGMA cache_size = -8192")
            // One ceiling for all of SQLite's memory, whatever the connections: past it SQLite
            // reuses its least recently used cache pages instead of growing (the pool's six
            // connections could otherwise hold 6 × 8 MiB of cache).
            try db.execute(sql: "PRAGMA soft_heap_limit = \(LookoutDatabase.memoryCeilingBytes)")
            try db.execute(sql: "PRAGMA journal_size_limit = 67108864")
        }
        do {
            let writer: any DatabaseWriter
            if path == ":memory:" {
                writer = try DatabaseQueue(configuration: configuration)
            } else {
                writer = try DatabasePool(path: path, configuration: configuration)
            }
            try LookoutDatabase.prepareSchema(writer)
            return writer
        } catch let error as DatabaseError where error.resultCode == .SQLITE_NOTADB || error.resultCode == .SQLITE_CORRUPT {
            throw StoreError.corrupt(path: path, detail: error.message ?? "\(error)")
        } catch let error as DatabaseError {
            throw StoreError.cannotOpen(path: path, detail: error.message ?? "\(error)")
        }
    }

    /// The database file's size in bytes (main file and WAL), 0 in memory.
    package var sizeBytes: Int64 {
        guard path != ":memory:" else { return 0 }
        let files = [path, path + "-wal"]
        return files.reduce(0) { total, file in
            let size = (try? FileManager.default.attributesOfItem(atPath: file)[.size] as? NSNumber)?.int64Value ?? 0
            return total + size
        }
    }
}

/// Rolls back every write to the stand-in as "read-only", so that nothing is taken as stored
/// that would be lost when the real file opens.
private final class RefuseCommits: TransactionObserver {
    let path: String

    init(path: String) {
        self.path = path
    }

    func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool { true }
    func databaseDidChange(with event: DatabaseEvent) {}
    func databaseWillCommit() throws {
        throw DatabaseError(resultCode: .SQLITE_READONLY, message: "\(path) cannot be opened for writing")
    }
    func databaseDidCommit(_ db: Database) {}
    func databaseDidRollback(_ db: Database) {}
}

extension StoreError {
    /// Whether `error` from a write may go away by itself (disk full, read-only file, a lock, an
    /// I/O error), so the write is worth keeping and retrying; false for errors that will repeat
    /// (a damaged page, a constraint).
    package static func isTransient(_ error: any Error) -> Bool {
        guard let error = error as? DatabaseError else { return false }
        switch error.resultCode {
        case .SQLITE_FULL, .SQLITE_READONLY, .SQLITE_BUSY, .SQLITE_LOCKED, .SQLITE_IOERR, .SQLITE_CANTOPEN, .SQLITE_PERM, .SQLITE_NOMEM:
            return true
        default:
            return false
        }
    }
}

/// Why the store cannot be used, in words that tell the operator what to do.
package enum StoreError: Error, CustomStringConvertible {
    case corrupt(path: String, detail: String)
    case cannotOpen(path: String, detail: String)

    package var description: String {
        switch self {
        case .corrupt(let path, let detail):
            return "database \(path) is not a valid SQLite database (\(detail)); move it aside to start with an empty one, or restore it from a backup"
        case .cannotOpen(let path, let detail):
            return "cannot open database \(path): \(detail); check that its directory exists and is writable"
        }
    }
}
