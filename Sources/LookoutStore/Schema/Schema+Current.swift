import GRDB

// The schema the migrations in Schema.swift lead to, as SQLite keeps it (`sqlite_master`, in the
// order the objects were made), with the rows they seed: a new database is made from it in one
// transaction instead of through all sixteen migrations in turn. `SchemaTests` migrates a
// database the long way and compares every object's SQL and every row with one made from this;
// when a migration is added it fails, and prints the text that belongs here (until then, new
// databases take the new migration after the text, as any other database does).
extension LookoutDatabase {
    /// How `prepareSchema` brought a database to the current schema.
    package enum SchemaPreparation: Sendable, Equatable {
        /// Made from `currentSchema` (it had no tables), then any migration after the text's.
        case madeFromText
        /// Through the migrations it had not had (none, when it was current).
        case migrated
    }

    /// Brings `writer` to the current schema. A database without a single table (a new file,
    /// `:memory:`) is made from `currentSchema` in one exclusive transaction, the migrations the
    /// text covers marked as run; any migration after those, and every other database, goes
    /// through the migrator. At a start at 1,000 sources on `:memory:` the migrations took 29.7 M
    /// instructions of 214 M (GRDB's table builders, and a transaction, a foreign-key check and a
    /// schema reload for each).
    @discardableResult
    package static func prepareSchema(_ writer: any DatabaseWriter) throws -> SchemaPreparation {
        try prepareSchema(writer, migrator: migrator, schema: currentSchema, covering: currentSchemaCovers)
    }

