// LookoutStore: the SQLite side of Lookout — schema and migrations, the batched writer, queries.
import Foundation
import GRDB
import Synchronization

/// The database file: opened in WAL mode and migrated to the current schema.
///
/// ```swift
/// let database = try LookoutDatabase(path: "lookout.sqlite")
/// ```
///
/// A file that cannot be written at start (read-only, no permission, a read-only mount) does not
/// stop Lookout: `openOrStandIn` serves from an empty, query-only stand-in — every write fails
/// as on a full disk, so records wait in memory — and `reopenWhenWritable` switches to the file
/// as soon as it can be opened for writing.
package final class LookoutDatabase: Sendable {
    /// GRDB's pool (file) or queue (`:memory:`); both serialize writes and let reads run alongside.
    package var writer: any DatabaseWriter { current.withLock { $0 } }
    package let path: String
    private let current: Mutex<any DatabaseWriter>
    private let standInReason = Mutex<String?>(nil)
    private let integrity = Mutex(Integrity.unchecked)

    /// What `PRAGMA quick_check` found.
    package enum Integrity: Sendable, Equatable {
        case unchecked
        case ok
        case damaged(String)
    }

    package init(path: String) throws {
        self.path = path
        current = Mutex(try LookoutDatabase.open(path))
    }

    private init(path: String, standIn: any DatabaseWriter, reason: String) {
        self.path = path
        current = Mutex(standIn)
        standInReason.withLock { $0 = reason }
    }

    /// Opens `path`; when it cannot be written, an in-memory stand-in that refuses writes, so that
    /// probing and serving go on (the reason is in `unwritableReason`). A damaged file still throws.
    package static func openOrStandIn(path: String) throws -> LookoutDatabase {
        do {
            return try LookoutDatabase(path: path)
        } catch StoreError.cannotOpen(_, let detail) {
            let standIn = try DatabaseQueue()
            try migrator.migrate(standIn)
            // Not `PRAGMA query_only`: GRDB turns that off again after each read.
            standIn.add(transactionObserver: RefuseCommits(path: path), extent: .databaseLifetime)
            return LookoutDatabase(path: path, standIn: standIn, reason: detail)
        }
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
            // NORMAL is durable in WAL mode up to the last checkpointed commit; a bigger page
            // cache keeps index pages in memory for the writer's batches.
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
            try db.execute(sql: "PRAGMA cache_size = -32768")
            try db.execute(sql: "PRAGMA journal_size_limit = 67108864")
        }
        do {
            let writer: any DatabaseWriter
            if path == ":memory:" {
                writer = try DatabaseQueue(configuration: configuration)
            } else {
                writer = try DatabasePool(path: path, configuration: configuration)
            }
            try LookoutDatabase.migrator.migrate(writer)
            return writer
        } catch let error as DatabaseError where error.resultCode == .SQLITE_NOTADB || error.resultCode == .SQLITE_CORRUPT {
            throw StoreError.corrupt(path: path, detail: error.message ?? "\(error)")
        } catch let error as DatabaseError {
            throw StoreError.cannotOpen(path: path, detail: error.message ?? "\(error)")
        }
    }

    package static var migrator: DatabaseMigrator {
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
        migrator.registerMigration("v2: records, rollups, breakers, alerts, outbox") { db in
            try db.alter(table: "probe_results") { table in
                table.add(column: "fallback", .text)
            }
            try db.create(table: "probe_rollups") { table in LookoutDatabase.rollupColumns(table, time: "minute_ms") }
            try db.create(index: "probe_rollups_minute", on: "probe_rollups", columns: ["minute_ms"])
            try db.create(table: "error_records") { table in
                table.autoIncrementedPrimaryKey("id")
                table.column("ts_ms", .integer).notNull()
                table.column("source", .text).notNull()
                table.column("category", .text).notNull()
                table.column("reason", .text).notNull()
                table.column("http_status", .integer)
                table.column("curl_code", .integer)
                table.column("message", .text).notNull()
                table.column("server_message", .text)
                table.column("attempt", .integer).notNull()
                table.column("was_retried", .boolean).notNull()
                table.column("retry_succeeded", .boolean).notNull()
            }
            try db.create(index: "error_records_source_ts", on: "error_records", columns: ["source", "ts_ms"])
            try db.create(index: "error_records_ts", on: "error_records", columns: ["ts_ms"])
            try db.create(table: "breaker_transitions") { table in
                table.autoIncrementedPrimaryKey("id")
                table.column("ts_ms", .integer).notNull()
                table.column("source", .text).notNull()
                table.column("from_state", .text).notNull()
                table.column("to_state", .text).notNull()
                table.column("consecutive_failures", .integer).notNull()
                table.column("open_timeout_ms", .integer).notNull()
            }
            try db.create(index: "breaker_transitions_source_ts", on: "breaker_transitions", columns: ["source", "ts_ms"])
            try db.create(table: "breaker_state") { table in
                table.primaryKey("source", .text)
                table.column("state", .text).notNull()
                table.column("consecutive_failures", .integer).notNull()
                table.column("consecutive_successes", .integer).notNull()
                table.column("opened_at_ms", .integer)
                table.column("next_attempt_at_ms", .integer)
                table.column("open_count", .integer).notNull()
                table.column("open_timeout_ms", .integer).notNull()
                table.column("updated_at_ms", .integer).notNull()
            }
            try db.create(table: "alerts") { table in
                table.autoIncrementedPrimaryKey("id")
                table.column("fingerprint", .text).notNull()
                table.column("rule", .text).notNull()
                table.column("source", .text)
                table.column("severity", .text).notNull()
                table.column("state", .text).notNull()
                table.column("started_at_ms", .integer).notNull()
                table.column("resolved_at_ms", .integer)
                table.column("summary", .text).notNull()
                table.column("labels", .text).notNull()
                table.column("annotations", .text).notNull()
            }
            try db.create(index: "alerts_fingerprint", on: "alerts", columns: ["fingerprint", "state"])
            try db.create(table: "alert_outbox") { table in
                table.autoIncrementedPrimaryKey("id")
                table.column("hook", .text).notNull()
                table.column("alert_id", .integer).notNull().references("alerts", onDelete: .cascade)
                table.column("payload", .text).notNull()
                table.column("created_at_ms", .integer).notNull()
                table.column("attempts", .integer).notNull().defaults(to: 0)
                table.column("next_attempt_at_ms", .integer).notNull()
                table.column("delivered_at_ms", .integer)
                table.column("last_error", .text)
            }
            try db.create(index: "alert_outbox_pending", on: "alert_outbox", columns: ["hook", "delivered_at_ms", "id"])
            try db.create(table: "silences") { table in
                table.autoIncrementedPrimaryKey("id")
                table.column("matchers", .text).notNull()
                table.column("starts_at_ms", .integer).notNull()
                table.column("ends_at_ms", .integer).notNull()
                table.column("comment", .text).notNull()
                table.column("created_by", .text)
            }
        }
        migrator.registerMigration("v3: forget /probe targets") { db in
            // Before this version every /probe target got a breaker row, and its failures error
            // records, named `probe:URL` — secrets in the target's query included. Configured
            // sources cannot contain ":", so this removes only those.
            for table in ["breaker_state", "breaker_transitions", "error_records", "probe_results", "probe_rollups"] {
                try db.execute(sql: "DELETE FROM \(table) WHERE source LIKE 'probe:%'")
            }
        }
        migrator.registerMigration("v4: maintenance windows") { db in
            // Added through the admin API; the config's own windows live in the config.
            try db.create(table: "maintenance_windows") { table in
                table.autoIncrementedPrimaryKey("id")
                table.column("sources", .text).notNull()
                table.column("matchers", .text).notNull()
                table.column("starts_at_ms", .integer).notNull()
                table.column("ends_at_ms", .integer).notNull()
                table.column("note", .text).notNull()
                table.column("created_by", .text)
                // A recurring window: {"weekdays": [1, 7], "minute_of_day": 150, "duration_ms": …,
                // "time_zone": "Europe/Berlin"}; it recurs from starts_at until ends_at.
                table.column("recurring", .text)
            }
        }
        migrator.registerMigration("v5: announcements") { db in
            // Notes for the status page's readers posted through the admin API, each a timeline.
            try db.create(table: "announcements") { table in
                table.autoIncrementedPrimaryKey("id")
                table.column("title", .text).notNull()
                table.column("sources", .text).notNull()
                table.column("created_by", .text)
            }
            try db.create(table: "announcement_updates") { table in
                table.autoIncrementedPrimaryKey("id")
                table.column("announcement_id", .integer).notNull().references("announcements", onDelete: .cascade)
                table.column("at_ms", .integer).notNull()
                table.column("state", .text).notNull()
                table.column("message", .text).notNull()
            }
            try db.create(index: "announcement_updates_announcement", on: "announcement_updates", columns: ["announcement_id", "at_ms"])
        }
        migrator.registerMigration("v6: hourly and daily rollups") { db in
            // Finished hours of probe_rollups, and finished days of those (RollupTiers); the
            // columns are probe_rollups' with the hour or the day instead of the minute.
            for (table, time) in [("probe_rollups_hourly", "hour_ms"), ("probe_rollups_daily", "day_ms")] {
                // Keyed by time first: rolling up appends at the end, and a window over every
                // source reads one stretch of the table (90 days of 1,000 sources in a few ms);
                // one source's history goes through the (source, time) index.
                try db.create(table: table, options: .withoutRowID) { table in LookoutDatabase.rollupColumns(table, time: time, timeFirst: true) }
                try db.create(index: "\(table)_source", on: table, columns: ["source", time])
            }
            // Where each tier is complete up to; the finer rows are pruned only behind it. The
            // first step after this migration folds every existing minute row into the tiers.
            try db.create(table: "rollup_progress", options: .withoutRowID) { table in
                table.column("tier", .text).notNull().primaryKey()
                table.column("done_until_ms", .integer).notNull()
            }
        }
        return migrator
    }

    /// A rollup table's columns: per source and `time` (minute, hour or day), counts, durations
    /// and latency buckets (`Histogram.latencyBuckets` then +Inf, as text).
    static func rollupColumns(_ table: TableDefinition, time: String, timeFirst: Bool = false) {
        table.column(time, .integer).notNull()
        table.column("source", .text).notNull()
        table.column("probes", .integer).notNull()
        table.column("failures", .integer).notNull()
        table.column("retried", .integer).notNull()
        table.column("retry_succeeded", .integer).notNull()
        table.column("duration_ms_sum", .double).notNull()
        table.column("duration_ms_max", .double).notNull()
        table.column("latency_buckets", .text).notNull()
        table.primaryKey(timeFirst ? [time, "source"] : ["source", time])
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
