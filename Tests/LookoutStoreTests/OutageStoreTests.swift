import GRDB
import Logging
import LookoutCore
import LookoutStore
import ResilientHTTP
import Testing

/// The `outages` table: each source's outage in progress, so a restart picks it up where it was.
@Suite("stored outages")
struct OutageStoreTests {
    let failure = Failure(category: .serverError, reason: "http_503", httpStatus: 503)

    func rows(_ database: LookoutDatabase) throws -> [String: [Int64]] {
        try database.writer.read { db in
            let names = try SourceIds.names(db)
            var rows: [String: [Int64]] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT * FROM outages") {
                rows[names[row["source_id"]] ?? "?"] = [row["down_since_ms"], row["failed_probes"]]
            }
            return rows
        }
    }

    @Test func anOutageIsStoredFromItsFirstFailureUntilASuccess() throws {
        let database = try LookoutDatabase(path: ":memory:")
        let writer = RecordWriter(database: database, logger: Logger(label: "test"))
        writer.record(ProbeResult(source: "a", timestampMs: 1000, ok: true))
        for at in [2000, 3000, 4000] as [Int64] { writer.record(ProbeResult(source: "a", timestampMs: at, ok: false, failure: failure)) }
        writer.record(ProbeResult(source: "b", timestampMs: 2500, ok: false, failure: failure))
        // A call the breaker refused is no probe: it neither counts nor ends anything.
        writer.record(ProbeResult(source: "b", timestampMs: 2600, ok: false, failure: Failure(category: .circuitOpen, reason: "circuit_open")))
        writer.flush()
        #expect(try rows(database) == ["a": [2000, 3], "b": [2500, 1]])
        // The cause is the latest failure, its fields as they were; one while Lookout itself was
        // offline only counts.
        var offline = ProbeResult(source: "a", timestampMs: 4500, ok: false, failure: Failure(category: .networkUnreachable, reason: "network_unreachable"))
        offline.duringOffline = true
        writer.record(offline)
        writer.record(
            ProbeResult(
                source: "b", timestampMs: 4600, ok: false,
                failure: Failure(
                    category: .transient, reason: "connection_refused", curlCode: 7, detail: "Failed to connect", serverMessage: nil)))
        writer.flush()
        let loaded = try RecordWriter(database: database, logger: Logger(label: "test")).loadOutages(sources: ["a", "b"], forget: false)
        let a = try #require(loaded.first { $0.source == "a" })
        #expect(a.failedProbes == 4)
        #expect(a.cause.timestampMs == 4000)
        #expect(a.cause.failure == failure)
        #expect(a.cause.httpStatus == 503)
        let b = try #require(loaded.first { $0.source == "b" })
        #expect(b.downSinceMs == 2500)
        #expect(b.cause.failure == Failure(category: .transient, reason: "connection_refused", curlCode: 7, detail: "Failed to connect"))
        #expect(try rows(database) == ["a": [2000, 4], "b": [2500, 2]])
        writer.record(ProbeResult(source: "a", timestampMs: 5000, ok: true))
        writer.record(ProbeResult(source: "a", timestampMs: 6000, ok: true))
        writer.flush()
        #expect(try rows(database) == ["b": [2500, 2]])
    }

    /// A damaged file may hold anything: rows that cannot be read are deleted, not trusted.
    @Test func rowsThatCannotBeReadAreDeleted() throws {
        let database = try LookoutDatabase(path: ":memory:")
        let writer = RecordWriter(database: database, logger: Logger(label: "test"))
        for source in ["text", "future", "negative", "late", "huge", "category"] {
            writer.record(ProbeResult(source: source, timestampMs: 2000, ok: false, failure: failure))
        }
        writer.flush()
        try database.writer.write { db in
            let ids = try SourceIds.names(db)
            func id(_ name: String) -> Int64 { ids.first { $0.value == name }!.key }
            try db.execute(sql: "UPDATE outages SET down_since_ms = 'soon' WHERE source_id = ?", arguments: [id("text")])
            try db.execute(sql: "UPDATE outages SET last_failed_ms = 9000000000000000000 WHERE source_id = ?", arguments: [id("future")])
            try db.execute(sql: "UPDATE outages SET down_since_ms = -9223372036854775808 WHERE source_id = ?", arguments: [id("negative")])
            try db.execute(sql: "UPDATE outages SET down_since_ms = 3000 WHERE source_id = ?", arguments: [id("late")])
            try db.execute(
                sql: "UPDATE outages SET failed_probes = 9223372036854775807, http_status = 70000, curl_code = 99999999999 WHERE source_id = ?",
                arguments: [id("huge")])
            try db.execute(sql: "UPDATE outages SET category = 'gremlins' WHERE source_id = ?", arguments: [id("category")])
        }
        let loaded = try RecordWriter(database: database, logger: Logger(label: "test"))
            .loadOutages(sources: ["text", "future", "negative", "late", "huge", "category"], forget: false, nowMs: 10_000)
        #expect(loaded.map(\.source) == ["huge"])
        #expect(loaded.first?.failedProbes == 1_000_000_000)
        #expect(loaded.first?.cause.httpStatus == nil)
        #expect(loaded.first?.cause.failure?.curlCode == nil)
        #expect(Set(try rows(database).keys) == ["huge"])
    }

    @Test func aStartLoadsTheOutagesOfItsSourcesAndForgetsTheRest() throws {
        let database = try LookoutDatabase(path: ":memory:")
        let before = RecordWriter(database: database, logger: Logger(label: "test"))
        for source in ["a", "b", "gone"] { before.record(ProbeResult(source: source, timestampMs: 2000, ok: false, failure: failure)) }
        before.flush()

        let writer = RecordWriter(database: database, logger: Logger(label: "test"))
        let loaded = try writer.loadOutages(sources: ["a", "b", "c"], forget: false)
        #expect(
            loaded.map { "\($0.source) \($0.downSinceMs) \($0.failedProbes) \($0.cause.failure?.reason ?? "")" }.sorted() == [
                "a 2000 1 http_503", "b 2000 1 http_503",
            ])
        #expect(Set(try rows(database).keys) == ["a", "b"])
        // The loaded outages are known to the writer: a success ends the stored one.
        writer.record(ProbeResult(source: "a", timestampMs: 3000, ok: true))
        writer.flush()
        #expect(Set(try rows(database).keys) == ["b"])

        // After a stretch without Lookout running nothing is known of them: all are forgotten.
        #expect(try RecordWriter(database: database, logger: Logger(label: "test")).loadOutages(sources: ["a", "b"], forget: true).isEmpty)
        #expect(try rows(database).isEmpty)
    }
}
