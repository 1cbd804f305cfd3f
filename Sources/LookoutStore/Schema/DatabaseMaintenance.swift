import Foundation
import GRDB

/// `lookout db backup` and `lookout db check`: read-only connections, safe while `serve` writes.
package enum DatabaseMaintenance {
    package struct Failure: Error, CustomStringConvertible {
        package var description: String
    }

    /// Opens `path` read-only (never creating or migrating it); a clear error when it is not there
    /// or not a database.
    static func openReadOnly(_ path: String) throws -> DatabaseQueue {
        guard FileManager.default.fileExists(atPath: path) else { throw Failure(description: "\(path) does not exist") }
        var configuration = Configuration()
        configuration.readonly = true
        configuration.busyMode = .timeout(10)
        do {
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            _ = try queue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master") }
            return queue
        } catch {
            throw Failure(description: "\(path) cannot be read as a SQLite database: \(error)")
        }
    }

    /// Copies `path` to `destination` with `VACUUM INTO`: one consistent snapshot (the WAL
    /// included, which a plain `cp` of the main file misses), compacted, written to a temporary
    /// name and renamed into place once `PRAGMA integrity_check` passes on it. Returns its size.
    @discardableResult
    package static func backup(_ path: String, to destination: String) throws -> Int64 {
        guard !FileManager.default.fileExists(atPath: destination) else {
            throw Failure(description: "\(destination) already exists: choose another name, or remove it first")
        }
        let source = try openReadOnly(path)
        let partial = destination + ".partial"
        try? FileManager.default.removeItem(atPath: partial)
        do {
            try source.writeWithoutTransaction { db in try db.execute(sql: "VACUUM INTO ?", arguments: [partial]) }
        } catch {
            try? FileManager.default.removeItem(atPath: partial)
            throw Failure(description: "cannot write \(destination): \(error)")
        }
        let problems = try check(partial)
        guard problems.isEmpty else {
            try? FileManager.default.removeItem(atPath: partial)
            throw Failure(description: "the copy failed its integrity check: \(problems.joined(separator: "; "))")
        }
        try FileManager.default.moveItem(atPath: partial, toPath: destination)
        return (try? FileManager.default.attributesOfItem(atPath: destination)[.size] as? NSNumber)?.int64Value ?? 0
    }

    /// `PRAGMA integrity_check` (the full one: every page, index and constraint): the problems
    /// it finds (at most 100), none when the file is sound.
    package static func check(_ path: String) throws -> [String] {
        let queue = try openReadOnly(path)
        do {
            let lines = try queue.read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check(100)") }
            return lines == ["ok"] ? [] : lines
        } catch {
            return ["\(error)"]
        }
    }
}
