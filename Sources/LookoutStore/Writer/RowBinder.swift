import Foundation
import GRDB
import GRDBSQLite

/// Binds one row's values to a prepared statement and runs it through SQLite's C API. The
/// writer does this for every probe: GRDB's `StatementArguments` (an array of boxed values per
/// row) cost more than the insert itself.
///
/// ```swift
/// var row = RowBinder(statement)
/// row.bind(result.timestampMs)
/// row.bind(result.message)
/// try row.run(db)
/// ```
struct RowBinder {
    private let statement: SQLiteStatement
    private var index: Int32 = 0

    init(_ statement: Statement) {
        self.statement = statement.sqliteStatement
        sqlite3_reset(self.statement)
        sqlite3_clear_bindings(self.statement)
    }

    mutating func bind(_ value: Int64) {
        index += 1
        sqlite3_bind_int64(statement, index, value)
    }

    mutating func bind(_ value: Int) {
        bind(Int64(value))
    }

    mutating func bind(_ value: Bool) {
        bind(Int64(value ? 1 : 0))
    }

    mutating func bind(_ value: Int?) {
        guard let value else { return skip() }
        bind(Int64(value))
    }

    mutating func bind(_ value: String?) {
        guard let value else { return skip() }
        index += 1
        var text = value
        text.withUTF8 { bytes in
            guard let start = bytes.baseAddress, !bytes.isEmpty else {
                _ = sqlite3_bind_text(statement, index, "", 0, sqliteTransient)  // empty, not NULL
                return
            }
            start.withMemoryRebound(to: CChar.self, capacity: bytes.count) { chars in
                _ = sqlite3_bind_text(statement, index, chars, Int32(clamping: bytes.count), sqliteTransient)
            }
        }
    }

    mutating func bind(blob: Data) {
        index += 1
        blob.withUnsafeBytes { bytes in
            guard let start = bytes.baseAddress, !bytes.isEmpty else {
                _ = sqlite3_bind_zeroblob(statement, index, 0)  // empty, not NULL
                return
            }
            _ = sqlite3_bind_blob(statement, index, start, Int32(clamping: bytes.count), sqliteTransient)
        }
    }

    /// Leaves the next parameter NULL.
    mutating func skip() {
        index += 1
    }

    /// Runs the statement; throws SQLite's error (a full disk, a read-only file) as GRDB does.
    func run(_ db: Database) throws {
        let code = sqlite3_step(statement)
        sqlite3_reset(statement)
        guard code == SQLITE_DONE || code == SQLITE_ROW else {
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
        }
    }
}

/// SQLite copies the value before the bind returns.
private let sqliteTransient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
