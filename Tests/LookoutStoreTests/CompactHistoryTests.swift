import Foundation
import GRDB
import Logging
import LookoutCore
import LookoutStore
import ResilientHTTP
import TestSupport
import Testing

/// History rows keyed by source id, latency as a blob, row counts kept with the rows, and the
/// upgrade from the text rows of v6 (a file written by Lookout before this change).
@Suite("compact history")
struct CompactHistoryTests {
    let minute: Int64 = 60_000

    @Test func latencyBlobsRoundTripAndSurviveGarbage() {
        let counts = [0, 3, 0, 0, 200, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 70_000]
        let blob = LatencyBlob.encode(counts)
        #expect(blob.count == 2 + 3 + 2 + 4)  // index + varint per bucket that counted
        #expect(LatencyBlob.decode(blob) == counts)
        #expect(LatencyBlob.encode([Int](repeating: 0, count: 16)).isEmpty)
        #expect(LatencyBlob.decode(nil) == [Int](repeating: 0, count: 16))
        // A bucket out of range, a varint cut short, a varint of 20 bytes: what came before stays.
        #expect(LatencyBlob.decode(Data([1, 5, 99, 7])) == [0, 5] + [Int](repeating: 0, count: 14))
        #expect(LatencyBlob.decode(Data([2, 0x85])) == [Int](repeating: 0, count: 16))
        #expect(LatencyBlob.decode(Data([3] + [UInt8](repeating: 0xFF, count: 20) + [1])) == [Int](repeating: 0, count: 16))
        // Ten 0xFF then 0x01: 2^70-ish clamps instead of trapping.
        #expect(LatencyBlob.decode(Data([0] + [UInt8](repeating: 0xFF, count: 8) + [0x7F]))[0] == Int.max)
        #expect(LatencyBlob.parseText("0,0,0,0,2,0,0,0,0,0,0,0,0,0,0,0")[4] == 2)
        #expect(LatencyBlob.parseText("1,2,x") == [Int](repeating: 0, count: 16))
        #expect(LatencyBlob.parseText("0,0,0,0,-2,0,0,0,0,0,0,0,0,0,0,0") == [Int](repeating: 0, count: 16))
        #expect(Microseconds.from(seconds: .nan) == 0 && Microseconds.from(seconds: -1) == 0 && Microseconds.from(seconds: 1e300) > 0)
        #expect(Microseconds.from(seconds: 0.0125) == 12_500)
    }

    /// Per source: probes, failures, the latency counts and the duration sum (in ms) of a table.
    struct Totals: Equatable {
        var rows = 0
        var probes = 0
        var failures = 0
        var latency = 0
        var durationMs = 0.0
    }

