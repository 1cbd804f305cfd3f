import Foundation
import GRDB
import LookoutCore
import LookoutStore
import ResilientHTTP
import Testing

/// A damaged or hand-edited file may hold any value in any column. What Lookout reads back
/// (maintenance windows, breakers, alerts, announcements, error records, the outbox, the rollup
/// marks) is checked as it is read: an unreadable row is left out, an out-of-range number is
/// dropped or clamped, and nothing downstream can trap on it. Times ahead of the clock are
/// kept: a clock stepped back must not lose what Lookout wrote itself.
@Suite("hostile values in the database")
struct HostileStoredValuesTests {
    let nowMs: Int64 = 1_800_000_000_000

    func database(_ statements: [String]) throws -> LookoutDatabase {
        let database = try LookoutDatabase(path: ":memory:")
        try database.writer.write { db in
            for sql in statements { try db.execute(sql: sql) }
        }
        return database
    }

    @Test func maintenanceWindowsTheAPIWouldRefuseAreLeftOut() throws {
        let recurring = #"{"weekdays": [1], "minute_of_day": 60, "duration_ms": 3600000, "time_zone": "UTC"}"#
        let database = try database([
            // Kept: a good recurring window.
            "INSERT INTO maintenance_windows (sources, matchers, starts_at_ms, ends_at_ms, note, recurring) VALUES ('[]', '{}', 0, \(Int64.max), 'ok', '\(recurring)')",
            // A negative duration made the calendar build the range 0...-1 on every probe.
            "INSERT INTO maintenance_windows (sources, matchers, starts_at_ms, ends_at_ms, note, recurring) VALUES ('[]', '{}', 0, \(Int64.max), 'neg', '\(recurring.replacingOccurrences(of: "3600000", with: "-172800000"))')",
            // Weekday 8 indexed past the day names on GET /api/v1/maintenance.
            "INSERT INTO maintenance_windows (sources, matchers, starts_at_ms, ends_at_ms, note, recurring) VALUES ('[]', '{}', 0, \(Int64.max), 'day8', '\(recurring.replacingOccurrences(of: "[1]", with: "[8]"))')",
            "INSERT INTO maintenance_windows (sources, matchers, starts_at_ms, ends_at_ms, note, recurring) VALUES ('[]', '{}', 0, \(Int64.max), 'zone', '\(recurring.replacingOccurrences(of: "UTC", with: "Nowhere/Else"))')",
            // Text where a time belongs; a window that ends before it starts.
            "INSERT INTO maintenance_windows (sources, matchers, starts_at_ms, ends_at_ms, note) VALUES ('[]', '{}', 'soon', \(Int64.max), 'text')",
            "INSERT INTO maintenance_windows (sources, matchers, starts_at_ms, ends_at_ms, note) VALUES ('[]', '{}', \(Int64.max - 1), \(Int64.max - 2), 'backwards')",
            "INSERT INTO maintenance_windows (sources, matchers, starts_at_ms, ends_at_ms, note) VALUES (5, 7, 0, \(Int64.max), 9)",
        ])
        let windows = try MaintenanceStore(database: database).current(nowMs: nowMs)
        #expect(windows.map(\.note) == ["ok", "9"])
        // The calendar answers over what was kept.
        let calendar = MaintenanceCalendar()
        calendar.set(added: windows)
        calendar.set(configured: [], sources: [SourceConfig(name: "a", url: "http://127.0.0.1/")])
        _ = calendar.entries(atMs: nowMs)
    }

    @Test func breakersAreRestoredWithinRange() throws {
        let database = try database([
            "INSERT INTO breaker_state VALUES ('min', 'forced_open', \(Int64.max), \(Int64.max), \(Int64.min), \(Int64.min), \(Int64.max), \(Int64.min), 0)",
            "INSERT INTO breaker_state VALUES ('future', 'open', 1, 0, \(nowMs + 1), \(Int64.max), 1, 60000, 0)",
            "INSERT INTO breaker_state VALUES ('text', 'open', 'many', 0, 0, 0, 0, 0, 0)",
            "INSERT INTO breaker_state VALUES ('state', 'melted', 0, 0, 0, 0, 0, 0, 0)",
        ])
        let saved = try BreakerStore.load(database, nowMs: nowMs)
        #expect(Set(saved.keys) == ["min", "future"])
        let min = try #require(saved["min"])
        #expect(min.consecutiveFailures == 1_000_000_000 && min.openCount == 1_000_000_000)
        #expect(min.openedAtMs == nil && min.nextAttemptAtMs == nil && min.openTimeoutMs == 0)
        // Opened "after now" (a clock stepped back since) is kept; a next trial at Int64.max is not.
        #expect(saved["future"]?.openedAtMs == nowMs + 1 && saved["future"]?.nextAttemptAtMs == nil)
        // What /metrics and the page ask of a restored breaker, and its next failures.
        var breaker = CircuitBreaker(settings: CircuitBreakerSettings(), restoring: min)
        #expect(breaker.openDurationMs(nowMs: nowMs) == 0)
        for _ in 0..<3 { _ = breaker.record(failure: .serverError, nowMs: nowMs, random: 0.5) }
    }

