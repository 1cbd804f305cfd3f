import Foundation
import GRDB
import Logging
import LookoutCore
import LookoutStore
import ResilientHTTP
import TestSupport
import Testing

/// A database that cannot be written at start, or that is damaged (issue "Hostile input…",
/// rows 10 and 13): Lookout goes on, says why, and writes once it can.
@Suite("damaged and unwritable databases")
struct DamagedStoreTests {
    func temporaryDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("store-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    /// Closing a file folds the WAL into it: a copy of the file alone holds every row. A
    /// stand-in closes without a checkpoint to refuse (nothing to fold, nothing to warn of).
    @Test func closingLeavesTheFileWholeAndAStandInClosesQuietly() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("lookout.sqlite").path
        let database = try LookoutDatabase.openOrStandIn(path: path)
        let writer = RecordWriter(database: database, logger: Logger(label: "test"))
        for second in 1...50 {
            writer.record(ProbeResult(source: "a", timestampMs: Int64(second) * 1000, ok: true, httpStatus: 200, durationSeconds: 0.1, bytes: 1))
        }
        writer.flush()
        // The WAL's size: 0 once it is emptied, or gone.
        let wal = { ((try? FileManager.default.attributesOfItem(atPath: path + "-wal"))?[.size] as? Int) ?? 0 }
        #expect(wal() > 0)
        // Another connection still open (as in serve, where closing alone left the WAL whole):
        // the checkpoint empties it all the same.
        let other = try DatabaseQueue(path: path)
        #expect(try await other.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM probe_results") } == 50)
        try database.close()
        #expect(wal() == 0)
        let copy = directory.appendingPathComponent("copy.sqlite").path
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        #expect(try await DatabaseQueue(path: copy).read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM probe_results") } == 50)
        try other.close()

        let standIn = try LookoutDatabase.openOrStandIn(path: directory.appendingPathComponent("later/lookout.sqlite").path)
        #expect(standIn.unwritableReason != nil)
        try standIn.close()
        try LookoutDatabase.openOrStandIn(path: ":memory:").close()
    }

    @Test func anUnwritableFileGetsAStandInThatRefusesWritesUntilTheFileOpens() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // A directory that does not exist yet: nothing can be created there until it does.
        let path = directory.appendingPathComponent("later/lookout.sqlite").path
        let database = try LookoutDatabase.openOrStandIn(path: path)
        #expect(database.unwritableReason != nil)
        let writer = RecordWriter(database: database, logger: Logger(label: "test"))
        writer.record(ProbeResult(source: "a", timestampMs: 1000, ok: true, httpStatus: 200, durationSeconds: 0.1, bytes: 1))
        writer.flush()
        #expect(writer.pendingCount == 1, "a write to the stand-in must fail, not vanish")
        #expect(writer.status.lastError == "\(path) is read-only")
        #expect(try await database.writer.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM probe_results") } == 0)

