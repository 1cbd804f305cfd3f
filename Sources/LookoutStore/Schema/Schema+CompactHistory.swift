import Foundation
import GRDB

extension LookoutDatabase {
    /// v7: sources by integer id, history rows without the name and with latency as a blob.
    ///
    /// - `sources` gives each configured name an id for good; a rename in the config
    ///   (`renamed_from`) moves the name, a removal leaves the row, so history keeps its owner.
    /// - `raw_results` has no index: it is written in time order and pruned from the front.
    /// - `minute_rollups` and `hour_rollups` are keyed by time first (the writer and the rollup
    ///   step append at the end; restores and windows read one stretch); one source's recent
    ///   minutes or hours are read by key, one minute or hour at a time.
    /// - `day_rollups` is keyed by source first: one source's year is one stretch, and a window
    ///   over every source is one stretch per source.
    /// - `tier_rows` counts each table's rows, kept in the same transactions as the rows.
    /// - The tables of SPEC section 5 become views with the documented columns.
    static func compactHistory(_ db: Database) throws {
        let toBlob = DatabaseFunction("lookout_latency_blob", argumentCount: 1, pure: true) { values in
            LatencyBlob.encode(LatencyBlob.parseText(String.fromDatabaseValue(values[0]) ?? ""))
        }
        db.add(function: toBlob)
        defer { db.remove(function: toBlob) }
        try db.execute(
            sql: """
                CREATE TABLE sources (
                  id INTEGER PRIMARY KEY,
                  name TEXT NOT NULL UNIQUE,
                  first_seen_ms INTEGER NOT NULL,
                  removed_at_ms INTEGER
                );
                INSERT INTO sources (name, first_seen_ms)
                  SELECT source, MIN(t) FROM (
                    SELECT source, MIN(ts_ms) AS t FROM probe_results GROUP BY source
                    UNION ALL SELECT source, MIN(minute_ms) FROM probe_rollups GROUP BY source
                    UNION ALL SELECT source, MIN(hour_ms) FROM probe_rollups_hourly GROUP BY source
                    UNION ALL SELECT source, MIN(day_ms) FROM probe_rollups_daily GROUP BY source)
                  GROUP BY source ORDER BY source;

                CREATE TABLE raw_results (
                  id INTEGER PRIMARY KEY,
                  ts_ms INTEGER NOT NULL,
                  source_id INTEGER NOT NULL,
                  ok INTEGER NOT NULL,
                  category TEXT,
                  reason TEXT,
                  http_status INTEGER,
                  attempts INTEGER NOT NULL,
                  duration_us INTEGER NOT NULL,
                  bytes INTEGER NOT NULL,
                  message TEXT,
                  fallback TEXT
                );
                INSERT INTO raw_results
                  SELECT r.id, r.ts_ms, s.id, r.ok, r.category, r.reason, r.http_status, r.attempts,
                         CAST(ROUND(MAX(r.duration_ms, 0) * 1000) AS INTEGER), r.bytes, r.message, r.fallback
                  FROM probe_results r JOIN sources s ON s.name = r.source ORDER BY r.id;
                DROP TABLE probe_results;
                """)
        for tier in HistoryTier.all {
            try db.execute(
                sql: """
                    CREATE TABLE \(tier.table) (
                      \(tier.time) INTEGER NOT NULL,
                      source_id INTEGER NOT NULL,
                      probes INTEGER NOT NULL,
                      failures INTEGER NOT NULL,
                      retried INTEGER NOT NULL,
                      retry_succeeded INTEGER NOT NULL,
                      duration_us_sum INTEGER NOT NULL,
                      duration_us_max INTEGER NOT NULL,
                      latency BLOB NOT NULL,
                      PRIMARY KEY (\(tier.timeFirst ? "\(tier.time), source_id" : "source_id, \(tier.time)"))
                    ) WITHOUT ROWID;
                    INSERT INTO \(tier.table)
                      SELECT t.\(tier.time), s.id, t.probes, t.failures, t.retried, t.retry_succeeded,
                             CAST(ROUND(MAX(t.duration_ms_sum, 0) * 1000) AS INTEGER), CAST(ROUND(MAX(t.duration_ms_max, 0) * 1000) AS INTEGER),
                             lookout_latency_blob(t.latency_buckets)
                      FROM \(tier.view) t JOIN sources s ON s.name = t.source
                      ORDER BY \(tier.timeFirst ? "t.\(tier.time), s.id" : "s.id, t.\(tier.time)");
                    DROP TABLE \(tier.view);
                    """)
        }
        try db.execute(
            sql: """
                CREATE TABLE tier_rows (tier TEXT PRIMARY KEY, rows INTEGER NOT NULL) WITHOUT ROWID;
                INSERT INTO tier_rows
                  SELECT 'raw', COUNT(*) FROM raw_results
                  UNION ALL SELECT 'minute', COUNT(*) FROM minute_rollups
                  UNION ALL SELECT 'hour', COUNT(*) FROM hour_rollups
                  UNION ALL SELECT 'day', COUNT(*) FROM day_rollups;

                CREATE VIEW probe_results AS
                  SELECT r.id, r.ts_ms, s.name AS source, r.ok, r.category, r.reason, r.http_status, r.attempts,
                         r.duration_us / 1000.0 AS duration_ms, r.bytes, r.message, r.fallback
                  FROM raw_results r JOIN sources s ON s.id = r.source_id;
                """)
        for tier in HistoryTier.all {
            try db.execute(
                sql: """
                    CREATE VIEW \(tier.view) AS
                      SELECT t.\(tier.time), s.name AS source, t.probes, t.failures, t.retried, t.retry_succeeded,
                             t.duration_us_sum / 1000.0 AS duration_ms_sum, t.duration_us_max / 1000.0 AS duration_ms_max,
                             t.latency AS latency_buckets
                      FROM \(tier.table) t JOIN sources s ON s.id = t.source_id;
                    """)
        }
    }
}

/// One table of rollups: its name, the name of the view with SPEC section 5's columns, and the
/// column of its minute, hour or day.
package struct HistoryTier: Sendable {
    package var name: String
    package var table: String
    package var view: String
    package var time: String
    package var widthMs: Int64
    /// Keyed (time, source) rather than (source, time).
    package var timeFirst: Bool

    package static let minute = HistoryTier(
        name: "minute", table: "minute_rollups", view: "probe_rollups", time: "minute_ms", widthMs: 60_000, timeFirst: true)
    package static let hour = HistoryTier(
        name: "hour", table: "hour_rollups", view: "probe_rollups_hourly", time: "hour_ms", widthMs: 3_600_000, timeFirst: true)
    package static let day = HistoryTier(
        name: "day", table: "day_rollups", view: "probe_rollups_daily", time: "day_ms", widthMs: 86_400_000, timeFirst: false)
    package static let all = [minute, hour, day]
}
