import Foundation
import GRDB
import ResilientHTTP
import Testing
import TestSupport

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
            let text = await http.perform(TransferRequest(url: "\(base)/metrics")).bodyText
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
                (try String.fetchOne(db, sql: "PRAGMA integrity_check"), try Int.fetchOne(db, sql: "SELECT count(*) FROM probe_results") ?? 0,
                 try Int.fetchOne(db, sql: "SELECT count(*) FROM error_records") ?? 0)
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
