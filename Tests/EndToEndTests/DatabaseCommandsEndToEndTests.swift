import Foundation
import GRDB
import LookoutCore
import LookoutStore
import ResilientHTTP
import TestSupport
import Testing

/// `lookout db backup` and `lookout db check` against a database `serve` is writing.
@Suite("database commands end to end")
struct DatabaseCommandsEndToEndTests {
    let http = CurlTransport()
    var binary: String { ChildProcess.binDirectory.appendingPathComponent("lookout").path }

    @Test func aBackupTakenDuringWritesIsSoundAndComplete() async throws {
        let directory = try makeTemporaryDirectory("backup")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (sim, simBase) = try await startSimulator()
        let database = directory.appendingPathComponent("lookout.sqlite").path
        let config = directory.appendingPathComponent("lookout.yml")
        let sources = (0..<20).map { "  - {name: s\($0), url: \"\(simBase)/status/\($0 % 2 == 0 ? 200 : 503)\"}" }.joined(separator: "\n")
        try """
        listen: 127.0.0.1:0
        database: \(database)
        defaults: {interval: 100ms, timeout: 2s, retry: {server_error: {max_attempts: 1}}}
        sources:
        \(sources)
        """.write(to: config, atomically: true, encoding: .utf8)
        let (lookout, base) = try await startLookout(config: config)
        // Two batches committed (the writer commits at most a second behind the probes).
        _ = try await eventually("records written") { () -> Bool? in
            let text = await http.perform(TransferRequest(url: "\(base)/metrics", timeout: .patient)).bodyText
            let line = text.split(separator: "\n").first { $0.hasPrefix("lookout_db_write_duration_seconds_count ") }
            return (line.flatMap { Double($0.split(separator: " ").last ?? "") } ?? 0) >= 2 ? true : nil
        }
        // Three backups while serve keeps writing: each is sound and holds what was written.
        var counts: [Int] = []
        for round in 0..<3 {
            let copy = directory.appendingPathComponent("copy-\(round).sqlite").path
            let backup = try await runTool(binary, ["db", "backup", "--db", database, "--to", copy])
            #expect(backup.status == 0, "\(backup.output)")
            #expect(backup.output.contains("integrity check ok"))
            let check = try await runTool(binary, ["db", "check", "--db", copy])
            #expect(check.status == 0 && check.output.contains("ok"), "\(check.output)")
            let queue = try DatabaseQueue(path: copy)
            let (integrity, results, errors) = try await queue.read { db in
                (
                    try String.fetchOne(db, sql: "PRAGMA integrity_check"), try Int.fetchOne(db, sql: "SELECT count(*) FROM probe_results") ?? 0,
                    try Int.fetchOne(db, sql: "SELECT count(*) FROM error_records") ?? 0
                )
            }
            #expect(integrity == "ok")
            #expect(results > 0 && errors > 0)
            counts.append(results)
        }
        #expect(counts == counts.sorted())  // each later copy holds at least as much
        // The live file checks out too, while serve runs.
        #expect(try await runTool(binary, ["db", "check", "--db", database]).status == 0)
        // An existing destination is never overwritten.
        let existing = directory.appendingPathComponent("copy-0.sqlite").path
        let refused = try await runTool(binary, ["db", "backup", "--db", database, "--to", existing])
        #expect(refused.status == 1 && refused.output.contains("already exists"))
        #expect(try await lookout.terminate() == 0)
        #expect(try await sim.terminate() == 0)
        // Stopped, the file alone holds everything: the WAL was checkpointed into it and emptied,
        // so a plain copy of lookout.sqlite is whole.
        let wal = (try? FileManager.default.attributesOfItem(atPath: database + "-wal")[.size] as? Int) ?? 0
        #expect(wal == 0)
        let plain = directory.appendingPathComponent("plain/lookout.sqlite")
        try FileManager.default.createDirectory(at: plain.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: database, toPath: plain.path)
        let copied = try await DatabaseQueue(path: plain.path).read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM probe_results") ?? 0 }
        #expect(copied >= counts.last ?? 1)
    }

    /// A kill -9 in the middle of a rollup step loses nothing and counts nothing twice.
    /// `lookout db prune` rolls a backlog of 40 hours of minute rows for 400 sources up into
    /// hours, one transaction per hour with the tier's mark, back to back; it is killed once the
    /// mark has moved, so almost always inside a step's transaction. The file then holds every
    /// hour before the mark whole and nothing at or after it; a second run completes the tiers,
    /// each hour's sums equal to its minutes', none written twice.
    @Test func aKillDuringARollupStepLosesNothingAndCountsNothingTwice() async throws {
        let directory = try makeTemporaryDirectory("rollup-kill")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("lookout.sqlite").path
        let hour = HealthWindow.hour
        let first = HealthWindow.floor(Timestamp.nowMs(), to: hour) - 41 * hour
        let end = first + 40 * hour
        let database = try LookoutDatabase(path: path)
        try await database.writer.write { db in
            try db.execute(
                sql:
                    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 400) INSERT INTO sources (name, first_seen_ms) SELECT 's' || i, ? FROM n",
                arguments: [first])
            try db.execute(
                sql: """
                    WITH RECURSIVE m(t) AS (SELECT ? UNION ALL SELECT t + 60000 FROM m WHERE t + 60000 < ?)
                    INSERT INTO minute_rollups (minute_ms, source_id, probes, failures, retried, retry_succeeded, duration_us_sum, duration_us_max, latency)
                    SELECT m.t, s.id, 4, (m.t / 60000 + s.id) % 3, (m.t / 60000 + s.id) % 2, 0, 1000 + s.id, 900, ?
                    FROM m CROSS JOIN sources s ORDER BY m.t, s.id
                    """,
                arguments: [first, end, LatencyBlob.encode([1, 2, 0, 1])])
            try db.execute(sql: "UPDATE tier_rows SET rows = (SELECT COUNT(*) FROM minute_rollups) WHERE tier = 'minute'")
        }
        try database.writer.close()