    /// `prepareSchema` with the migrations, the text and the last migration it covers given.
    package static func prepareSchema(
        _ writer: any DatabaseWriter, migrator: DatabaseMigrator, schema: String, covering last: String
    ) throws -> SchemaPreparation {
        func isEmpty(_ db: Database) throws -> Bool { try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master") == 0 }
        var made = false
        // A text that names no registered migration covers none: the migrator does it all.
        // Emptiness is looked at without the write lock first: a database in use is never empty.
        if let end = migrator.migrations.firstIndex(of: last), try writer.read(isEmpty) {
            try writer.barrierWriteWithoutTransaction { db in
                try db.inTransaction(.exclusive) {
                    // Again under the lock: another process may have made it meanwhile.
                    guard try isEmpty(db) else { return .commit }
                    try db.execute(sql: schema)
                    for identifier in migrator.migrations[...end] {
                        try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES (?)", arguments: [identifier])
                    }
                    made = true
                    return .commit
                }
            }
        }
        try migrator.migrate(writer)
        return made ? .madeFromText : .migrated
    }

    /// The last migration `currentSchema` leads to.
    package static let currentSchemaCovers = "v16: sla vendor maintenance"

    /// What `prepareSchema` makes a new database from: the text `SchemaTests` prints.
    package static let currentSchema = """
        CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
        CREATE TABLE "error_records" ("id" INTEGER PRIMARY KEY AUTOINCREMENT, "ts_ms" INTEGER NOT NULL, "source" TEXT NOT NULL, "category" TEXT NOT NULL, "reason" TEXT NOT NULL, "http_status" INTEGER, "curl_code" INTEGER, "message" TEXT NOT NULL, "server_message" TEXT, "attempt" INTEGER NOT NULL, "was_retried" BOOLEAN NOT NULL, "retry_succeeded" BOOLEAN NOT NULL);
        CREATE INDEX "error_records_source_ts" ON "error_records"("source", "ts_ms");
        CREATE INDEX "error_records_ts" ON "error_records"("ts_ms");
        CREATE TABLE "breaker_transitions" ("id" INTEGER PRIMARY KEY AUTOINCREMENT, "ts_ms" INTEGER NOT NULL, "source" TEXT NOT NULL, "from_state" TEXT NOT NULL, "to_state" TEXT NOT NULL, "consecutive_failures" INTEGER NOT NULL, "open_timeout_ms" INTEGER NOT NULL);
        CREATE INDEX "breaker_transitions_source_ts" ON "breaker_transitions"("source", "ts_ms");
        CREATE TABLE "breaker_state" ("source" TEXT PRIMARY KEY NOT NULL, "state" TEXT NOT NULL, "consecutive_failures" INTEGER NOT NULL, "consecutive_successes" INTEGER NOT NULL, "opened_at_ms" INTEGER, "next_attempt_at_ms" INTEGER, "open_count" INTEGER NOT NULL, "open_timeout_ms" INTEGER NOT NULL, "updated_at_ms" INTEGER NOT NULL);
        CREATE TABLE "alerts" ("id" INTEGER PRIMARY KEY AUTOINCREMENT, "fingerprint" TEXT NOT NULL, "rule" TEXT NOT NULL, "source" TEXT, "severity" TEXT NOT NULL, "state" TEXT NOT NULL, "started_at_ms" INTEGER NOT NULL, "resolved_at_ms" INTEGER, "summary" TEXT NOT NULL, "labels" TEXT NOT NULL, "annotations" TEXT NOT NULL);
        CREATE INDEX "alerts_fingerprint" ON "alerts"("fingerprint", "state");
        CREATE TABLE "alert_outbox" ("id" INTEGER PRIMARY KEY AUTOINCREMENT, "hook" TEXT NOT NULL, "alert_id" INTEGER NOT NULL REFERENCES "alerts"("id") ON DELETE CASCADE, "payload" TEXT NOT NULL, "created_at_ms" INTEGER NOT NULL, "attempts" INTEGER NOT NULL DEFAULT 0, "next_attempt_at_ms" INTEGER NOT NULL, "delivered_at_ms" INTEGER, "last_error" TEXT, "set_aside_at_ms" INTEGER);
        CREATE INDEX "alert_outbox_pending" ON "alert_outbox"("hook", "delivered_at_ms", "id");
        CREATE TABLE "silences" ("id" INTEGER PRIMARY KEY AUTOINCREMENT, "matchers" TEXT NOT NULL, "starts_at_ms" INTEGER NOT NULL, "ends_at_ms" INTEGER NOT NULL, "comment" TEXT NOT NULL, "created_by" TEXT);
        CREATE TABLE "maintenance_windows" ("id" INTEGER PRIMARY KEY AUTOINCREMENT, "sources" TEXT NOT NULL, "matchers" TEXT NOT NULL, "starts_at_ms" INTEGER NOT NULL, "ends_at_ms" INTEGER NOT NULL, "note" TEXT NOT NULL, "created_by" TEXT, "recurring" TEXT);
        CREATE TABLE "announcements" ("id" INTEGER PRIMARY KEY AUTOINCREMENT, "title" TEXT NOT NULL, "sources" TEXT NOT NULL, "created_by" TEXT);
        CREATE TABLE "announcement_updates" ("id" INTEGER PRIMARY KEY AUTOINCREMENT, "announcement_id" INTEGER NOT NULL REFERENCES "announcements"("id") ON DELETE CASCADE, "at_ms" INTEGER NOT NULL, "state" TEXT NOT NULL, "message" TEXT NOT NULL);
        CREATE INDEX "announcement_updates_announcement" ON "announcement_updates"("announcement_id", "at_ms");
        CREATE TABLE "rollup_progress" ("tier" TEXT PRIMARY KEY NOT NULL, "done_until_ms" INTEGER NOT NULL) WITHOUT ROWID;
        CREATE TABLE sources (
          id INTEGER PRIMARY KEY,
          name TEXT NOT NULL UNIQUE,
          first_seen_ms INTEGER NOT NULL,
          removed_at_ms INTEGER
        );
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
        CREATE TABLE minute_rollups (
          minute_ms INTEGER NOT NULL,
          source_id INTEGER NOT NULL,
          probes INTEGER NOT NULL,
          failures INTEGER NOT NULL,
          retried INTEGER NOT NULL,
          retry_succeeded INTEGER NOT NULL,
          duration_us_sum INTEGER NOT NULL,
          duration_us_max INTEGER NOT NULL,
          latency BLOB NOT NULL,
          PRIMARY KEY (minute_ms, source_id)
        ) WITHOUT ROWID;
        CREATE TABLE hour_rollups (
          hour_ms INTEGER NOT NULL,
          source_id INTEGER NOT NULL,
          probes INTEGER NOT NULL,
          failures INTEGER NOT NULL,
          retried INTEGER NOT NULL,
          retry_succeeded INTEGER NOT NULL,
          duration_us_sum INTEGER NOT NULL,
          duration_us_max INTEGER NOT NULL,
          latency BLOB NOT NULL,
          PRIMARY KEY (hour_ms, source_id)
        ) WITHOUT ROWID;
        CREATE TABLE day_rollups (
          day_ms INTEGER NOT NULL,
          source_id INTEGER NOT NULL,
          probes INTEGER NOT NULL,
          failures INTEGER NOT NULL,
          retried INTEGER NOT NULL,
          retry_succeeded INTEGER NOT NULL,
          duration_us_sum INTEGER NOT NULL,
          duration_us_max INTEGER NOT NULL,
          latency BLOB NOT NULL,
          PRIMARY KEY (source_id, day_ms)
        ) WITHOUT ROWID;
        CREATE TABLE tier_rows (tier TEXT PRIMARY KEY, rows INTEGER NOT NULL) WITHOUT ROWID;
        INSERT INTO tier_rows VALUES ('day', 0), ('hour', 0), ('minute', 0), ('raw', 0);
        CREATE VIEW probe_results AS
          SELECT r.id, r.ts_ms, s.name AS source, r.ok, r.category, r.reason, r.http_status, r.attempts,
                 r.duration_us / 1000.0 AS duration_ms, r.bytes, r.message, r.fallback
          FROM raw_results r JOIN sources s ON s.id = r.source_id;
        CREATE VIEW probe_rollups AS
          SELECT t.minute_ms, s.name AS source, t.probes, t.failures, t.retried, t.retry_succeeded,
                 t.duration_us_sum / 1000.0 AS duration_ms_sum, t.duration_us_max / 1000.0 AS duration_ms_max,
                 t.latency AS latency_buckets
          FROM minute_rollups t JOIN sources s ON s.id = t.source_id;
        CREATE VIEW probe_rollups_hourly AS
          SELECT t.hour_ms, s.name AS source, t.probes, t.failures, t.retried, t.retry_succeeded,
                 t.duration_us_sum / 1000.0 AS duration_ms_sum, t.duration_us_max / 1000.0 AS duration_ms_max,
                 t.latency AS latency_buckets
          FROM hour_rollups t JOIN sources s ON s.id = t.source_id;
        CREATE VIEW probe_rollups_daily AS
          SELECT t.day_ms, s.name AS source, t.probes, t.failures, t.retried, t.retry_succeeded,
                 t.duration_us_sum / 1000.0 AS duration_ms_sum, t.duration_us_max / 1000.0 AS duration_ms_max,
                 t.latency AS latency_buckets
          FROM day_rollups t JOIN sources s ON s.id = t.source_id;
        CREATE TABLE "runs" ("started_at_ms" INTEGER PRIMARY KEY NOT NULL, "alive_at_ms" INTEGER NOT NULL) WITHOUT ROWID;
        CREATE TABLE "outages" ("source_id" INTEGER PRIMARY KEY NOT NULL, "down_since_ms" INTEGER NOT NULL, "failed_probes" INTEGER NOT NULL, "last_failed_ms" INTEGER NOT NULL, "category" TEXT NOT NULL, "reason" TEXT NOT NULL, "http_status" INTEGER, "curl_code" INTEGER, "detail" TEXT NOT NULL, "server_message" TEXT) WITHOUT ROWID;
        CREATE INDEX "alert_outbox_alert" ON "alert_outbox"("alert_id");
        CREATE TABLE "vendor_records" ("vendor" TEXT PRIMARY KEY NOT NULL, "acknowledged" INTEGER NOT NULL, "unacknowledged" INTEGER NOT NULL, "lag_seconds_sum" DOUBLE NOT NULL) WITHOUT ROWID;
        CREATE TABLE "vendor_outages" ("source" TEXT PRIMARY KEY NOT NULL, "vendor" TEXT NOT NULL, "down_since_ms" INTEGER NOT NULL, "acknowledged_at_ms" INTEGER, "incident" TEXT) WITHOUT ROWID;
        CREATE TABLE "push_calls" ("source" TEXT PRIMARY KEY NOT NULL, "last_success_ms" INTEGER, "last_failure_ms" INTEGER, "message" TEXT, "exit_status" INTEGER) WITHOUT ROWID;
        CREATE TABLE "rdap_bootstrap" ("id" INTEGER PRIMARY KEY NOT NULL, "fetched_at_ms" INTEGER NOT NULL, "body" BLOB NOT NULL) WITHOUT ROWID;
        CREATE TABLE "sla_outages" ("source_id" INTEGER NOT NULL, "started_ms" INTEGER NOT NULL, "ended_ms" INTEGER, "failed_probes" INTEGER NOT NULL, "category" TEXT NOT NULL, "reason" TEXT NOT NULL, "http_status" INTEGER, "detail" TEXT NOT NULL, "server_message" TEXT, "location" TEXT, "vendor_acknowledged_ms" INTEGER, "vendor_incident" TEXT, PRIMARY KEY ("source_id", "started_ms")) WITHOUT ROWID;
        CREATE TABLE "sla_vendor_maintenance" ("source_id" INTEGER NOT NULL, "started_ms" INTEGER NOT NULL, "ended_ms" INTEGER NOT NULL, PRIMARY KEY ("source_id", "started_ms")) WITHOUT ROWID;
        """
}
