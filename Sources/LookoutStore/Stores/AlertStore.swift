import Foundation
import GRDB
import LookoutCore

/// One notification to put in the outbox.
package struct OutboxEntry: Sendable, Equatable {
    package var hook: String
    package var payload: String

    package init(hook: String, payload: String) {
        self.hook = hook
        self.payload = payload
    }
}

/// A silence: alerts whose labels match every matcher are not announced until `endsAtMs`.
package struct Silence: Sendable, Equatable {
    package var id: Int64?
    package var matchers: [String: String]
    package var startsAtMs: Int64
    package var endsAtMs: Int64
    package var comment: String
    package var createdBy: String?

    package init(id: Int64? = nil, matchers: [String: String], startsAtMs: Int64, endsAtMs: Int64, comment: String, createdBy: String? = nil) {
        self.id = id
        self.matchers = matchers
        self.startsAtMs = startsAtMs
        self.endsAtMs = endsAtMs
        self.comment = comment
        self.createdBy = createdBy
    }

    package func matches(_ alert: Alert, nowMs: Int64) -> Bool {
        startsAtMs <= nowMs && nowMs < endsAtMs && matchers.allSatisfy { alert.labels[$0.key] == $0.value }
    }
}

/// The `alerts`, `alert_outbox` and `silences` tables. An alert's change and its notifications
/// are written in one transaction, so a crash loses neither one without the other.
package struct AlertStore: Sendable {
    let database: LookoutDatabase

    package init(database: LookoutDatabase) {
        self.database = database
    }

    /// Stores `changes` with the outbox rows `notifications` gives for each — it is handed the
    /// hooks already notified of the alert (for a resolved one: who heard it fire); returns the
    /// alerts with their row ids.
    @discardableResult
    package func apply(_ changes: [AlertChange], nowMs: Int64, notifications: (AlertChange, Set<String>) -> [OutboxEntry]) throws -> [AlertChange] {
        try database.writer.write { db in
            var stored: [AlertChange] = []
            for change in changes {
                var alert = change.alert
                switch change {
                case .firing:
                    try db.execute(
                        sql: """
                            INSERT INTO alerts (fingerprint, rule, source, severity, state, started_at_ms, resolved_at_ms, summary, labels, annotations)
                            VALUES (?, ?, ?, ?, 'firing', ?, NULL, ?, ?, ?)
                            """,
                        arguments: [
                            alert.fingerprint, alert.rule, alert.source, alert.severity, alert.startedAtMs, alert.summary,
                            AlertStore.json(alert.labels), AlertStore.json(alert.annotations),
                        ])
                    alert.id = db.lastInsertedRowID
                    stored.append(.firing(alert))
                case .resolved:
                    let id = try Int64.fetchOne(
                        db, sql: "SELECT id FROM alerts WHERE fingerprint = ? AND state = 'firing' ORDER BY id DESC LIMIT 1",
                        arguments: [alert.fingerprint])
                    guard let id else { continue }
                    try db.execute(
                        sql: "UPDATE alerts SET state = 'resolved', resolved_at_ms = ? WHERE id = ?",
                        arguments: [alert.resolvedAtMs ?? nowMs, id])
                    alert.id = id
                    stored.append(.resolved(alert))
                }
                let change = stored.last!
                var notified: Set<String> = []
                if case .resolved = change {
                    notified = Set(try String.fetchAll(db, sql: "SELECT DISTINCT hook FROM alert_outbox WHERE alert_id = ?", arguments: [alert.id!]))
                }
                for entry in notifications(change, notified) {
                    try AlertStore.enqueue(entry, alertID: alert.id!, nowMs: nowMs, db)
                }
            }
            return stored
        }
    }

    /// Adds a notification for an alert that is already stored (a repeat).
    package func enqueue(_ entries: [OutboxEntry], alertID: Int64, nowMs: Int64) throws {
        try database.writer.write { db in
            for entry in entries { try AlertStore.enqueue(entry, alertID: alertID, nowMs: nowMs, db) }
        }
    }

    /// Adds notifications, each for its alert row, in one transaction.
    package func enqueue(_ rows: [(entry: OutboxEntry, alertID: Int64)], nowMs: Int64) throws {
        try database.writer.write { db in
            for row in rows { try AlertStore.enqueue(row.entry, alertID: row.alertID, nowMs: nowMs, db) }
        }
    }

    static func enqueue(_ entry: OutboxEntry, alertID: Int64, nowMs: Int64, _ db: Database) throws {
        try db.execute(
            sql: "INSERT INTO alert_outbox (hook, alert_id, payload, created_at_ms, attempts, next_attempt_at_ms) VALUES (?, ?, ?, ?, 0, ?)",
            arguments: [entry.hook, alertID, entry.payload, nowMs, nowMs])
    }

    /// Replaces the stored annotations of `alerts` (by their row ids).
    package func setAnnotations(_ alerts: [Alert]) throws {
        try database.writer.write { db in
            for alert in alerts {
                guard let id = alert.id else { continue }
                try db.execute(sql: "UPDATE alerts SET annotations = ? WHERE id = ?", arguments: [AlertStore.json(alert.annotations), id])
            }
        }
    }

    /// The hooks each of `alertIDs` has an outbox row for (delivered or not): who has been, or
    /// will be, told of it. A group's notification is stored under its first alert's id.
    package func notifiedHooks(alertIDs: [Int64]) throws -> [Int64: Set<String>] {
        guard !alertIDs.isEmpty else { return [:] }
        return try database.writer.read { db in
            var result: [Int64: Set<String>] = [:]
            for chunk in stride(from: 0, to: alertIDs.count, by: 500).map({ Array(alertIDs[$0..<min($0 + 500, alertIDs.count)]) }) {
                let marks = Array(repeating: "?", count: chunk.count).joined(separator: ",")
                for row in try Row.fetchAll(
                    db, sql: "SELECT DISTINCT alert_id, hook FROM alert_outbox WHERE alert_id IN (\(marks))", arguments: StatementArguments(chunk))
                {
                    result[row["alert_id"], default: []].insert(row["hook"])
                }
            }
            return result
        }
    }

    /// Alerts stored as firing, to take back after a restart.
    package func firing() throws -> [Alert] {
        try database.writer.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM alerts WHERE state = 'firing' ORDER BY id").compactMap(AlertStore.alert)
        }
    }

    /// Firing alerts and those resolved since `sinceMs`, newest first.
    package func recent(sinceMs: Int64, limit: Int = 200) throws -> [Alert] {
        try database.writer.read { db in
            try Row.fetchAll(
                db, sql: "SELECT * FROM alerts WHERE state = 'firing' OR resolved_at_ms >= ? ORDER BY id DESC LIMIT ?",
                arguments: [sinceMs, limit]
            ).compactMap(AlertStore.alert)
        }
    }

    /// One source's alert episode, for the page's day bars.
    package struct Episode: Sendable, Equatable {
        package var source: String
        package var rule: String
        package var severity: String
        package var startedAtMs: Int64
        package var resolvedAtMs: Int64?

        package init(source: String, rule: String, severity: String, startedAtMs: Int64, resolvedAtMs: Int64?) {
            self.source = source
            self.rule = rule
            self.severity = severity
            self.startedAtMs = startedAtMs
            self.resolvedAtMs = resolvedAtMs
        }
    }

    /// Per-source warning and critical episodes that were firing at some time since `sinceMs`,
    /// oldest first (at most `limit`: the newest).
    package func episodes(sinceMs: Int64, limit: Int = 20_000) throws -> [Episode] {
        try database.writer.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT source, rule, severity, started_at_ms, resolved_at_ms FROM alerts
                    WHERE source IS NOT NULL AND severity != 'info' AND (resolved_at_ms IS NULL OR resolved_at_ms >= ?)
                    ORDER BY id DESC LIMIT ?
                    """,
                arguments: [sinceMs, limit]
            ).reversed().map { row in
                Episode(
                    source: row["source"], rule: row["rule"], severity: row["severity"], startedAtMs: row["started_at_ms"], resolvedAtMs: row["resolved_at_ms"])
            }
        }
    }

    @discardableResult
    package func add(_ silence: Silence) throws -> Int64 {
        try database.writer.write { db in
            try db.execute(
                sql: "INSERT INTO silences (matchers, starts_at_ms, ends_at_ms, comment, created_by) VALUES (?, ?, ?, ?, ?)",
                arguments: [AlertStore.json(silence.matchers), silence.startsAtMs, silence.endsAtMs, silence.comment, silence.createdBy])
            return db.lastInsertedRowID
        }
    }

    /// Ends a silence now; false when no silence has that id or it had already ended.
    package func expireSilence(_ id: Int64, nowMs: Int64) throws -> Bool {
        try database.writer.write { db in
            try db.execute(sql: "UPDATE silences SET ends_at_ms = ? WHERE id = ? AND ends_at_ms > ?", arguments: [nowMs, id, nowMs])
            return db.changesCount > 0
        }
    }

    package func activeSilences(nowMs: Int64) throws -> [Silence] {
        try database.writer.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM silences WHERE ends_at_ms > ? ORDER BY id", arguments: [nowMs]).compactMap { row in
                // As a damaged file may hold it: a value of the wrong type, or a silence that
                // ends before it starts, is left out.
                guard let id = row.integer("id"), let startsAtMs = row.integer("starts_at_ms"), let endsAtMs = row.integer("ends_at_ms"), startsAtMs < endsAtMs
                else { return nil }
                return Silence(
                    id: id, matchers: row.text("matchers").map(AlertStore.dictionary) ?? [:], startsAtMs: startsAtMs,
                    endsAtMs: endsAtMs, comment: row.text("comment") ?? "", createdBy: row.text("created_by"))
            }
        }
    }

    /// An alert as a damaged file may hold it: nil for a row with a value of the wrong type or
    /// a time outside years 1970–9999, so no clock arithmetic on it can overflow. (Not "after
    /// now": a clock stepped back would lose alerts it wrote itself.)
    static func alert(_ row: Row) -> Alert? {
        let times = 0...Timestamp.writable.upperBound
        guard let id = row.integer("id"), let fingerprint = row.text("fingerprint"), let rule = row.text("rule"), let severity = row.text("severity"),
            let startedAtMs = row.integer("started_at_ms"), times.contains(startedAtMs)
        else { return nil }
        let resolvedAtMs = row.integer("resolved_at_ms")
        if let resolvedAtMs, !times.contains(resolvedAtMs) { return nil }
        return Alert(
            fingerprint: fingerprint, rule: rule, source: row.text("source"), severity: severity,
            labels: row.text("labels").map(dictionary) ?? [:], annotations: row.text("annotations").map(dictionary) ?? [:], startedAtMs: startedAtMs,
            resolvedAtMs: resolvedAtMs, id: id)
    }

    /// Labels, annotations or matchers as a JSON object, keys sorted. Written by hand:
    /// JSONSerialization sorts keys through ICU's collator, which maps a few megabytes of ICU
    /// into a process that otherwise never needs it.
    static func json(_ dictionary: [String: String]) -> String {
        JSONText.object(dictionary.mapValues { .string($0) })
    }

    static func dictionary(_ text: String) -> [String: String] {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: String]) ?? [:]
    }
}