        try FileManager.default.createDirectory(atPath: directory.appendingPathComponent("later").path, withIntermediateDirectories: true)
        await database.reopenWhenWritable(every: .milliseconds(10))
        #expect(database.unwritableReason == nil)
        writer.flush()
        #expect(writer.pendingCount == 0)
        #expect(try await database.writer.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM probe_results") } == 1)
    }

    /// A file on a read-only mount holding two silences (issue "Nothing told is lost…",
    /// row 12): the stand-in reads the file, so the API lists them while it cannot be written,
    /// writes fail as read-only, and once the mount is writable the file itself opens.
    @Test func aReadOnlyFileIsReadUntilItCanBeWritten() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(try runToolBlocking("/bin/mount", ["-t", "tmpfs", "-o", "size=16m", "tmpfs", directory.path]).status == 0)
        defer { _ = try? runToolBlocking("/bin/umount", ["-l", directory.path]) }
        let path = directory.appendingPathComponent("lookout.sqlite").path
        let now = Timestamp.nowMs()
        do {
            let file = try LookoutDatabase(path: path)
            let store = AlertStore(database: file)
            _ = try store.add(Silence(matchers: ["source": "a"], startsAtMs: now - 1000, endsAtMs: now + 3_600_000, comment: "one"))
            _ = try store.add(Silence(matchers: ["source": "b"], startsAtMs: now - 1000, endsAtMs: now + 3_600_000, comment: "two"))
        }
        #expect(try runToolBlocking("/bin/mount", ["-o", "remount,ro", directory.path]).status == 0)

        let database = try LookoutDatabase.openOrStandIn(path: path)
        #expect(database.unwritableReason != nil)
        #expect(database.standInReadTheFile)
        #expect(try AlertStore(database: database).activeSilences(nowMs: now).map(\.comment).sorted() == ["one", "two"])
        let writer = RecordWriter(database: database, logger: Logger(label: "test"))
        writer.record(ProbeResult(source: "a", timestampMs: now, ok: true, httpStatus: 200, durationSeconds: 0.1, bytes: 1))
        writer.flush()
        #expect(writer.pendingCount == 1, "a write to the read-only file must fail, not vanish")

        #expect(try runToolBlocking("/bin/mount", ["-o", "remount,rw", directory.path]).status == 0)
        await database.reopenWhenWritable(every: .milliseconds(10))
        #expect(database.unwritableReason == nil)
        writer.flush()
        #expect(writer.pendingCount == 0)
        #expect(try AlertStore(database: database).activeSilences(nowMs: now).count == 2)
    }

    /// A disk full for long: past the bound the oldest raw results go, a tenth of the bound at a
    /// time, and are counted; the minute rollups still count every probe, and an outage's end
    /// queued before the overflow is still written (a stale row would be taken back by a restart).
    @Test func pastTheQueueBoundRawResultsGoFirstAndRollupsCountEveryProbe() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("later/lookout.sqlite").path
        let database = try LookoutDatabase.openOrStandIn(path: path)
        let writer = RecordWriter(database: database, logger: Logger(label: "test"), maxQueued: 100)
        let minuteMs: Int64 = 1_800_000_000_000
        let failure = Failure(category: .serverError, reason: "http_503", httpStatus: 503)
        writer.record(ProbeResult(source: "down", timestampMs: minuteMs, ok: false, failure: failure))
        writer.record(ProbeResult(source: "down", timestampMs: minuteMs + 1, ok: true))
        writer.record(ProbeResult(source: "later", timestampMs: minuteMs + 2, ok: false, failure: failure))
        for index in 0..<997 { writer.record(ProbeResult(source: "s\(index % 10)", timestampMs: minuteMs + 3 + Int64(index), ok: true)) }
        writer.flush()
        // 1,000 probes and three outage records: the queue never held more than 100.
        #expect(writer.pendingCount <= 100)
        #expect(writer.pendingCount >= 90)
        #expect(Int(writer.status.droppedRecords) == 1_003 - writer.pendingCount)

        try FileManager.default.createDirectory(atPath: directory.appendingPathComponent("later").path, withIntermediateDirectories: true)
        await database.reopenWhenWritable(every: .milliseconds(10))
        let kept = writer.pendingCount
        writer.flush()
        #expect(writer.pendingCount == 0)
        let (raw, rolledUp, outages) = try await database.writer.read { db in
            (
                try Int.fetchOne(db, sql: "SELECT count(*) FROM raw_results") ?? -1,
                try Int.fetchOne(db, sql: "SELECT sum(probes) FROM minute_rollups") ?? -1,
                try String.fetchAll(db, sql: "SELECT s.name FROM outages o JOIN sources s ON s.id = o.source_id")
            )
        }
        #expect(raw == kept - 3)
        #expect(rolledUp == 1_000)
        #expect(outages == ["later"])
    }

    /// A disk full for hours: the minutes waiting in memory more than an hour old are folded
    /// into their hour's first minute, so memory stays near an hour of minutes, and every probe
    /// is still counted once the disk has space again.
    @Test func minutesWaitingForHoursAreFoldedIntoTheirHourAndAllCounted() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("later/lookout.sqlite").path
        let database = try LookoutDatabase.openOrStandIn(path: path)
        let writer = RecordWriter(database: database, logger: Logger(label: "test"))
        // Five sources probed every minute for the last four hours, while nothing can be written.
        let nowMs = Timestamp.nowMs()
        let startMs = nowMs - nowMs % HealthWindow.hour - 3 * HealthWindow.hour
        var probes = 0
        for minuteMs in stride(from: startMs, to: nowMs, by: Int(HealthWindow.minute)) {
            for source in 0..<5 {
                writer.record(ProbeResult(source: "s\(source)", timestampMs: minuteMs + 1_000, ok: source != 0, durationSeconds: 0.01))
                probes += 1
            }
        }
        writer.flush()
        #expect(writer.status.lastError != nil)
        // The last hour's minutes, and one for each hour before it.
        let waiting = writer.pendingRollups
        #expect(waiting <= 5 * (61 + 4))
        #expect(waiting >= 5 * 60)

        try FileManager.default.createDirectory(atPath: directory.appendingPathComponent("later").path, withIntermediateDirectories: true)
        await database.reopenWhenWritable(every: .milliseconds(10))
        writer.flush()
        #expect(writer.status.lastError == nil)
        let (total, failures, rows) = try await database.writer.read { db in
            (
                try Int.fetchOne(db, sql: "SELECT sum(probes) FROM minute_rollups") ?? -1,
                try Int.fetchOne(db, sql: "SELECT sum(failures) FROM minute_rollups") ?? -1,
                try Int.fetchOne(db, sql: "SELECT count(*) FROM minute_rollups") ?? -1
            )
        }
        #expect(total == probes)
        #expect(failures == probes / 5)
        #expect(rows == waiting)
    }

    @Test func randomBytesInTheMiddleAreFoundByTheIntegrityCheck() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("lookout.sqlite").path
        do {
            let database = try LookoutDatabase(path: path)
            #expect(await database.checkIntegrity() == .ok)
            try await database.writer.write { db in
                for index in 0..<20_000 {
                    try db.execute(
                        sql: "INSERT INTO raw_results (ts_ms, source_id, ok, attempts, duration_us, bytes, message) VALUES (?, ?, 1, 1, 1500, 10, ?)",
                        arguments: [index, index % 50, "message \(index)"])
                }
            }
            try await database.writer.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        }
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        let size = try handle.seekToEnd()
        try handle.seek(toOffset: size / 2)
        var generator = SystemRandomNumberGenerator()
        try handle.write(contentsOf: Data((0..<16_384).map { _ in UInt8.random(in: 0...255, using: &generator) }))
        try handle.close()

        let reopened = try LookoutDatabase(path: path)
        guard case .damaged(let problems) = await reopened.checkIntegrity() else {
            Issue.record("quick_check found nothing")
            return
        }
        #expect(!problems.isEmpty)
        #expect(reopened.integrityStatus == .damaged(problems))
    }

    /// Rows an older Lookout wrote for `/probe` targets (with secrets in their names) go on upgrade.
    @Test func theUpgradeForgetsProbeTargets() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("lookout.sqlite").path
        do {
            let database = try LookoutDatabase(path: path)
            try await database.writer.write { db in
                for source in ["probe:http://127.0.0.1:1/?token=secret", "acme"] {
                    try db.execute(
                        sql:
                            "INSERT INTO breaker_state (source, state, consecutive_failures, consecutive_successes, open_count, open_timeout_ms, updated_at_ms) VALUES (?, 'closed', 0, 0, 0, 0, 0)",
                        arguments: [source])
                    try db.execute(
                        sql:
                            "INSERT INTO error_records (ts_ms, source, category, reason, message, attempt, was_retried, retry_succeeded) VALUES (1, ?, 'transient', 'connection_refused', 'refused', 1, 0, 0)",
                        arguments: [source])
                }
                // As a database written before the migration existed.
                try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier LIKE 'v3:%'")
            }
        }
        let upgraded = try LookoutDatabase(path: path)
        let sources = try await upgraded.writer.read { db in
            try String.fetchAll(db, sql: "SELECT source FROM breaker_state UNION ALL SELECT source FROM error_records")
        }
        #expect(sources == ["acme", "acme"])
    }
}
