import Foundation
import GRDB
import Logging
import LookoutCore
import ResilientHTTP
import Synchronization

/// The one writer: records are queued by whoever produces them and committed in batches, one
/// transaction at most a second behind. When the disk is full or the file read-only, records stay
/// queued (up to a bound), the problem is logged once and shown, and writing resumes on its own.
package final class RecordWriter: ProbeResultSink, ClientEventSink {
    /// How the writer is doing, for `/metrics` and the status page.
    package struct Health: Sendable, Equatable {
        package var lastError: String?
        package var failedFlushes: UInt64 = 0
        package var droppedRecords: UInt64 = 0
        package var writeDurations = Histogram(bounds: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5])
    }

    private struct Queue {
        var records: [StoreRecord] = []
        /// The minutes that can still change, by their start: a handful, so keeping them costs
        /// one small lookup per result and dropping an old one is a single removal.
        var minutes: [Int64: MinuteRollups] = [:]
        /// Sources whose last probe failed: a success of one of them ends its stored outage
        /// (one set lookup a result, no statement for a healthy source).
        var outages: Set<String> = []

        /// Keeps at most `limit` records; returns how many were dropped. Over the bound it drops a
        /// tenth of it at once, so a writer stuck on a full disk pays one O(n) removal per
        /// `limit / 10` records instead of one per record. The oldest go first, by
        /// `StoreRecord.dropOrder`: raw results and error records (the minute rollups are kept
        /// apart, so availability stays whole), then an outage's failures and breaker changes
        /// (a later one of the same source supersedes them), and only then outage ends.
        mutating func trim(to limit: Int) -> Int {
            guard records.count > limit else { return 0 }
            var excess = records.count - (limit - limit / 10)
            let before = records.count
            for order in 0...StoreRecord.lastDropOrder where excess > 0 {
                records.removeAll { record in
                    guard excess > 0, record.dropOrder == order else { return false }
                    excess -= 1
                    return true
                }
            }
            return before - records.count
        }

        /// While writes fail, every source's minutes before `cutoffMs` are folded into the first
        /// minute of their hour: the counts stay whole (the hour and day tiers are built from
        /// them), and a disk full for a day keeps 24 entries a source instead of 1,440. A minute
        /// partly written already stays as it is (its row holds part of it).
        mutating func foldMinutes(before cutoffMs: Int64) {
            for minuteMs in Array(minutes.keys) where minuteMs < cutoffMs && minuteMs % HealthWindow.hour != 0 {
                guard var minute = minutes.removeValue(forKey: minuteMs) else { continue }
                let hourMs = minuteMs - minuteMs % HealthWindow.hour
                minute.bySource = minute.bySource.filter { source, entry in
                    guard !entry.stored else { return true }
                    minutes[hourMs, default: MinuteRollups()].bySource[source, default: Minute()].add(entry.rollup)
                    return false
                }
                if !minute.bySource.isEmpty { minutes[minuteMs] = minute }
            }
        }
    }

    /// Every source's rollup of one minute.
    private struct MinuteRollups {
        var bySource: [String: Minute] = [:]

        mutating func add(_ result: ProbeResult) {
            bySource[result.source, default: Minute()].add(result)
        }

        /// The rollups changed since the last flush, now marked unchanged: one pass over the
        /// minute's sources a flush, no hashing.
        mutating func takeChanged(minuteMs: Int64) -> [(RollupKey, Minute)] {
            var taken: [(RollupKey, Minute)] = []
            var index = bySource.startIndex
            while index != bySource.endIndex {
                if bySource.values[index].changed {
                    bySource.values[index].changed = false
                    taken.append((RollupKey(source: bySource.keys[index], minuteMs: minuteMs), bySource.values[index]))
                }
                bySource.formIndex(after: &index)
            }
            return taken
        }

        var hasChanges: Bool { bySource.values.contains(where: \.changed) }
    }

    /// A minute's rollup as it builds up, whether its row is in the database yet, and whether
    /// it changed since the last flush.
    private struct Minute {
        var rollup = Rollup()
        var stored = false
        var changed = false

        mutating func add(_ result: ProbeResult) {
            rollup.add(result)
            changed = true
        }

        mutating func add(_ other: Rollup) {
            rollup.add(other)
            changed = true
        }
    }

    struct RollupKey: Hashable {
        var source: String
        var minuteMs: Int64
    }

    /// The records kept while the database cannot be written, by default about 70 MB.
    package static let defaultMaxQueued = 200_000
    static let batchTrigger = 5_000

    private let database: LookoutDatabase
    private let logger: Logger
    private let maxQueued: Int
    private let queue = Mutex(Queue())
    private let health = Mutex(Health())
    private let flushing = Mutex(false)
    private let lastBreakers = Mutex<[String: PersistedBreaker]>([:])
    /// Names to ids, for the history rows; `SourceIds.sync` brings them in line with the config.
    package let sourceIds = SourceIds()

    package init(database: LookoutDatabase, logger: Logger, maxQueued: Int = RecordWriter.defaultMaxQueued) {
        self.database = database
        self.logger = logger
        self.maxQueued = max(maxQueued, 10)
    }

    package var status: Health { health.withLock { $0 } }
    package var pendingCount: Int { queue.withLock { $0.records.count } }
    /// Every source's minutes held in memory (the current ones, and while writes fail, the
    /// ones waiting).
    package var pendingRollups: Int { queue.withLock { $0.minutes.values.reduce(0) { $0 + $1.bySource.count } } }

    // MARK: - Producers

    package func record(_ result: ProbeResult) {
        guard !result.heldBack else { return }  // no request was made: not a probe of the upstream
        enqueue(.probe(result)) { queue in
            if !result.ok, result.failure != nil {
                queue.outages.insert(result.source)
                queue.records.append(.outage(source: result.source, failed: result))
            } else if !queue.outages.isEmpty, queue.outages.remove(result.source) != nil {
                queue.records.append(.outage(source: result.source, failed: nil))
            }
            // Maintenance stays out of the rollups that availability is computed from.
            guard !result.duringMaintenance else { return }
            let minute = result.timestampMs - result.timestampMs % HealthWindow.minute
            queue.minutes[minute, default: MinuteRollups()].add(result)
        }
    }

    package func handle(_ event: ClientEvent) {
        switch event {
        case .callFinished(let outcome):
            for record in ErrorRecord.from(outcome) { enqueue(.error(record)) }
            if let breaker = outcome.breaker, changedBreaker(outcome.upstream, breaker) {
                enqueue(.breakerState(source: outcome.upstream, breaker, atMs: outcome.startedAtMs))
            }
        case .breakerTransition(let upstream, let transition, let state):
            _ = changedBreaker(upstream, state)
            enqueue(.transition(source: upstream, transition))
            enqueue(.breakerState(source: upstream, state, atMs: transition.atMs))
        default:
            return
        }
    }

    /// Whether `breaker` differs from the last state queued for `upstream` in what a restart
    /// restores: a closed breaker's run of successes does not count, so a healthy source costs
    /// no breaker write per probe (at 5,000 probes a second that was a write each).
    private func changedBreaker(_ upstream: String, _ breaker: PersistedBreaker) -> Bool {
        var significant = breaker
        if significant.state == .closed { significant.consecutiveSuccesses = 0 }
        return lastBreakers.withLock { last in
            guard last[upstream] != significant else { return false }
            last[upstream] = significant
            return true
        }
    }

    package func enqueue(_ record: StoreRecord) {
        enqueue(record) { _ in }
    }

    private func enqueue(_ record: StoreRecord, _ alsoUnderLock: (inout Queue) -> Void) {
        let dropped = queue.withLock { queue -> Int in
            alsoUnderLock(&queue)
            queue.records.append(record)
            return queue.trim(to: maxQueued)
        }
        if dropped > 0 { countDropped(dropped) }
    }

    private func countDropped(_ count: Int) {
        let first = health.withLock { health -> Bool in
            defer { health.droppedRecords += UInt64(count) }
            return health.droppedRecords == 0
        }
        if first {
            logger.error(
                "too many records wait for the database; the oldest raw results are dropped (the minute rollups keep every probe)",
                metadata: [
                    "database": "\(database.path)", "dropped": "\(count)", "kept": "\(maxQueued - maxQueued / 10)",
                ])
        }
    }

    // MARK: - Writing

    /// Flushes at least every second (sooner when many records wait, but not while writes fail:
    /// a full disk is tried once a second) until cancelled, then once more.
    package func run() async {
        var last = ContinuousClock.now
        while !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(100))
            let failing = health.withLock { $0.lastError != nil }
            if ContinuousClock.now - last >= .seconds(1) || (!failing && pendingCount >= RecordWriter.batchTrigger) {
                flush()
                last = ContinuousClock.now
            }
        }
        flush()
    }

    /// Writes everything queued in one transaction. On failure the records stay queued.
    package func flush() {
        // One flush at a time; a caller that finds one running leaves the work to it.
        guard
            flushing.withLock({ running -> Bool in
                if running { return false }
                running = true
                return true
            })
        else { return }
        defer { flushing.withLock { $0 = false } }

        // Taken by swapping, not copied: the queue starts again empty, and a failed flush puts
        // the batch back the same way (while a disk is full it holds up to 69 MB).
        var (batch, rollups) = queue.withLock { queue -> ([StoreRecord], [(RollupKey, Minute)]) in
            var rollups: [(RollupKey, Minute)] = []
            for minuteMs in Array(queue.minutes.keys) { rollups += queue.minutes[minuteMs]?.takeChanged(minuteMs: minuteMs) ?? [] }
            var taken: [StoreRecord] = []
            swap(&taken, &queue.records)
            return (taken, rollups)
        }
        guard !batch.isEmpty || !rollups.isEmpty else { return }
        let started = ContinuousClock.now
        // A source first written now was first seen at its earliest result here (the SLA
        // reports count nothing before it), never later than now.
        var firstSeenMs = Timestamp.nowMs()
        for case .probe(let result) in batch where result.timestampMs < firstSeenMs { firstSeenMs = max(0, result.timestampMs) }
        do {
            let (added, found) = try database.writer.write { [firstSeenMs] db in
                let statements = BatchStatements(db, ids: sourceIds, nowMs: firstSeenMs)
                for record in batch { try RecordWriter.insert(record, statements) }
                var found: [(RollupKey, Rollup)] = []
                for (key, minute) in rollups {
                    if let stored = try RecordWriter.upsert(key, minute.rollup, stored: minute.stored, statements) { found.append((key, stored)) }
                }
                try statements.writeRowCounts()
                return (statements.addedIds, found)
            }
            sourceIds.remember(added)
            queue.withLock { queue in
                for (key, minute) in rollups where !minute.stored { queue.minutes[key.minuteMs]?.bySource[key.source]?.stored = true }
                for (key, stored) in found { queue.minutes[key.minuteMs]?.bySource[key.source]?.rollup.add(stored) }
            }
            let elapsed = (ContinuousClock.now - started).seconds
            let recovered = health.withLock { health -> String? in
                health.writeDurations.observe(elapsed)
                defer { health.lastError = nil }
                return health.lastError
            }
            if recovered != nil { logger.info("database writes resumed", metadata: ["database": "\(database.path)"]) }
            evictOldRollups()
        } catch {
            let message = RecordWriter.describe(error, path: database.path)
            let first = health.withLock { health -> Bool in
                health.failedFlushes += 1
                defer { health.lastError = message }
                return health.lastError == nil
            }
            if first {
                logger.error(
                    "cannot write to the database; records are kept in memory and written when it works again",
                    metadata: [
                        "database": "\(database.path)", "error": "\(message)", "queued": "\(batch.count)",
                    ])
            }
            let dropped = queue.withLock { queue -> Int in
                // The batch first, then what came meanwhile (the few are appended to the many).
                swap(&queue.records, &batch)
                queue.records.append(contentsOf: batch)
                for (key, _) in rollups { queue.minutes[key.minuteMs]?.bySource[key.source]?.changed = true }
                queue.foldMinutes(before: Timestamp.nowMs() - HealthWindow.hour)
                return queue.trim(to: maxQueued)
            }
            if dropped > 0 { countDropped(dropped) }
        }
    }

    /// Keeps the in-memory minutes that can still change: the current one and the one before
    /// (and any whose changes are not written yet).
    private func evictOldRollups() {
        let cutoff = Timestamp.nowMs() - 120_000
        queue.withLock { queue in
            let done = queue.minutes.compactMap { minuteMs, minute in minuteMs < cutoff && !minute.hasChanges ? minuteMs : nil }
            for minuteMs in done { queue.minutes.removeValue(forKey: minuteMs) }
        }
    }

    /// The outages in progress when Lookout last stopped, for the registry to go on from; call
    /// it before the first probe. Outages of sources not in `sources` are deleted; with `forget`
    /// (Lookout was not running for a while, and what happened meanwhile is not known) all are.
    package func loadOutages(sources: [String], forget: Bool, nowMs: Int64 = Timestamp.nowMs()) throws -> [StoredOutage] {
        let wanted = Set(sources)
        let outages = try database.writer.write { db -> [StoredOutage] in
            let rows = try Row.fetchAll(db, sql: "SELECT * FROM outages")
            // Every source's name is read only when some outage needs one (most starts: none).
            let names = rows.isEmpty ? [:] : try SourceIds.names(db)
            var kept: [StoredOutage] = []
            for row in rows {
                let id: DatabaseValue = row["source_id"]
                guard !forget, let name = Int64.fromDatabaseValue(id).flatMap({ names[$0] }), wanted.contains(name),
                    let outage = StoredOutage(source: name, row, nowMs: nowMs)
                else {
                    try db.execute(sql: "DELETE FROM outages WHERE source_id = ?", arguments: [id])
                    continue
                }
                kept.append(outage)
            }
            return kept
        }
        queue.withLock { $0.outages.formUnion(outages.map(\.source)) }
        return outages
    }

    /// Loads the last two minutes of rollups, so a restart adds to them instead of replacing them.
    package func loadRecentRollups() throws {
        let since = Timestamp.nowMs() - 120_000
        let rows = try database.writer.read { db -> [(String, Int64, Rollup)] in
            let names = try SourceIds.names(db)
            return try Row.fetchAll(db, sql: "SELECT * FROM minute_rollups WHERE minute_ms >= ?", arguments: [since]).compactMap { row in
                names[row["source_id"]].map { ($0, row["minute_ms"], RecordWriter.rollup(row)) }
            }
        }
        queue.withLock { queue in
            // A result recorded before the load stays as it is (not stored): its first write
            // adds it to the row found then.
            for (source, minute, rollup) in rows where queue.minutes[minute]?.bySource[source] == nil {
                queue.minutes[minute, default: MinuteRollups()].bySource[source] = Minute(rollup: rollup, stored: true)
            }
        }
    }

    static func describe(_ error: any Error, path: String) -> String {
        if let error = error as? DatabaseError {
            switch error.resultCode {
            case .SQLITE_FULL: return "the disk holding \(path) is full"
            case .SQLITE_READONLY: return "\(path) is read-only"
            case .SQLITE_IOERR: return "I/O error on \(path): \(error.message ?? "")"
            default: return error.message ?? "\(error)"
            }
        }
        return "\(error)"
    }
}