        let prune = try ChildProcess(binary, ["db", "prune", "--db", path, "--older-than", "30d"])
        let reader = try DatabaseQueue(
            path: path,
            configuration: {
                var c = Configuration()
                c.readonly = true
                return c
            }())
        let markAtKill = try await eventually("the hour tier's mark to move") { () -> Int64? in
            let mark = try await reader.read { db in try RollupTiers.mark(db, "hour") }
            guard let mark, mark >= first + 2 * hour else { return nil }
            prune.send(SIGKILL)
            return mark
        }
        let status = try await prune.terminate()
        #expect(status == SIGKILL, "the prune finished before it was killed (\(prune.text)); the backlog is too small to test a kill")
        try reader.close()

        let killed = try DatabaseQueue(path: path)
        let (integrity, mark, bad, after, rows) = try await killed.read { db in
            let mark = try RollupTiers.mark(db, "hour") ?? 0
            return (
                try String.fetchOne(db, sql: "PRAGMA integrity_check"), mark, try Self.mismatches(before: mark, db),
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM hour_rollups WHERE hour_ms >= ?", arguments: [mark]) ?? -1,
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM hour_rollups") ?? -1
            )
        }
        #expect(integrity == "ok")
        #expect(mark >= markAtKill && mark < end, "the kill came after the last hour")
        #expect(bad == 0, "hours before the mark whose sums differ from their minutes'")
        #expect(after == 0, "rows of a step the kill cut short")
        #expect(rows == Int((mark - first) / hour) * 400)
        try killed.close()

        let rerun = try await runTool(binary, ["db", "prune", "--db", path, "--older-than", "30d"])
        #expect(rerun.status == 0, "\(rerun.output)")
        let done = try DatabaseQueue(path: path)
        let (finalMark, finalBad, finalRows, probes) = try await done.read { db in
            (
                try RollupTiers.mark(db, "hour") ?? 0, try Self.mismatches(before: end, db),
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM hour_rollups") ?? -1,
                try Int.fetchOne(db, sql: "SELECT SUM(probes) FROM hour_rollups") ?? -1
            )
        }
        #expect(finalMark >= end)
        #expect(finalBad == 0)
        #expect(finalRows == 40 * 400)
        #expect(probes == 40 * 60 * 400 * 4)
    }

    /// Per (hour, source) before `until`: the minute rows' sums that the hour tier does not hold exactly.
    static func mismatches(before until: Int64, _ db: Database) throws -> Int {
        try Int.fetchOne(
            db,
            sql: """
                SELECT COUNT(*) FROM (
                  SELECT minute_ms / 3600000 * 3600000 AS h, source_id, SUM(probes) AS p, SUM(failures) AS f, SUM(retried) AS r,
                         SUM(duration_us_sum) AS d
                  FROM minute_rollups WHERE minute_ms < ? GROUP BY h, source_id) m
                LEFT JOIN hour_rollups x ON x.hour_ms = m.h AND x.source_id = m.source_id
                WHERE x.probes IS NOT m.p OR x.failures IS NOT m.f OR x.retried IS NOT m.r OR x.duration_us_sum IS NOT m.d
                """,
            arguments: [until]) ?? -1
    }

    @Test func checkTellsADamagedFileAndAMissingOneApart() async throws {
        let directory = try makeTemporaryDirectory("check")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("damaged.sqlite").path
        let queue = try DatabaseQueue(path: path)
        try await queue.write { db in
            try db.execute(sql: "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
            try db.execute(sql: "CREATE INDEX t_v ON t (v)")
            for index in 0..<2_000 { try db.execute(sql: "INSERT INTO t (v) VALUES (?)", arguments: ["value \(index)"]) }
        }
        try queue.close()
        #expect(try await runTool(binary, ["db", "check", "--db", path]).status == 0)
        // Overwrite a page in the middle (not the header): the file still opens, the check fails.
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        try handle.seek(toOffset: 4096 * 3 + 100)
        try handle.write(contentsOf: Data(repeating: 0x5A, count: 2000))
        try handle.close()
        let damaged = try await runTool(binary, ["db", "check", "--db", path])
        #expect(damaged.status == 1 && damaged.output.contains("is damaged"), "\(damaged.output)")
        let missing = try await runTool(binary, ["db", "check", "--db", directory.appendingPathComponent("nope.sqlite").path])
        #expect(missing.status == 1 && missing.output.contains("does not exist"))
        let backupOfMissing = try await runTool(binary, ["db", "backup", "--db", directory.appendingPathComponent("nope.sqlite").path, "--to", path + ".copy"])
        #expect(backupOfMissing.status == 1 && !FileManager.default.fileExists(atPath: path + ".copy"))
    }
}
