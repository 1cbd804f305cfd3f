import Foundation
import GRDB
import Logging
import LookoutCore
import LookoutStore
import ResilientHTTP
import Testing

@Suite("LookoutStore")
struct StoreTests {
    func minuteRow(_ database: LookoutDatabase, _ minuteMs: Int64) throws -> Row {
        try #require(
            try database.writer.read { db in
                try Row.fetchOne(db, sql: "SELECT * FROM minute_rollups WHERE minute_ms = ?", arguments: [minuteMs])
            })
    }

    func temporaryPath() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("store-\(UUID().uuidString).sqlite").path
    }

    @Test func migratesAFreshFileInWALMode() throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let database = try LookoutDatabase(path: path)
        let (mode, tables) = try database.writer.read { db in
            (
                try String.fetchOne(db, sql: "PRAGMA journal_mode")!,
                try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")
            )
        }
        #expect(mode == "wal")
        // SPEC section 5's tables (the history ones are views over rows keyed by source id).
        for table in ["probe_results", "probe_rollups", "error_records", "breaker_transitions", "breaker_state", "alerts", "alert_outbox"] {
            #expect(tables.contains(table))
        }
        // Opening again finds the schema current and changes nothing.
        _ = try LookoutDatabase(path: path)
    }

    /// The outbox grows by a row per firing alert and Alertmanager hook a minute: a resolve's
    /// read of its hooks goes by index, and so does a delete by alert_id, the lookup SQLite's
    /// cascade makes when retention deletes an alert (query plans do not show cascades).
    @Test func anAlertsOutboxRowsAreFoundByIndex() throws {
        let database = try LookoutDatabase(path: ":memory:")
        let plans = try database.writer.read { db in
            try ["SELECT DISTINCT hook FROM alert_outbox WHERE alert_id = 1", "DELETE FROM alert_outbox WHERE alert_id = 1"].map { sql in
                try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql).map { $0["detail"] as String }.joined(separator: "; ")
            }
        }
        for plan in plans {
            #expect(plan.contains("USING INDEX alert_outbox_alert") || plan.contains("USING COVERING INDEX alert_outbox_alert"), "\(plan)")
        }
    }

    @Test func writesQueuedResultsInOneFlush() throws {
        let database = try LookoutDatabase(path: ":memory:")
        let writer = RecordWriter(database: database, logger: Logger(label: "test"))
        writer.record(ProbeResult(source: "a", timestampMs: 1000, ok: true, httpStatus: 200, durationSeconds: 0.25, bytes: 11))
        writer.record(
            ProbeResult(
                source: "b", timestampMs: 2000, ok: false,
                failure: Failure(category: .serverError, reason: "http_503", httpStatus: 503), httpStatus: 503))
        #expect(writer.pendingCount == 3)  // b's failure also begins its stored outage
        writer.flush()
        #expect(writer.pendingCount == 0)
        let rows = try database.writer.read { db in
            try Row.fetchAll(db, sql: "SELECT source, ok, category, reason, http_status, duration_ms, bytes, message FROM probe_results ORDER BY ts_ms")
        }
        #expect(rows.count == 2)
        #expect(rows[0]["source"] as String? == "a")
        #expect(rows[0]["ok"] as Bool? == true)
        #expect(rows[0]["duration_ms"] as Double? == 250)
        #expect(rows[0]["bytes"] as Int? == 11)
        #expect(rows[1]["category"] as String? == "server_error")
        #expect(rows[1]["reason"] as String? == "http_503")
        #expect(rows[1]["http_status"] as Int? == 503)
        #expect((rows[1]["message"] as String?)?.contains("503") == true)
    }

    @Test func aCorruptFileGivesAClearErrorNamingIt() throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data(repeating: 0x42, count: 8192).write(to: URL(fileURLWithPath: path))
        let error = #expect(throws: StoreError.self) { try LookoutDatabase(path: path) }
        let text = error.map { "\($0)" } ?? ""
        #expect(text.contains(path))
        #expect(text.contains("not a valid SQLite database"))
    }

    @Test func recordsFailedAttemptsBreakerChangesAndRollups() throws {
        let database = try LookoutDatabase(path: ":memory:")
        let writer = RecordWriter(database: database, logger: Logger(label: "test"))
        let failure = Failure(category: .serverError, reason: "http_503", httpStatus: 503, serverMessage: "busy")
        let outcome = CallOutcome(
            upstream: "acme", url: "http://127.0.0.1/", startedAtMs: 60_000, final: nil, failure: nil,
            attempts: [
                AttemptRecord(number: 1, startedAtMs: 60_000, failure: failure, httpStatus: 503, durationSeconds: 0.01, retried: true),
                AttemptRecord(number: 2, startedAtMs: 62_000, failure: nil, httpStatus: 200, durationSeconds: 0.01),
            ],
            durationSeconds: 2.1, upgradedToHTTPS: false, gaveUp: nil, cancelled: false,
            breaker: PersistedBreaker(
                state: .closed, consecutiveFailures: 0, consecutiveSuccesses: 0, openedAtMs: nil, nextAttemptAtMs: nil, openCount: 0, openTimeoutMs: 60_000))
        writer.handle(.callFinished(outcome))
        let opened = PersistedBreaker(
            state: .open, consecutiveFailures: 5, consecutiveSuccesses: 0, openedAtMs: 70_000, nextAttemptAtMs: 130_000, openCount: 1, openTimeoutMs: 60_000)
        writer.handle(
            .breakerTransition(
                upstream: "acme", BreakerTransition(from: .closed, to: .open, atMs: 70_000, consecutiveFailures: 5, openTimeoutMs: 60_000), state: opened))
        writer.record(ProbeResult(source: "acme", timestampMs: 60_000, ok: true, attempts: 2, durationSeconds: 2.1))
        writer.record(ProbeResult(source: "acme", timestampMs: 61_000, ok: false, failure: failure, durationSeconds: 0.002))
        writer.flush()

        let errors = try database.writer.read { db in try Row.fetchAll(db, sql: "SELECT * FROM error_records") }
        #expect(errors.count == 1)
        #expect(errors[0]["reason"] as String? == "http_503")
        #expect(errors[0]["was_retried"] as Bool? == true)
        #expect(errors[0]["retry_succeeded"] as Bool? == true)
        #expect(errors[0]["server_message"] as String? == "busy")
        #expect((errors[0]["message"] as String?)?.hasPrefix("Error while probing acme") == true)
        let transitions = try database.writer.read { db in try Row.fetchAll(db, sql: "SELECT * FROM breaker_transitions") }
        #expect(transitions.count == 1 && transitions[0]["to_state"] as String? == "open")
        #expect(try BreakerStore.load(database)["acme"] == opened)
        let rollup = try #require(try database.writer.read { db in try Row.fetchOne(db, sql: "SELECT * FROM probe_rollups") })
        #expect(rollup["minute_ms"] as Int64? == 60_000)
        #expect(rollup["probes"] as Int? == 2)
        #expect(rollup["failures"] as Int? == 1)
        #expect(rollup["retried"] as Int? == 1)
        #expect(rollup["retry_succeeded"] as Int? == 1)
    }

    /// A result filed under a minute that already left the writer's memory (a long call ends
    /// minutes after it started; a minute from before a restart) adds to that minute's row.
    @Test func aLateResultAddsToItsMinuteInsteadOfReplacingIt() throws {
        let database = try LookoutDatabase(path: ":memory:")
        let failure = Failure(category: .serverError, reason: "http_503", httpStatus: 503)
        let minute = (Timestamp.nowMs() / 60_000 - 10) * 60_000  // ten minutes ago: not kept in memory
        let writer = RecordWriter(database: database, logger: Logger(label: "test"))
        writer.record(ProbeResult(source: "acme", timestampMs: minute + 1_000, ok: true, durationSeconds: 0.2, latencySeconds: 0.2))
        writer.record(ProbeResult(source: "acme", timestampMs: minute + 2_000, ok: false, failure: failure, durationSeconds: 0.3, latencySeconds: 0.3))
        writer.flush()
        writer.record(ProbeResult(source: "acme", timestampMs: minute + 30_000, ok: false, failure: failure, durationSeconds: 9, latencySeconds: 9))
        writer.flush()
        writer.record(ProbeResult(source: "acme", timestampMs: minute + 31_000, ok: true, durationSeconds: 0.1, latencySeconds: 0.1))
        writer.flush()
        let restarted = RecordWriter(database: database, logger: Logger(label: "test"))
        try restarted.loadRecentRollups()
        restarted.record(ProbeResult(source: "acme", timestampMs: minute + 40_000, ok: true, durationSeconds: 0.1, latencySeconds: 0.1))
        restarted.flush()

        let row = try minuteRow(database, minute)
        #expect(row["probes"] as Int? == 5)
        #expect(row["failures"] as Int? == 2)
        #expect(row["duration_us_max"] as Int64? == 9_000_000)
        #expect(row["duration_us_sum"] as Int64? == 9_700_000)
        #expect(LatencyBlob.decode(row["latency"]).reduce(0, +) == 5)
        #expect(try RecordWriter.rowCounts(database)["minute"] == 1)
    }

    /// A result recorded after a restart but before the writer loads the recent minutes is
    /// added to the stored minute, not replaced by it.
    @Test func aResultRecordedBeforeTheRecentMinutesLoadIsKept() throws {
        let database = try LookoutDatabase(path: ":memory:")
        let minute = Timestamp.nowMs() / 60_000 * 60_000
        let before = RecordWriter(database: database, logger: Logger(label: "test"))
        before.record(ProbeResult(source: "acme", timestampMs: minute, ok: true, durationSeconds: 0.1))
        before.record(ProbeResult(source: "acme", timestampMs: minute + 1, ok: true, durationSeconds: 0.1, latencySeconds: 0.1))
        before.flush()
        let restarted = RecordWriter(database: database, logger: Logger(label: "test"))
        restarted.record(ProbeResult(source: "acme", timestampMs: minute + 2, ok: false, durationSeconds: 0.1, latencySeconds: 0.1))
        try restarted.loadRecentRollups()
        restarted.flush()
        restarted.record(ProbeResult(source: "acme", timestampMs: minute + 3, ok: true, durationSeconds: 0.1, latencySeconds: 0.1))
        restarted.flush()
        let row = try minuteRow(database, minute)
        #expect(row["probes"] as Int? == 4)
        #expect(row["failures"] as Int? == 1)
    }

    /// Counts read back from a damaged or hostile row saturate instead of trapping.
    @Test func aStoredRowAtTheLimitSaturates() throws {
        let database = try LookoutDatabase(path: ":memory:")
        let minute = Timestamp.nowMs() / 60_000 * 60_000
        let before = RecordWriter(database: database, logger: Logger(label: "test"))
        before.record(ProbeResult(source: "acme", timestampMs: minute, ok: true, durationSeconds: 0.1))
        before.flush()
        try database.writer.write { db in
            try db.execute(sql: "UPDATE minute_rollups SET probes = ?, failures = ?", arguments: [Int64.max, Int64.max])
        }
        let writer = RecordWriter(database: database, logger: Logger(label: "test"))
        try writer.loadRecentRollups()
        writer.record(ProbeResult(source: "acme", timestampMs: minute + 1, ok: false, durationSeconds: 0.1, latencySeconds: 0.1))
        writer.flush()
        let row = try minuteRow(database, minute)
        #expect(row["probes"] as Int64? == .max)
        #expect(row["failures"] as Int64? == .max)
    }

    @Test func aFullDiskKeepsRecordsQueuedUntilSpaceReturns() throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let database = try LookoutDatabase(path: path)
        let writer = RecordWriter(database: database, logger: Logger(label: "test"))
        // No free pages left over from the migrations: the file is full at its size.
        try database.writer.writeWithoutTransaction { db in try db.execute(sql: "VACUUM") }
        let pages = try database.writer.read { db in try Int.fetchOne(db, sql: "PRAGMA page_count")! }
        // SQLite's max_page_count makes the file "full" at its current size.
        try database.writer.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA max_page_count = \(pages)") }
        let message = String(repeating: "x", count: 2000)
        for index in 0..<200 {
            writer.record(
                ProbeResult(
                    source: "s", timestampMs: Int64(index), ok: false,
                    failure: Failure(category: .serverError, reason: "http_500", detail: message)))
        }
        writer.flush()
        #expect(writer.status.lastError?.contains("full") == true)
        #expect(writer.status.failedFlushes == 1)
        #expect(writer.pendingCount == 400)  // each failed probe and its step of the source's outage
        writer.flush()
        #expect(writer.status.failedFlushes == 2)

        try database.writer.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA max_page_count = 1073741823") }
        writer.flush()
        #expect(writer.status.lastError == nil)
        #expect(writer.pendingCount == 0)
        let count = try database.writer.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM probe_results")! }
        #expect(count == 200)
    }

    /// Past the queue's bound on a full disk, an outage's end outlives the failures queued after
    /// it: dropped, it would leave the stored outage for a restart to take back as still down.
    @Test func anOutagesEndOutlivesTheFailuresQueuedAfterItOnAFullDisk() throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let database = try LookoutDatabase(path: path)
        let writer = RecordWriter(database: database, logger: Logger(label: "test"), maxQueued: 100)
        let failure = Failure(category: .serverError, reason: "http_500", detail: String(repeating: "x", count: 2000))
        writer.record(ProbeResult(source: "down", timestampMs: 1, ok: false, failure: failure))
        writer.flush()
        func outages() throws -> [String] {
            try database.writer.read { db in try String.fetchAll(db, sql: "SELECT s.name FROM outages o JOIN sources s ON s.id = o.source_id ORDER BY s.name") }
        }
        #expect(try outages() == ["down"])

        try database.writer.writeWithoutTransaction { db in try db.execute(sql: "VACUUM") }
        let pages = try database.writer.read { db in try Int.fetchOne(db, sql: "PRAGMA page_count")! }
        try database.writer.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA max_page_count = \(pages)") }
        writer.record(ProbeResult(source: "down", timestampMs: 2, ok: true))
        for index in 0..<200 { writer.record(ProbeResult(source: "x", timestampMs: 3 + Int64(index), ok: false, failure: failure)) }
        writer.flush()
        #expect(writer.status.lastError?.contains("full") == true)
        #expect(writer.pendingCount <= 100)

        try database.writer.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA max_page_count = 1073741823") }
        writer.flush()
        #expect(writer.status.lastError == nil)
        #expect(try outages() == ["x"])
    }
}