    func totals(_ db: Database, _ table: String, latencyAsText: Bool) throws -> [String: Totals] {
        var found: [String: Totals] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT source, probes, failures, duration_ms_sum, latency_buckets FROM \(table)") {
            var total = found[row["source"], default: Totals()]
            total.rows += 1
            total.probes += row["probes"] as Int
            total.failures += row["failures"] as Int
            total.durationMs += row["duration_ms_sum"] as Double
            let buckets = latencyAsText ? LatencyBlob.parseText(row["latency_buckets"]) : LatencyBlob.decode(row["latency_buckets"])
            total.latency += buckets.reduce(0, +)
            found[row["source"]] = total
        }
        return found
    }

    func raw(_ db: Database) throws -> [Row] {
        try Row.fetchAll(
            db,
            sql:
                "SELECT id, ts_ms, source, ok, category, reason, http_status, attempts, ROUND(duration_ms, 3) AS d, bytes, message FROM probe_results ORDER BY id"
        )
    }

    /// `Fixtures/v6-history.sqlite.gz` was written by the v6 schema's own writer, tiers and
    /// retention (`lookout-bench history 3 3` at 6973cea): three sources, three simulated days.
    @Test func theUpgradeFromV6KeepsEveryRecord() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("v6-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("lookout.sqlite").path
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/v6-history.sqlite.gz")
        // gzip on a Dispatch thread (runTool), not on one of the test pool's two threads.
        let unpacked = try await runTool("/bin/sh", ["-c", "gzip -dc \"$0\" > \"$1\"", fixture.path, path])
        try #require(unpacked.status == 0, "\(unpacked.output)")
        try expectTheUpgradeKeepsEveryRecord(path)
    }

    func expectTheUpgradeKeepsEveryRecord(_ path: String) throws {

        let tables = ["probe_rollups", "probe_rollups_hourly", "probe_rollups_daily"]
        let (before, rawBefore, marksBefore) = try DatabaseQueue(path: path).read { db in
            #expect(try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations").last == "v6: hourly and daily rollups")
            return (
                try tables.map { try totals(db, $0, latencyAsText: true) }, try raw(db),
                try Row.fetchAll(db, sql: "SELECT tier, done_until_ms FROM rollup_progress ORDER BY tier")
            )
        }
        #expect(before.allSatisfy { $0.count == 3 } && rawBefore.count > 4000)

        let database = try LookoutDatabase(path: path)
        try database.writer.read { db in
            for (table, expected) in zip(tables, before) { #expect(try totals(db, table, latencyAsText: false) == expected, "\(table)") }
            #expect(try raw(db) == rawBefore)
            #expect(try Row.fetchAll(db, sql: "SELECT tier, done_until_ms FROM rollup_progress ORDER BY tier") == marksBefore)
            #expect(try String.fetchAll(db, sql: "SELECT name FROM sources ORDER BY id") == ["source-0", "source-1", "source-2"])
            // The row counts start right.
            let counted = try Dictionary(
                uniqueKeysWithValues: Row.fetchAll(db, sql: "SELECT tier, rows FROM tier_rows").map { ($0[0] as String, $0[1] as Int) })
            let rows: [Int] = before.map { tier in tier.values.reduce(0) { $0 + $1.rows } }
            let expected: [String: Int] = ["raw": rawBefore.count, "minute": rows[0], "hour": rows[1], "day": rows[2]]
            #expect(counted == expected)
        }
        // And it goes on: the writer adds to the upgraded file, the tiers roll up and prune.
        func probes() throws -> Int { try HistoryStore.days(database, source: "source-1", sinceMs: 0)["source-1"]?.reduce(0) { $0 + $1.probes } ?? 0 }
        let probesBefore = try probes()
        #expect(probesBefore > 3 * 1400)
        let writer = RecordWriter(database: database, logger: Logger(label: "test"))
        let last = try database.writer.read { db in try Int64.fetchOne(db, sql: "SELECT MAX(ts_ms) FROM raw_results") } ?? 0
        writer.record(ProbeResult(source: "source-1", timestampMs: last + minute, ok: true, durationSeconds: 0.004))
        writer.flush()
        try Retention(retention: .seconds(30 * 86_400), rawRetention: .seconds(6 * 3600), tiers: RollupRetention()).prune(database, nowMs: last + 2 * minute)
        try expectCountsMatch(database)
        #expect(try probes() == probesBefore + 1)
    }

    /// `tier_rows` equals COUNT(*) of each table.
    func expectCountsMatch(_ database: LookoutDatabase, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let counted = try RecordWriter.rowCounts(database)
        let real = try database.writer.read { db in
            try ["raw": "raw_results", "minute": "minute_rollups", "hour": "hour_rollups", "day": "day_rollups"].mapValues { table in
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(table)") ?? -1
            }
        }
        #expect(counted == real, sourceLocation: sourceLocation)
    }

    @Test func rowCountsFollowWritesRollupsAndPruning() throws {
        let database = try LookoutDatabase(path: ":memory:")
        let writer = RecordWriter(database: database, logger: Logger(label: "test"))
        let start: Int64 = 20_000 * 86_400_000
        // Three days, two sources every 10 minutes, flushed every hour; one minute written twice.
        for step in 0..<(3 * 144) {
            let at = start + Int64(step) * 10 * minute
            for source in ["a", "b"] { writer.record(ProbeResult(source: source, timestampMs: at, ok: step % 5 != 0, durationSeconds: 0.02)) }
            if step % 6 == 5 { writer.flush() }
        }
        writer.record(ProbeResult(source: "a", timestampMs: start + 3 * 86_400_000 - 10 * minute + 1, ok: true, durationSeconds: 0.02))
        writer.flush()
        try expectCountsMatch(database)
        #expect(try RecordWriter.rowCounts(database)["minute"] == 2 * 3 * 144)
        let retention = Retention(retention: .seconds(86_400), rawRetention: .seconds(6 * 3600), tiers: RollupRetention())
        let deleted = try retention.prune(database, nowMs: start + 3 * 86_400_000)
        #expect((deleted["probe_results"] ?? 0) > 0)
        try expectCountsMatch(database)
        let counts = try RecordWriter.rowCounts(database)
        #expect(counts["hour"] == 2 * 71 && counts["day"] == 2 * 2)  // 72 hours less the last one's grace
        // Pruned again a year later: only day rows remain, counted.
        try retention.prune(database, nowMs: start + 400 * 86_400_000)
        try expectCountsMatch(database)
        #expect(try RecordWriter.rowCounts(database) == ["raw": 0, "minute": 0, "hour": 0, "day": 2 * 3])
    }

    @Test func aRenameKeepsTheHistoryAndARemovalKeepsTheRow() throws {
        let database = try LookoutDatabase(path: ":memory:")
        let writer = RecordWriter(database: database, logger: Logger(label: "test"))
        let now = Timestamp.nowMs()
        var api = SourceConfig(name: "api", url: "http://127.0.0.1:1/")
        let feed = SourceConfig(name: "feed", url: "http://127.0.0.1:1/")
        try writer.sourceIds.sync(database, sources: [api, feed], nowMs: now)
        for back in 1...30 {
            writer.record(ProbeResult(source: "api", timestampMs: now - Int64(back) * minute, ok: back % 3 != 0, durationSeconds: 0.01))
            writer.record(ProbeResult(source: "feed", timestampMs: now - Int64(back) * minute, ok: true, durationSeconds: 0.01))
        }
        writer.handle(
            .breakerTransition(
                upstream: "api", BreakerTransition(from: .closed, to: .open, atMs: now - minute, consecutiveFailures: 3, openTimeoutMs: 30_000),
                state: PersistedBreaker(
                    state: .open, consecutiveFailures: 3, consecutiveSuccesses: 0, openedAtMs: now - minute, nextAttemptAtMs: now + 30_000, openCount: 1,
                    openTimeoutMs: 30_000)))
        writer.flush()
        let before = try HistoryStore.days(database, source: "api", sinceMs: 0)["api"]
        #expect(before?.reduce(0) { $0 + $1.probes } == 30 && before?.reduce(0) { $0 + $1.failures } == 10)
        let apiID = try database.writer.read { db in try SourceIds.id(of: "api", db) }

        // Renamed in the config, feed removed: the new name has the old id, history and breaker.
        api.name = "payments-api"
        api.renamedFrom = ["api"]
        let renames = try writer.sourceIds.sync(database, sources: [api], nowMs: now + 1)
        #expect(renames.map { "\($0.from)→\($0.to)" } == ["api→payments-api"])
        try database.writer.read { db throws in
            #expect(try SourceIds.id(of: "payments-api", db) == apiID)
            #expect(try SourceIds.id(of: "api", db) == nil)
            #expect(try Int64.fetchOne(db, sql: "SELECT removed_at_ms FROM sources WHERE name = 'feed'") == now + 1)
            #expect(try String.fetchOne(db, sql: "SELECT source FROM breaker_state") == "payments-api")
        }
        #expect(try HistoryStore.days(database, source: "payments-api", sinceMs: 0)["payments-api"] == before)
        #expect(try HistoryStore.days(database, source: "feed", sinceMs: 0)["feed"]?.reduce(0) { $0 + $1.probes } == 30)
        // New probes go to the same id; a second sync changes nothing; feed back is present again.
        writer.record(ProbeResult(source: "payments-api", timestampMs: now, ok: true, durationSeconds: 0.01))
        writer.flush()
        #expect(try HistoryStore.days(database, source: "payments-api", sinceMs: 0)["payments-api"]?.reduce(0) { $0 + $1.probes } == 31)
        #expect(try writer.sourceIds.sync(database, sources: [api, feed], nowMs: now + 2).isEmpty)
        #expect(try database.writer.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM sources WHERE removed_at_ms IS NOT NULL") } == 0)
    }

    /// The configured names reach SQLite as one JSON array: a name JSON must escape is matched as
    /// written, and one left out of the config is marked removed.
    @Test func syncMatchesEveryNameAsWritten() throws {
        let database = try LookoutDatabase(path: ":memory:")
        let writer = RecordWriter(database: database, logger: Logger(label: "test"))
        let now = Timestamp.nowMs()
        let names = ["plain", #"quote"and\backslash"#, "tab\tnewline\n", "é-ü"]
        for name in names { writer.record(ProbeResult(source: name, timestampMs: now - minute, ok: true, durationSeconds: 0.01)) }
        writer.flush()
        let removed = {
            try database.writer.read { db in try String.fetchAll(db, sql: "SELECT name FROM sources WHERE removed_at_ms IS NOT NULL ORDER BY name") }
        }
        try writer.sourceIds.sync(database, sources: names.map { SourceConfig(name: $0, url: "http://127.0.0.1:1/") }, nowMs: now)
        #expect(try removed().isEmpty)
        try writer.sourceIds.sync(database, sources: names.dropFirst().map { SourceConfig(name: $0, url: "http://127.0.0.1:1/") }, nowMs: now + 1)
        #expect(try removed() == ["plain"])
        try writer.sourceIds.sync(database, sources: [SourceConfig(name: "plain", url: "http://127.0.0.1:1/")], nowMs: now + 2)
        #expect(try removed() == names.dropFirst().sorted())
    }

    /// One source's days read key by key agree with the days of every source read by stretch.
    /// Every source is read in two halves of the ids, side by side on a file's reader connections.
    @Test(arguments: [false, true]) func oneSourceReadsTheSameDaysAsEverySource(onDisk: Bool) throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("days-\(UUID().uuidString).sqlite").path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let database = try LookoutDatabase(path: onDisk ? path : ":memory:")
        let writer = RecordWriter(database: database, logger: Logger(label: "test"))
        let now: Int64 = 20_000 * 86_400_000 + 5 * 3_600_000 + 17 * minute
        for back in stride(from: Int64(1), to: 4 * 1440, by: 7) {
            for (index, source) in ["a", "b", "c"].enumerated() {
                writer.record(ProbeResult(source: source, timestampMs: now - back * minute, ok: (back + Int64(index)) % 11 != 0, durationSeconds: 0.01))
            }
        }
        writer.flush()
        for rolled in [false, true] {
            if rolled { try Retention(retention: .seconds(86_400), rawRetention: .seconds(3600), tiers: RollupRetention()).prune(database, nowMs: now) }
            let everyone = try HistoryStore.days(database, source: nil, sinceMs: now - now % 86_400_000 - 5 * 86_400_000)
            #expect(Set(everyone.keys) == ["a", "b", "c"])
            for source in ["a", "b", "c"] {
                let alone = try HistoryStore.days(database, source: source, sinceMs: now - now % 86_400_000 - 5 * 86_400_000)[source]
                #expect(alone == everyone[source] && (alone?.count ?? 0) >= 4, "\(source), rolled up: \(rolled)")
            }
        }
        #expect(try HistoryStore.days(database, source: "nobody", sinceMs: 0).isEmpty)
    }
}
