import CronSchedule
import Foundation
import Testing

@Suite("cron schedules")
struct CronScheduleTests {
    let utc = TimeZone(identifier: "UTC")!
    let berlin = TimeZone(identifier: "Europe/Berlin")!

    func date(_ text: String) -> Date { ISO8601DateFormatter().date(from: text)! }

    @Test func runsAtItsMinutesInItsTimeZone() throws {
        let nightly = try CronSchedule("0 3 * * *")
        #expect(nightly.next(after: date("2026-11-28T12:00:00Z"), in: utc) == date("2026-11-29T03:00:00Z"))
        #expect(nightly.next(after: date("2026-11-28T12:00:00Z"), in: berlin) == date("2026-11-29T02:00:00Z"))
        #expect(nightly.previous(atOrBefore: date("2026-11-28T12:00:00Z"), in: berlin) == date("2026-11-28T02:00:00Z"))
        #expect(try CronSchedule("*/15 * * * *").next(after: date("2026-11-28T12:07:00Z"), in: utc) == date("2026-11-28T12:15:00Z"))
        #expect(try CronSchedule("@hourly").next(after: date("2026-11-28T12:00:00Z"), in: utc) == date("2026-11-28T13:00:00Z"))
        #expect(try CronSchedule("0 9 * * mon-fri").next(after: date("2026-11-28T12:00:00Z"), in: utc) == date("2026-11-30T09:00:00Z"))
        #expect(try CronSchedule("0 0 1 jan *").next(after: date("2026-11-28T12:00:00Z"), in: utc) == date("2027-01-01T00:00:00Z"))
        // 7 is Sunday too.
        #expect(try CronSchedule("0 0 * * 7").next(after: date("2026-11-28T12:00:00Z"), in: utc) == date("2026-11-29T00:00:00Z"))
    }

    /// With both day fields restricted, either matching day runs (crontab(5)).
    @Test func eitherRestrictedDayRuns() throws {
        let schedule = try CronSchedule("0 0 13 * fri")
        #expect(schedule.next(after: date("2026-11-30T00:00:00Z"), in: utc) == date("2026-12-04T00:00:00Z"))
        #expect(schedule.next(after: date("2026-12-12T00:00:00Z"), in: utc) == date("2026-12-13T00:00:00Z"))
    }

    /// Europe/Berlin springs from 02:00 to 03:00 on 2026-03-29 and falls from 03:00 to 02:00 on
    /// 2026-10-25.
    @Test func crossesDaylightSavingChanges() throws {
        let nightly = try CronSchedule("0 3 * * *")
        #expect(nightly.next(after: date("2026-03-28T12:00:00Z"), in: berlin) == date("2026-03-29T01:00:00Z"))  // 03:00 CEST
        #expect(nightly.next(after: date("2026-10-24T12:00:00Z"), in: berlin) == date("2026-10-25T02:00:00Z"))  // 03:00 CET
        let skipped = try CronSchedule("30 2 * * *")
        // 02:30 does not exist on the 29th of March: the first time after the change.
        #expect(skipped.next(after: date("2026-03-28T12:00:00Z"), in: berlin) == date("2026-03-29T01:30:00Z"))
        // 02:30 comes twice on the 25th of October: the first.
        #expect(skipped.next(after: date("2026-10-24T12:00:00Z"), in: berlin) == date("2026-10-25T00:30:00Z"))
        // The interval between two runs across the change is 23 and 25 hours, not 24.
        let before = date("2026-03-28T02:00:00Z")
        #expect(nightly.next(after: before, in: berlin)!.timeIntervalSince(before) == 23 * 3600)
    }

    @Test(arguments: [
        ("61 * * * *", "\"61\" is not a minute"), ("* * *", "has 3 fields"), ("5-1 * * * *", "runs backwards"),
        ("* * * * mon-xyz", "\"xyz\" is not a day of week"),
        ("*/0 * * * *", "is not a step"), ("", "has 0 fields"), ("0 0 32 * *", "\"32\" is not a day of month"),
    ])
    func refusesWhatCronRefuses(_ text: String, _ message: String) {
        #expect {
            _ = try CronSchedule(text)
        } throws: { error in
            "\(error)".contains(message)
        }
    }

    @Test func anImpossibleDayNeverRuns() throws {
        #expect(try CronSchedule("0 0 31 2 *").next(after: date("2026-11-28T12:00:00Z"), in: utc) == nil)
    }
}
