import Foundation
import GRDB
import Logging
import LookoutCore
import LookoutStore
import ResilientHTTP
import Testing

@Suite("LookoutStore")
struct StoreTests {
    func temporaryPath() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("store-\(UUID().uuidString).sqlite").path
    }

    @Test func migratesAFreshFileInWALMode() throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let database = try LookoutDatabase(path: path)
        let (mode, tables) = try database.writer.read { db in
            (try String.fetchOne(db, sql: "PRAGMA journal_mode")!,
             try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'"))
        }
        #expect(mode == "wal")
        #expect(tables.contains("probe_results"))
        // Opening again finds the schema current and changes nothing.
        _ = try LookoutDatabase(path: path)
    }

    @Test func writesQueuedResultsInOneFlush() throws {
        let database = try LookoutDatabase(path: ":memory:")
        let writer = ProbeResultWriter(database: database, logger: Logger(label: "test"))
        writer.record(ProbeResult(source: "a", timestampMs: 1000, ok: true, httpStatus: 200, durationSeconds: 0.25, bytes: 11))
        writer.record(ProbeResult(
            source: "b", timestampMs: 2000, ok: false,
            failure: Failure(category: .serverError, reason: "http_503", httpStatus: 503), httpStatus: 503))
        #expect(writer.pendingCount == 2)
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
}