    @Test func alertsAnnouncementsErrorsAndOutboxRowsOutOfRange() throws {
        let database = try database([
            "INSERT INTO alerts (fingerprint, rule, severity, state, started_at_ms, summary, labels, annotations) VALUES ('ok', 'R', 'page', 'firing', 1000, '', '{}', '{}')",
            "INSERT INTO alerts (fingerprint, rule, severity, state, started_at_ms, summary, labels, annotations) VALUES ('min', 'R', 'page', 'firing', \(Int64.min), '', '{}', '{}')",
            "INSERT INTO alerts (fingerprint, rule, severity, state, started_at_ms, summary, labels, annotations) VALUES ('text', 'R', 'page', 'firing', 'then', '', 3, x'00')",
            "INSERT INTO alerts (fingerprint, rule, severity, state, started_at_ms, resolved_at_ms, summary, labels, annotations) VALUES ('res', 'R', 'page', 'resolved', 1000, \(Int64.max), '', '{}', '{}')",
            // Written by this machine before its clock stepped back a year: kept.
            "INSERT INTO alerts (fingerprint, rule, severity, state, started_at_ms, summary, labels, annotations) VALUES ('ahead', 'R', 'page', 'firing', \(Timestamp.nowMs() + 365 * 86_400_000), '', '{}', '{}')",
            "INSERT INTO announcements (id, title, sources) VALUES (1, 'kept', '[]'), (2, 'gone', '[]'), (3, 'ahead', '[]')",
            "INSERT INTO announcement_updates (announcement_id, at_ms, state, message) VALUES (1, 1000, 'investigating', 'm'), (2, \(Int64.min), 'investigating', 'm'), (3, \(Timestamp.nowMs() + 365 * 86_400_000), 'investigating', 'm')",
            "INSERT INTO error_records (ts_ms, source, category, reason, message, attempt, was_retried, retry_succeeded, curl_code, http_status) VALUES (\(Int64.min), 'a', 'transient', 'r', 'm', \(Int64.max), 1, 0, \(Int64(Int32.max) + 1), 70000)",
            "INSERT INTO error_records (ts_ms, source, category, reason, message, attempt, was_retried, retry_succeeded) VALUES ('late', 'a', 'transient', 'r', 'm', 1, 0, 0)",
            "INSERT INTO alert_outbox (hook, alert_id, payload, created_at_ms, attempts, next_attempt_at_ms) VALUES ('h', 1, 'p', 0, \(Int64.max), \(Int64.min))",
        ])
        let alerts = AlertStore(database: database)
        #expect(try alerts.firing().map(\.fingerprint) == ["ok", "ahead"])
        #expect(try alerts.recent(sinceMs: 0).map(\.fingerprint) == ["ahead", "ok"])
        #expect(try AnnouncementStore(database: database).recent(sinceMs: 0).map(\.title) == ["ahead", "kept"])
        let errors = try ErrorRecordStore(database: database).page(source: "a", sinceMs: Int64.min, beforeID: nil, limit: 10)
        #expect(errors.count == 1)
        let error = try #require(errors.first?.record)
        #expect(error.curlCode == nil && error.httpStatus == nil && error.attempt == 1_000_000)
        #expect(Timestamp.rfc3339(error.tsMs) == "0000-01-01T00:00:00.000Z")
        let outbox = OutboxStore(database: database)
        let head = try #require(try outbox.head(hook: "h"))
        #expect(head.attempts == 1_000_000_000 && head.nextAttemptAtMs == 0)
        try outbox.markFailed(head.id, error: "again", nextAttemptAtMs: nowMs)
        // Counted on in SQLite without overflowing into a float.
        #expect(try database.writer.read { db in try DatabaseValue.fetchOne(db, sql: "SELECT attempts FROM alert_outbox") } == 1_000_000_001.databaseValue)
    }

    @Test func timesOutsideYearsZeroToNineThousandAreWrittenAtTheEdges() {
        #expect(Timestamp.rfc3339(Int64.min) == "0000-01-01T00:00:00.000Z")
        #expect(Timestamp.rfc3339(Int64.max) == "9999-12-31T23:59:59.999Z")
        #expect(Timestamp.rfc3339(-1) == "1969-12-31T23:59:59.999Z")
        #expect(HealthWindow.floor(Int64.min, to: HealthWindow.hour) == Int64.min)
        #expect(HealthWindow.floor(-1, to: HealthWindow.hour) == -HealthWindow.hour)
    }

    /// Rollup marks and rows out of range: the tiers step over them instead of overflowing.
    @Test func rollupMarksAndRowsOutOfRange() throws {
        let hourMs = nowMs - nowMs % HealthWindow.hour - 3 * HealthWindow.hour
        let database = try database([
            "INSERT INTO sources (id, name, first_seen_ms) VALUES (1, 'a', 0)",
            "INSERT INTO minute_rollups VALUES (\(Int64.max), 1, 1, 0, 0, 0, 1, 1, x'')",
            "INSERT INTO minute_rollups VALUES (\(Int64.min), 1, 1, 0, 0, 0, 1, 1, x'')",
            "INSERT INTO minute_rollups VALUES (\(hourMs), 1, 2, 1, 0, 0, 1, 1, x'')",
            "INSERT INTO rollup_progress VALUES ('hour', \(Int64.min)), ('day', 'soon')",
        ])
        let (hours, _) = try RollupTiers.advance(database, nowMs: nowMs)
        #expect(hours == 1)
        let rolled = try database.writer.read { db in try Int.fetchOne(db, sql: "SELECT sum(probes) FROM hour_rollups") }
        #expect(rolled == 2)
        try Retention(retention: .seconds(30 * 86_400), rawRetention: .seconds(86_400), tiers: RollupRetention()).prune(database, nowMs: nowMs)
    }
}
