import Foundation
import LookoutCore
import Testing

/// Maintenance windows: one-off and recurring in a time zone, across daylight saving changes,
/// with a fixed clock.
@Suite("maintenance windows")
struct MaintenanceTests {
    func ms(_ text: String) -> Int64 { Timestamp.parseRFC3339(text)! }

    /// Sundays at 02:30 Berlin wall-clock time, for an hour.
    let sundays = MaintenanceWindow(
        name: "backup", sources: ["db"],
        schedule: .recurring(weekdays: [1], minuteOfDay: 150, durationMs: 3_600_000, timeZone: "Europe/Berlin"), note: "weekly backup")

    @Test func aRecurringWindowKeepsItsWallClockTimeAcrossDaylightSavingChanges() {
        // Winter (CET, +01:00): 02:30 local is 01:30 UTC.
        #expect(sundays.occurrence(atMs: ms("2026-11-22T01:45:00Z"))?.startMs == ms("2026-11-22T01:30:00Z"))
        #expect(sundays.occurrence(atMs: ms("2026-11-22T01:15:00Z")) == nil)
        #expect(sundays.occurrence(atMs: ms("2026-11-22T02:30:00Z")) == nil)
        // Summer (CEST, +02:00): 02:30 local is 00:30 UTC.
        #expect(sundays.occurrence(atMs: ms("2026-07-05T00:45:00Z"))?.endMs == ms("2026-07-05T01:30:00Z"))
        #expect(sundays.occurrence(atMs: ms("2026-07-05T01:45:00Z")) == nil)
        // The night clocks go forward (29 March): 02:30 does not exist; the window starts at
        // 03:30 CEST, the first time after it, and still lasts an hour.
        #expect(sundays.occurrence(atMs: ms("2026-03-29T01:45:00Z"))?.startMs == ms("2026-03-29T01:30:00Z"))
        #expect(sundays.occurrence(atMs: ms("2026-03-29T00:45:00Z")) == nil)
        // The night clocks go back (25 October): 02:30 happens twice; the window starts at the
        // first, 02:30 CEST.
        #expect(sundays.occurrence(atMs: ms("2026-10-25T00:45:00Z"))?.startMs == ms("2026-10-25T00:30:00Z"))
        // Not on Mondays.
        #expect(sundays.occurrence(atMs: ms("2026-11-23T01:45:00Z")) == nil)
    }

    @Test func aWindowThatCrossesMidnightCoversTheNextDay() {
        let nightly = MaintenanceWindow(
            name: "n", schedule: .recurring(weekdays: [7], minuteOfDay: 23 * 60, durationMs: 3 * 3_600_000, timeZone: "UTC"), note: "")
        #expect(nightly.occurrence(atMs: ms("2026-11-29T01:00:00Z"))?.startMs == ms("2026-11-28T23:00:00Z"))  // Sunday 01:00, from Saturday
        #expect(nightly.occurrence(atMs: ms("2026-11-29T01:59:59Z")) != nil)
        #expect(nightly.occurrence(atMs: ms("2026-11-29T02:00:00Z")) == nil)
    }

    @Test func theCalendarCoversSourcesByNameOrLabels() {
        var db = SourceConfig(name: "db", url: "http://127.0.0.1/db")
        db.labels = ["team": "payments"]
        var ledger = SourceConfig(name: "ledger", url: "http://127.0.0.1/l")
        ledger.labels = ["team": "payments"]
        let other = SourceConfig(name: "other", url: "http://127.0.0.1/o")
        let calendar = MaintenanceCalendar()
        let migration = MaintenanceWindow(
            name: "migration", matchers: ["team": "payments"], schedule: .once(startMs: ms("2026-12-01T22:00:00Z"), endMs: ms("2026-12-02T02:00:00Z")),
            note: "ledger migration")
        calendar.set(configured: [sundays, migration], sources: [db, ledger, other])
        #expect(calendar.entries(atMs: ms("2026-12-01T21:59:59Z")).isEmpty)
        let during = calendar.entries(atMs: ms("2026-12-01T23:00:00Z"))
        #expect(Set(during.keys) == ["db", "ledger"])
        #expect(during["ledger"]?.note == "ledger migration")
        #expect(during["ledger"]?.endsAtMs == ms("2026-12-02T02:00:00Z"))
    }

    @Test func configProblemsNameTheFieldWithLineAndColumn() throws {
        func problems(_ maintenance: String) -> [String] {
            do {
                _ = try ConfigLoader.parse("sources:\n  - {name: db, url: \"http://x/\"}\nmaintenance:\n" + maintenance, file: "t.yml", environment: [:])
                return []
            } catch let error as ConfigError {
                return error.problems.map(\.description)
            } catch { return ["\(error)"] }
        }
        #expect(
            problems("  - {name: m, recurring: {weekdays: [funday], at: \"02:00\", duration: 1h}}\n") == [
                #"t.yml:4:37: maintenance[0].recurring.weekdays: "funday" is not a weekday (use mon, tue, wed, thu, fri, sat, sun)"#
            ])
        #expect(
            problems("  - {name: m, recurring: {at: \"25:00\", duration: 1h}}\n") == [
                #"t.yml:4:31: maintenance[0].recurring.at: "25:00" is not a time of day (use HH:MM, e.g. 02:30)"#
            ])
        #expect(
            problems("  - {name: m, recurring: {at: \"02:00\", duration: 1h, time_zone: Mars/Olympus}}\n") == [
                #"t.yml:4:65: maintenance[0].recurring.time_zone: "Mars/Olympus" is not an IANA time zone (e.g. Europe/Berlin, America/New_York, UTC)"#
            ])
        #expect(
            problems("  - {name: m, start: \"2026-12-02T00:00:00Z\", end: \"2026-12-01T00:00:00Z\"}\n") == [
                "t.yml:4:51: maintenance[0].end: must be after start"
            ])
        #expect(problems("  - {name: m, sources: [dbb], start: \"2026-12-01T00:00:00Z\", end: tomorrow}\n").count == 2)
        #expect(
            problems("  - {name: m, note: \"no schedule\"}\n") == [
                "t.yml:4:5: maintenance[0]: give either start and end (RFC 3339), or recurring: {weekdays, at, duration, time_zone}"
            ])
        let fine = try ConfigLoader.parse(
            "sources:\n  - {name: db, url: \"http://x/\"}\nmaintenance:\n  - {name: m, sources: [db], recurring: {weekdays: [Sun, sat], at: \"02:30\", duration: 90m, time_zone: Europe/Berlin}, note: backup}\n",
            file: "t.yml", environment: [:])
        #expect(fine.maintenance.first?.schedule == .recurring(weekdays: [1, 7], minuteOfDay: 150, durationMs: 5_400_000, timeZone: "Europe/Berlin"))
    }
}
