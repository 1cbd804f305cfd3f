import Foundation
import GRDB
import LookoutCore

/// The `sla_outages` table — every outage by its source's policy, with the cause that opened it
/// and the vendor's acknowledgement — and the SLA reports built from it, the `runs` table (when
/// Lookout was not running) and the maintenance windows.
package struct SLAStore: Sendable {
    let database: LookoutDatabase

    package init(database: LookoutDatabase) {
        self.database = database
    }

    /// How long raw results of an outage are kept past its end when the config is not known
    /// (`lookout db prune` without it): the default `claim_within` and a month.
    package static let defaultKeep: Duration = .seconds((60 + 31) * 86_400)

    /// How long raw results of an outage are kept past its end for `sources`: the longest claim
    /// window after a period that may end up to a period after the outage; zero when no source
    /// has an `sla`.
    package static func keep(for sources: [SourceConfig]) -> Duration {
        sources.compactMap(\.sla).map { $0.claimWithin + .seconds(($0.period == .month ? 31 : 7) * 86_400) }.max() ?? .zero
    }

    /// Stores an outage's start or end (the writer's transaction). An end closes every open row
    /// of the source that began before it, so one whose start a restart saw differently (a
    /// window policy restored from the failure run) is still closed; with none open it is
    /// stored whole, its cause unknown.
    static func write(_ edge: OutageEdge, location: String?, sourceId: Int64, _ db: Database) throws {
        switch edge.change {
        case .opened(let sinceMs):
            let failure = edge.cause.failure
            try db.execute(
                sql: """
                    INSERT INTO sla_outages (source_id, started_ms, ended_ms, failed_probes, category, reason, http_status, detail, server_message, location)
                    VALUES (?, ?, NULL, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (source_id, started_ms) DO NOTHING
                    """,
                arguments: [
                    sourceId, sinceMs, 1, failure?.category.rawValue ?? "unknown", failure?.reason ?? "unknown", edge.cause.httpStatus,
                    edge.cause.message ?? failure?.detail ?? "", failure?.serverMessage, location,
                ])
        case .closed(let sinceMs, let upAtMs, let failedProbes):
            try db.execute(
                sql:
                    "UPDATE sla_outages SET ended_ms = MAX(started_ms, ?), failed_probes = MAX(failed_probes, ?) WHERE source_id = ? AND ended_ms IS NULL AND started_ms <= ?",
                arguments: [upAtMs, failedProbes, sourceId, upAtMs])
            guard db.changesCount == 0 else { return }
            try db.execute(
                sql: """
                    INSERT INTO sla_outages (source_id, started_ms, ended_ms, failed_probes, category, reason, detail, location)
                    VALUES (?, ?, ?, ?, 'unknown', 'unknown', '', ?) ON CONFLICT (source_id, started_ms) DO UPDATE SET ended_ms = excluded.ended_ms
                    """, arguments: [sourceId, sinceMs, max(sinceMs, upAtMs), failedProbes, location])
        }
    }

    /// Notes the vendor's acknowledgement of `source`'s outage that began at `downSinceMs`.
    static func acknowledge(source: String, downSinceMs: Int64, atMs: Int64, incident: String?, _ db: Database) throws {
        try db.execute(
            sql: """
                UPDATE sla_outages SET vendor_acknowledged_ms = ?, vendor_incident = ?
                WHERE source_id = (SELECT id FROM sources WHERE name = ?) AND vendor_acknowledged_ms IS NULL
                  AND started_ms <= ? AND (ended_ms IS NULL OR ended_ms >= ?)
                """, arguments: [atMs, incident, source, max(atMs, downSinceMs), downSinceMs])
    }

    /// Notes that each of `sources`' vendors says maintenance is in progress at `nowMs`: a row
    /// seen within `continuesWithinMs` goes on to now, otherwise a new one begins.
    package func noteVendorMaintenance(_ sources: [String], nowMs: Int64, continuesWithinMs: Int64) throws {
        guard !sources.isEmpty else { return }
        try database.writer.write { db in
            for name in sources {
                try db.execute(sql: "INSERT INTO sources (name, first_seen_ms) VALUES (?, ?) ON CONFLICT (name) DO NOTHING", arguments: [name, nowMs])
                guard let id = try SourceIds.id(of: name, db) else { continue }
                try db.execute(
                    sql: """
                        UPDATE sla_vendor_maintenance SET ended_ms = ? WHERE source_id = ? AND started_ms = (SELECT MAX(started_ms)
                          FROM sla_vendor_maintenance WHERE source_id = ? AND ended_ms >= ? AND ended_ms <= ?)
                        """, arguments: [nowMs, id, id, nowMs - continuesWithinMs, nowMs])
                if db.changesCount == 0 {
                    try db.execute(
                        sql: "INSERT OR IGNORE INTO sla_vendor_maintenance (source_id, started_ms, ended_ms) VALUES (?, ?, ?)", arguments: [id, nowMs, nowMs])
                }
            }
        }
    }

    /// Each source's vendor maintenance that touches `[fromMs, toMs)`, by name.
    package func vendorMaintenance(fromMs: Int64, toMs: Int64) throws -> [String: Intervals] {
        try database.writer.read { db in
            let names = try SourceIds.names(db)
            var found: [String: Intervals] = [:]
            let rows = try Row.fetchCursor(
                db, sql: "SELECT source_id, started_ms, ended_ms FROM sla_vendor_maintenance WHERE started_ms < ? AND ended_ms > ?", arguments: [toMs, fromMs])
            while let row = try rows.next() {
                guard let id = row.integer("source_id"), let name = names[id], let start = row.integer("started_ms"), let end = row.integer("ended_ms"),
                    start < end
                else { continue }
                found[name, default: Intervals()].insert(start..<end)
            }
            return found
        }
    }

    /// The stored outages of each source that touch `[fromMs, toMs)`, by source name. Rows are
    /// read as a damaged file may hold them: one with a value of the wrong type is left out.
    package func outages(fromMs: Int64, toMs: Int64) throws -> [String: [SLAOutage]] {
        try database.writer.read { db in
            let names = try SourceIds.names(db)
            var found: [String: [SLAOutage]] = [:]
            let rows = try Row.fetchCursor(
                db, sql: "SELECT * FROM sla_outages WHERE started_ms < ? AND (ended_ms IS NULL OR ended_ms > ?)", arguments: [toMs, fromMs])
            while let row = try rows.next() {
                guard let id = row.integer("source_id"), let name = names[id], let started = row.integer("started_ms"),
                    let category = row.text("category"), let reason = row.text("reason")
                else { continue }
                let ended = row.integer("ended_ms").flatMap { $0 >= started ? $0 : nil }
                found[name, default: []].append(
                    SLAOutage(
                        startedMs: started, endedMs: ended, failedProbes: row.boundedCount("failed_probes") ?? 0, category: category, reason: reason,
                        httpStatus: row.integer("http_status").flatMap { (100...999).contains($0) ? Int($0) : nil }, detail: row.text("detail") ?? "",
                        serverMessage: row.text("server_message"), location: row.text("location"),
                        vendorAcknowledgedMs: row.integer("vendor_acknowledged_ms"), vendorIncident: row.text("vendor_incident")))
            }
            return found
        }
    }

    /// When Lookout was not running within `[fromMs, toMs)`: before its first run, between runs
    /// (from a run's last heartbeat to the next start, when longer than a restart), and after the
    /// last heartbeat when that is older than two heartbeats at `nowMs` (read while it is
    /// stopped). With `firstSeen`, when each source was first configured.
    package func unmeasured(fromMs: Int64, toMs: Int64, nowMs: Int64) throws -> (all: Intervals, firstSeenMs: [String: Int64]) {
        try database.writer.read { db in
            var gaps = Intervals()
            let runs = try Row.fetchAll(db, sql: "SELECT started_at_ms, alive_at_ms FROM runs ORDER BY started_at_ms").compactMap { row -> (Int64, Int64)? in
                guard let started = row.integer("started_at_ms"), let alive = row.integer("alive_at_ms"), started <= alive else { return nil }
                return (started, alive)
            }
            guard let first = runs.first else { return (Intervals([fromMs..<toMs]), [:]) }
            gaps.insert(fromMs..<max(fromMs, first.0))
            var lastAlive = first.1
            for (started, alive) in runs.dropFirst() {
                if started - lastAlive > RunStore.minimumGap { gaps.insert(lastAlive..<started) }
                lastAlive = max(lastAlive, alive)
            }
            let heartbeat = RunStore.heartbeat.totalMilliseconds
            if nowMs - lastAlive > 2 * heartbeat { gaps.insert(lastAlive..<max(lastAlive, nowMs)) }
            var firstSeen: [String: Int64] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT name, first_seen_ms FROM sources") {
                if let name = row.text("name"), let seen = row.integer("first_seen_ms") { firstSeen[name] = seen }
            }
            return (gaps.clamped(to: fromMs..<toMs), firstSeen)
        }
    }
}
