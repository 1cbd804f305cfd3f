import GRDB
import LookoutCore

// The schema: one migration per version, never changed once released (a database written by
// an older Lookout is upgraded through each in turn).
extension LookoutDatabase {
    package static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: probe_results") { db in
            try db.create(table: "probe_results") { table in
                table.autoIncrementedPrimaryKey("id")
                table.column("ts_ms", .integer).notNull()
                table.column("source", .text).notNull()
                table.column("ok", .boolean).notNull()
                table.column("category", .text)
                table.column("reason", .text)
                table.column("http_status", .integer)
                table.column("attempts", .integer).notNull()
                table.column("duration_ms", .double).notNull()
                table.column("bytes", .integer).notNull()
                table.column("message", .text)
            }
            try db.create(index: "probe_results_source_ts", on: "probe_results", columns: ["source", "ts_ms"])
            try db.create(index: "probe_results_ts", on: "probe_results", columns: ["ts_ms"])
        }
        migrator.registerMigration("v2: records, rollups, breakers, alerts, outbox") { db in
            try db.alter(table: "probe_results") { table in
                table.add(column: "fallback", .text)
            }
            try db.create(table: "probe_rollups") { table in LookoutDatabase.textRollupColumns(table, time: "minute_ms") }
            try db.create(index: "probe_rollups_minute", on: "probe_rollups", columns: ["minute_ms"])
            try db.create(table: "error_records") { table in
                table.autoIncrementedPrimaryKey("id")
                table.column("ts_ms", .integer).notNull()
                table.column("source", .text).notNull()
                table.column("category", .text).notNull()
                table.column("reason", .text).notNull()
                table.column("http_status", .integer)
                table.column("curl_code", .integer)
                table.column("message", .text).notNull()
                table.column("server_message", .text)
                table.column("attempt", .integer).notNull()
                table.column("was_retried", .boolean).notNull()
                table.column("retry_succeeded", .boolean).notNull()
            }
            try db.create(index: "error_records_source_ts", on: "error_records", columns: ["source", "ts_ms"])
            try db.create(index: "error_records_ts", on: "error_records", columns: ["ts_ms"])
            try db.create(table: "breaker_transitions") { table in
                table.autoIncrementedPrimaryKey("id")
                table.column("ts_ms", .integer).notNull()
                table.column("source", .text).notNull()
                table.column("from_state", .text).notNull()
                table.column("to_state", .text).notNull()
                table.column("consecutive_failures", .integer).notNull()
                table.column("open_timeout_ms", .integer).notNull()
            }
            try db.create(index: "breaker_transitions_source_ts", on: "breaker_transitions", columns: ["source", "ts_ms"])
            try db.create(table: "breaker_state") { table in
                table.primaryKey("source", .text)
                table.column("state", .text).notNull()
                table.column("consecutive_failures", .integer).notNull()
                table.column("consecutive_successes", .integer).notNull()
                table.column("opened_at_ms", .integer)
                table.column("next_attempt_at_ms", .integer)
                table.column("open_count", .integer).notNull()
                table.column("open_timeout_ms", .integer).notNull()
                table.column("updated_at_ms", .integer).notNull()
            }
            try db.create(table: "alerts") { table in
                table.autoIncrementedPrimaryKey("id")
                table.column("fingerprint", .text).notNull()
                table.column("rule", .text).notNull()
                table.column("source", .text)
                table.column("severity", .text).notNull()
                table.column("state", .text).notNull()
                table.column("started_at_ms", .integer).notNull()
                table.column("resolved_at_ms", .integer)
                table.column("summary", .text).notNull()
                table.column("labels", .text).notNull()
                table.column("annotations", .text).notNull()
            }
            try db.create(index: "alerts_fingerprint", on: "alerts", columns: ["fingerprint", "state"])
            try db.create(table: "alert_outbox") { table in
                table.autoIncrementedPrimaryKey("id")
                table.column("hook", .text).notNull()
                table.column("alert_id", .integer).notNull().references("alerts", onDelete: .cascade)
                table.column("payload", .text).notNull()
                table.column("created_at_ms", .integer).notNull()
                table.column("attempts", .integer).notNull().defaults(to: 0)
                table.column("next_attempt_at_ms", .integer).notNull()
                table.column("delivered_at_ms", .integer)
                table.column("last_error", .text)
            }
            try db.create(index: "alert_outbox_pending", on: "alert_outbox", columns: ["hook", "delivered_at_ms", "id"])
            try db.create(table: "silences") { table in
                table.autoIncrementedPrimaryKey("id")
                table.column("matchers", .text).notNull()
                table.column("starts_at_ms", .integer).notNull()
                table.column("ends_at_ms", .integer).notNull()
                table.column("comment", .text).notNull()
                table.column("created_by", .text)
            }
        }
        migrator.registerMigration("v3: forget /probe targets") { db in
            // Before this version every /probe target got a breaker row, and its failures error
            // records, named `probe:URL` — secrets in the target's query included. Configured
            // sources cannot contain ":", so this removes only those.
            // (From v7 on the history tables are views over rows keyed by id: nothing to do there.)
            for table in ["breaker_state", "breaker_transitions", "error_records", "probe_results", "probe_rollups"] where try db.tableExists(table) {
                try db.execute(sql: "DELETE FROM \(table) WHERE source LIKE 'probe:%'")
            }
        }
        migrator.registerMigration("v4: maintenance windows") { db in
            // Added through the admin API; the config's own windows live in the config.
            try db.create(table: "maintenance_windows") { table in
                table.autoIncrementedPrimaryKey("id")
                table.column("sources", .text).notNull()
                table.column("matchers", .text).notNull()
                table.column("starts_at_ms", .integer).notNull()
                table.column("ends_at_ms", .integer).notNull()
                table.column("note", .text).notNull()
                table.column("created_by", .text)
                // A recurring window: {"weekdays": [1, 7], "minute_of_day": 150, "duration_ms": …,
                // "time_zone": "Europe/Berlin"}; it recurs from starts_at until ends_at.
                table.column("recurring", .text)
            }
        }
        migrator.registerMigration("v5: announcements") { db in
            // Notes for the status page's readers posted through the admin API, each a timeline.
            try db.create(table: "announcements") { table in
                table.autoIncrementedPrimaryKey("id")
                table.column("title", .text).notNull()
                table.column("sources", .text).notNull()
                table.column("created_by", .text)
            }
            try db.create(table: "announcement_updates") { table in
                table.autoIncrementedPrimaryKey("id")
                table.column("announcement_id", .integer).notNull().references("announcements", onDelete: .cascade)
                table.column("at_ms", .integer).notNull()
                table.column("state", .text).notNull()
                table.column("message", .text).notNull()
            }
            try db.create(index: "announcement_updates_announcement", on: "announcement_updates", columns: ["announcement_id", "at_ms"])
        }
        migrator.registerMigration("v6: hourly and daily rollups") { db in
            // Finished hours of probe_rollups, and finished days of those (RollupTiers); the
            // columns are probe_rollups' with the hour or the day instead of the minute.
            for (table, time) in [("probe_rollups_hourly", "hour_ms"), ("probe_rollups_daily", "day_ms")] {
                // Keyed by time first: rolling up appends at the end, and a window over every
                // source reads one stretch of the table (90 days of 1,000 sources in a few ms);
                // one source's history goes through the (source, time) index.
                try db.create(table: table, options: .withoutRowID) { table in LookoutDatabase.textRollupColumns(table, time: time, timeFirst: true) }
                try db.create(index: "\(table)_source", on: table, columns: ["source", time])
            }
            // Where each tier is complete up to; the finer rows are pruned only behind it. The
            // first step after this migration folds every existing minute row into the tiers.
            try db.create(table: "rollup_progress", options: .withoutRowID) { table in
                table.column("tier", .text).notNull().primaryKey()
                table.column("done_until_ms", .integer).notNull()
            }
        }
        migrator.registerMigration("v7: source ids and compact history") { db in
            try LookoutDatabase.compactHistory(db)
        }
        migrator.registerMigration("v8: runs") { db in
            // Each start of serve and when it was last known alive (RunStore).
            try db.create(table: "runs", options: .withoutRowID) { table in
                table.column("started_at_ms", .integer).notNull().primaryKey()
                table.column("alive_at_ms", .integer).notNull()
            }
        }
        migrator.registerMigration("v9: outages") { db in
            // Each source's outage in progress: its first failed probe since the last success,
            // how many have failed, and the last failure's own fields, as `Failure` has them
            // (RecordWriter.loadOutages).
            try db.create(table: "outages", options: .withoutRowID) { table in
                table.column("source_id", .integer).notNull().primaryKey()
                table.column("down_since_ms", .integer).notNull()
                table.column("failed_probes", .integer).notNull()
                table.column("last_failed_ms", .integer).notNull()
                table.column("category", .text).notNull()
                table.column("reason", .text).notNull()
                table.column("http_status", .integer)
                table.column("curl_code", .integer)
                table.column("detail", .text).notNull()
                table.column("server_message", .text)
            }
        }
        migrator.registerMigration("v10: outbox by alert") { db in
            // An alert's resolve reads which hooks heard of it, and retention's delete of an
            // alert cascades to its outbox rows: both by alert_id, which was a full scan of a
            // table that gains a row per firing alert and Alertmanager hook a minute.
            try db.create(index: "alert_outbox_alert", on: "alert_outbox", columns: ["alert_id"])
        }
        migrator.registerMigration("v11: outbox rows set aside") { db in
            // A notification its receiver keeps refusing (400) is set aside, not retried forever
            // ahead of every later one; an admin call queues it again.
            try db.alter(table: "alert_outbox") { table in table.add(column: "set_aside_at_ms", .integer) }
        }
        migrator.registerMigration("v12: vendor records") { db in
            // How each vendor did on our outages, and the outages being followed against its
            // page, so a restart keeps both (VendorStore).
            try db.create(table: "vendor_records", options: .withoutRowID) { table in
                table.column("vendor", .text).notNull().primaryKey()
                table.column("acknowledged", .integer).notNull()
                table.column("unacknowledged", .integer).notNull()
                table.column("lag_seconds_sum", .double).notNull()
            }
            try db.create(table: "vendor_outages", options: .withoutRowID) { table in
                table.column("source", .text).notNull().primaryKey()
                table.column("vendor", .text).notNull()
                table.column("down_since_ms", .integer).notNull()
                table.column("acknowledged_at_ms", .integer)
                table.column("incident", .text)
            }
        }
        migrator.registerMigration("v13: push calls") { db in
            // Each push source's last calls from its job, so a restart neither forgets a ping
            // nor pages for one that came before it (PushStore).
            try db.create(table: "push_calls", options: .withoutRowID) { table in
                table.column("source", .text).notNull().primaryKey()
                table.column("last_success_ms", .integer)
                table.column("last_failure_ms", .integer)
                table.column("message", .text)
                table.column("exit_status", .integer)
            }
        }
        migrator.registerMigration("v14: rdap bootstrap") { db in
            // IANA's RDAP bootstrap file as last fetched, so a restart finds registries without
            // it (RDAPStore).
            try db.create(table: "rdap_bootstrap", options: .withoutRowID) { table in
                table.column("id", .integer).notNull().primaryKey()
                table.column("fetched_at_ms", .integer).notNull()
                table.column("body", .blob).notNull()
            }
        }
        migrator.registerMigration("v15: sla outages") { db in
            // Every outage by its source's policy, from its first failed probe to its first
            // success, with the cause that opened it: an SLA report's evidence (SLAStore). Kept
            // for a year past `retention`, a few rows a source.
            try db.create(table: "sla_outages", options: .withoutRowID) { table in
                table.column("source_id", .integer).notNull()
                table.column("started_ms", .integer).notNull()
                table.column("ended_ms", .integer)
                table.column("failed_probes", .integer).notNull()
                table.column("category", .text).notNull()
                table.column("reason", .text).notNull()
                table.column("http_status", .integer)
                table.column("detail", .text).notNull()
                table.column("server_message", .text)
                table.column("location", .text)
                table.column("vendor_acknowledged_ms", .integer)
                table.column("vendor_incident", .text)
                table.primaryKey(["source_id", "started_ms"])
            }
        }
        migrator.registerMigration("v16: sla vendor maintenance") { db in
            // When each source's vendor said on its page that maintenance was in progress, as
            // read once a minute: what `exclude: [vendor_maintenance]` leaves out of an SLA.
            try db.create(table: "sla_vendor_maintenance", options: .withoutRowID) { table in
                table.column("source_id", .integer).notNull()
                table.column("started_ms", .integer).notNull()
                table.column("ended_ms", .integer).notNull()
                table.primaryKey(["source_id", "started_ms"])
            }
        }
        return migrator
    }

    /// A rollup table's columns before v7: per source name and `time` (minute, hour or day),
    /// counts, durations and latency buckets as text (for the migrations that made them).
    static func textRollupColumns(_ table: TableDefinition, time: String, timeFirst: Bool = false) {
        table.column(time, .integer).notNull()
        table.column("source", .text).notNull()
        table.column("probes", .integer).notNull()
        table.column("failures", .integer).notNull()
        table.column("retried", .integer).notNull()
        table.column("retry_succeeded", .integer).notNull()
        table.column("duration_ms_sum", .double).notNull()
        table.column("duration_ms_max", .double).notNull()
        table.column("latency_buckets", .text).notNull()
        table.primaryKey(timeFirst ? [time, "source"] : ["source", time])
    }

}
