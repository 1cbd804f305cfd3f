import Foundation
import GRDB
import Logging
import LookoutCore
import ResilientHTTP

/// Rolls finished hours and days up (`RollupTiers`), then deletes old rows in small chunks, each
/// its own short transaction, so the writer is never held for long: raw probe results after
/// `raw_retention`; minute, hour and day rollups after their tier's retention, and never before
/// the next tier holds them; everything else after `retention`. Undelivered outbox rows and
/// firing alerts are never pruned.
package struct Retention: Sendable {
    package var retentionMs: Int64
    package var rawRetentionMs: Int64
    /// nil: the tiers are rolled up but their rows are left alone (`lookout db prune` without
    /// the config, which knows how long they are kept).
    package var tiers: RollupRetention?
    /// How long minute rows may still change: the longest call of any source, and a margin.
    package var rollupGraceMs: Int64
    /// Raw results inside an outage that ended less than this ago are kept whatever
    /// `raw_retention` says: an SLA claim may still need them (`SLAStore.keep(for:)`).
    package var claimKeepMs: Int64
    package static let chunk = 2_000
    /// `sla_outages` rows are kept at least this long (a year of reports, and a claim after it).
    package static let slaHistoryMs: Int64 = 400 * 86_400_000

    package init(
        retention: Duration, rawRetention: Duration, tiers: RollupRetention?, rollupGrace: Duration = .milliseconds(RollupTiers.graceMs),
        claimKeep: Duration = SLAStore.defaultKeep
    ) {
        retentionMs = retention.totalMilliseconds
        rawRetentionMs = rawRetention.totalMilliseconds
        self.tiers = tiers
        rollupGraceMs = rollupGrace.totalMilliseconds
        claimKeepMs = claimKeep.totalMilliseconds
    }

    /// Rolls up, then deletes what is older than the limits; returns the rows deleted per table.
    @discardableResult
    package func prune(_ database: LookoutDatabase, nowMs: Int64) throws -> [String: Int] {
        try RollupTiers.advance(database, nowMs: nowMs, graceMs: rollupGraceMs)
        let (hourMark, dayMark) = try database.writer.read { db in (try RollupTiers.mark(db, "hour"), try RollupTiers.mark(db, "day")) }
        let old = nowMs - retentionMs
        let raw = nowMs - rawRetentionMs
        // A finer row goes only once the coarser tier holds it, and a whole hour (or day) at a
        // time, so every hour is either in the minute rows or in the hourly tier, never split.
        let never = Int64.min / 2
        let minuteCutoff = tiers.map { HealthWindow.floor(min(nowMs - $0.minute.totalMilliseconds, hourMark ?? never), to: HealthWindow.hour) } ?? never
        let hourCutoff = tiers.map { HealthWindow.floor(min(nowMs - $0.hour.totalMilliseconds, dayMark ?? never), to: HealthWindow.day) } ?? never
        let dayCutoff = tiers.map { nowMs - $0.day.totalMilliseconds } ?? never
        let plans: [(String, String, Int64)] = [
            ("error_records", "SELECT rowid FROM error_records WHERE ts_ms < ? LIMIT \(Retention.chunk)", old),
            ("breaker_transitions", "SELECT rowid FROM breaker_transitions WHERE ts_ms < ? LIMIT \(Retention.chunk)", old),
            (
                "alerts",
                "SELECT rowid FROM alerts WHERE state = 'resolved' AND resolved_at_ms < ? AND id NOT IN (SELECT alert_id FROM alert_outbox WHERE delivered_at_ms IS NULL) LIMIT \(Retention.chunk)",
                old
            ),
            // A firing alert keeps its delivered rows: they say which hooks must hear it resolve.
            (
                "alert_outbox",
                "SELECT rowid FROM alert_outbox WHERE delivered_at_ms IS NOT NULL AND delivered_at_ms < ? AND alert_id NOT IN (SELECT id FROM alerts WHERE state = 'firing') LIMIT \(Retention.chunk)",
                old
            ),
            ("silences", "SELECT rowid FROM silences WHERE ends_at_ms < ? LIMIT \(Retention.chunk)", old),

            // An announcement goes with its timeline once it was resolved before the limit.
            (
                "announcement_updates",
                """
                SELECT rowid FROM announcement_updates WHERE announcement_id IN (SELECT announcement_id FROM announcement_updates
                GROUP BY announcement_id HAVING MAX(at_ms) < ? AND MAX(CASE state WHEN 'resolved' THEN at_ms END) = MAX(at_ms)) LIMIT \(Retention.chunk)
                """, old
            ),
            // (The cutoff is not needed here: an announcement without updates was pruned above.)
            (
                "announcements",
                "SELECT rowid FROM announcements WHERE id NOT IN (SELECT announcement_id FROM announcement_updates) AND ? IS NOT NULL LIMIT \(Retention.chunk)",
                old
            ),
        ]
        // Counted under the names of SPEC section 5 (the views of the history tables).
        var statements = plans.map { (table: $0.0, sql: "DELETE FROM \($0.0) WHERE rowid IN (\($0.1))", cutoff: $0.2, tier: String?.none) }
        statements.append(
            (
                "sla_vendor_maintenance",
                """
                DELETE FROM sla_vendor_maintenance WHERE (source_id, started_ms) IN
                  (SELECT source_id, started_ms FROM sla_vendor_maintenance WHERE ended_ms < ? LIMIT \(Retention.chunk))
                """, nowMs - max(retentionMs, Retention.slaHistoryMs, claimKeepMs), nil
            ))
        // Without a rowid: by its key. Kept a year past the longest claim window.
        statements.append(
            (
                "sla_outages",
                """
                DELETE FROM sla_outages WHERE (source_id, started_ms) IN
                  (SELECT source_id, started_ms FROM sla_outages WHERE ended_ms < ? LIMIT \(Retention.chunk))
                """, nowMs - max(retentionMs, Retention.slaHistoryMs, claimKeepMs), nil
            ))
        statements += [
            // Written in time order, without an index: deleted from the front. A row that started
            // before an older one finished waits behind it, at most the longest call.
            (HistoryTier.minute.view, Retention.deleteBefore(.minute), minuteCutoff, HistoryTier.minute.name),
            (HistoryTier.hour.view, Retention.deleteBefore(.hour), hourCutoff, HistoryTier.hour.name),
            // Keyed by source first: one seek per source, never a scan of every day.
            (
                HistoryTier.day.view,
                """
                DELETE FROM day_rollups WHERE (source_id, day_ms) IN (SELECT d.source_id, d.day_ms FROM sources s
                CROSS JOIN day_rollups d ON d.source_id = s.id AND d.day_ms < ? LIMIT \(Retention.chunk))
                """, dayCutoff, HistoryTier.day.name
            ),
        ]
        var deleted: [String: Int] = [:]
        deleted["probe_results"] = try pruneRaw(database, before: raw, nowMs: nowMs)
        for (table, statement, cutoff, tier) in statements {
            while true {
                let count = try database.writer.write { db -> Int in
                    try db.execute(sql: statement, arguments: [cutoff])
                    let count = db.changesCount
                    if let tier { try RecordWriter.addRowCounts([tier: -count], db) }
                    return count
                }
                deleted[table, default: 0] += count
                if count < Retention.chunk { break }
            }
        }
        return deleted
    }

    /// Deletes raw results before `cutoff` from the front, a chunk at a time, except those
    /// inside an outage whose claim window is open (SLA evidence): those stay, and the next chunk
    /// starts after them, so they never stall pruning. A chunk may hold young rows among old
    /// ones (a call that started before an older one finished): it goes on while any row of the
    /// chunk was old.
    func pruneRaw(_ database: LookoutDatabase, before cutoff: Int64, nowMs: Int64) throws -> Int {
        var after: Int64 = 0
        var total = 0
        let open = Int64.max
        while true {
            let (count, next) = try database.writer.write { db -> (Int, Int64?) in
                let chunk = try Row.fetchAll(
                    db, sql: "SELECT id, ts_ms FROM raw_results WHERE id > ? ORDER BY id LIMIT \(Retention.chunk)", arguments: [after])
                guard let last: Int64 = chunk.last?["id"], chunk.contains(where: { ($0["ts_ms"] as Int64? ?? .max) < cutoff }) else { return (0, nil) }
                try db.execute(
                    sql: """
                        DELETE FROM raw_results WHERE id > ? AND id <= ? AND ts_ms < ? AND NOT EXISTS (SELECT 1 FROM sla_outages o
                          WHERE o.source_id = raw_results.source_id AND o.started_ms <= raw_results.ts_ms
                          AND raw_results.ts_ms <= COALESCE(o.ended_ms, \(open)) AND COALESCE(o.ended_ms, \(open)) >= ?)
                        """, arguments: [after, last, cutoff, nowMs - claimKeepMs])
                let count = db.changesCount
                try RecordWriter.addRowCounts(["raw": -count], db)
                return (count, last)
            }
            total += count
            guard let next else { return total }
            after = next
        }
    }

    /// A chunk of a time-first tier before the cutoff, found by its key.
    static func deleteBefore(_ tier: HistoryTier) -> String {
        """
        DELETE FROM \(tier.table) WHERE (\(tier.time), source_id) IN
          (SELECT \(tier.time), source_id FROM \(tier.table) WHERE \(tier.time) < ? LIMIT \(Retention.chunk))
        """
    }

    /// Rolls up and prunes every 10 minutes until cancelled.
    package func run(_ database: LookoutDatabase, logger: Logger) async {
        while !Task.isCancelled {
            do {
                let deleted = try prune(database, nowMs: Timestamp.nowMs())
                let total = deleted.values.reduce(0, +)
                if total > 0 { logger.info("pruned old rows", metadata: ["rows": "\(total)"]) }
            } catch {
                logger.error("pruning failed", metadata: ["error": "\(error)"])
            }
            do { try await Task.sleep(for: .seconds(600)) } catch { return }
        }
    }
}
