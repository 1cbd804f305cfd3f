import Foundation

/// A cron schedule of five fields — minute, hour, day of month, month, day of week — as Vixie
/// cron and crontab(5) read them: `*`, lists (`1,15`), ranges (`1-5`), steps (`*/15`, `8-18/2`),
/// month and day names (`jan`, `mon-fri`), 7 as Sunday, and `@hourly`, `@daily`, `@weekly`,
/// `@monthly`, `@yearly`. With both day fields restricted, a day matching either is a day it runs.
/// Times are read in a time zone; knows nothing of Lookout.
///
/// ```swift
/// let nightly = try CronSchedule("0 3 * * *")
/// nightly.next(after: Date(), in: TimeZone(identifier: "Europe/Berlin")!)   // the next 03:00 there
/// ```
public struct CronSchedule: Sendable, Equatable, CustomStringConvertible {
    /// The schedule as written.
    public let text: String
    let minutes: Set<Int>
    let hours: Set<Int>
    let daysOfMonth: Set<Int>
    let months: Set<Int>
    /// 0 is Sunday.
    let daysOfWeek: Set<Int>
    let dayOfMonthRestricted: Bool
    let dayOfWeekRestricted: Bool

    /// What is wrong with a schedule, in crontab's terms.
    public struct ParseError: Error, Sendable, CustomStringConvertible, Equatable {
        public let description: String
    }

    private static let macros = [
        "@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *", "@weekly": "0 0 * * 0", "@daily": "0 0 * * *",
        "@midnight": "0 0 * * *", "@hourly": "0 * * * *",
    ]
    private static let monthNames = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
    private static let dayNames = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]

    public init(_ text: String) throws(ParseError) {
        self.text = text
        let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
        let expanded = CronSchedule.macros[trimmed] ?? trimmed
        let fields = expanded.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        guard fields.count == 5 else {
            throw ParseError(
                description: "\"\(text)\" has \(fields.count) fields; a schedule has 5 (minute hour day-of-month month day-of-week) or is @hourly, @daily, …")
        }
        minutes = try CronSchedule.field(fields[0], "minute", 0...59)
        hours = try CronSchedule.field(fields[1], "hour", 0...23)
        daysOfMonth = try CronSchedule.field(fields[2], "day of month", 1...31)
        months = try CronSchedule.field(fields[3], "month", 1...12, names: CronSchedule.monthNames, firstName: 1)
        let weekdays = try CronSchedule.field(fields[4], "day of week", 0...7, names: CronSchedule.dayNames, firstName: 0)
        daysOfWeek = Set(weekdays.map { $0 % 7 })
        dayOfMonthRestricted = !fields[2].hasPrefix("*")
        dayOfWeekRestricted = !fields[4].hasPrefix("*")
    }

    public var description: String { text }

    /// The values one field allows.
    static func field(_ text: String, _ name: String, _ range: ClosedRange<Int>, names: [String] = [], firstName: Int = 0) throws(ParseError) -> Set<Int> {
        func value(_ part: Substring) throws(ParseError) -> Int {
            if let number = Int(part), range.contains(number) { return number }
            if let index = names.firstIndex(of: String(part)) { return index + firstName }
            throw ParseError(description: "\"\(part)\" is not a \(name) (\(range.lowerBound)–\(range.upperBound)\(names.isEmpty ? "" : " or a name"))")
        }
        var values = Set<Int>()
        for item in text.split(separator: ",", omittingEmptySubsequences: false) {
            let pieces = item.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
            var step = 1
            if pieces.count == 2 {
                guard let parsed = Int(pieces[1]), (1...range.upperBound + 1).contains(parsed) else {
                    throw ParseError(description: "\"\(pieces[1])\" is not a step for the \(name) (1–\(range.upperBound + 1))")
                }
                step = parsed
            }
            let span = pieces[0]
            let bounds: ClosedRange<Int>
            if span == "*" {
                bounds = range
            } else if let dash = span.firstIndex(of: "-") {
                let low = try value(span[..<dash])
                let high = try value(span[span.index(after: dash)...])
                guard low <= high else { throw ParseError(description: "\"\(span)\" is not a range of the \(name): it runs backwards") }
                bounds = low...high
            } else {
                let single = try value(span)
                // `5/15` means from 5 to the end, every 15.
                bounds = pieces.count == 2 ? single...range.upperBound : single...single
            }
            values.formUnion(stride(from: bounds.lowerBound, through: bounds.upperBound, by: step))
        }
        return values
    }

    /// Whether the schedule runs on `day` (year, month, day and weekday from `calendar`).
    func runs(on parts: DateComponents) -> Bool {
        guard let month = parts.month, months.contains(month), let day = parts.day, let weekday = parts.weekday else { return false }
        let byMonthDay = daysOfMonth.contains(day)
        let byWeekDay = daysOfWeek.contains(weekday - 1)
        // crontab(5): when both are restricted, either matching is enough.
        if dayOfMonthRestricted && dayOfWeekRestricted { return byMonthDay || byWeekDay }
        return byMonthDay && byWeekDay
    }

    /// The first time after `date` the schedule runs, read in `timeZone`: within about 5 years,
    /// or nil (a schedule for the 31st of February). A time the clocks skip that day (spring
    /// forward) is the first one after the change; a time they repeat (autumn) is its first
    /// occurrence.
    public func next(after date: Date, in timeZone: TimeZone) -> Date? {
        search(from: date, in: timeZone, forward: true)
    }

    /// The last time at or before `date` the schedule ran, read in `timeZone`, within about 5
    /// years, or nil.
    public func previous(atOrBefore date: Date, in timeZone: TimeZone) -> Date? {
        search(from: date, in: timeZone, forward: false)
    }

    /// Day by day from `date`'s, forward or back, the first run past `date` on a day it runs.
    private func search(from date: Date, in timeZone: TimeZone, forward: Bool) -> Date? {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let hours = forward ? self.hours.sorted() : self.hours.sorted(by: >)
        let minutes = forward ? self.minutes.sorted() : self.minutes.sorted(by: >)
        let startOfDay = calendar.startOfDay(for: date)
        for offset in 0..<(5 * 366) {
            guard let day = calendar.date(byAdding: .day, value: forward ? offset : -offset, to: startOfDay) else { return nil }
            var parts = calendar.dateComponents([.year, .month, .day, .weekday], from: day)
            guard runs(on: parts) else { continue }
            parts.weekday = nil
            for hour in hours {
                for minute in minutes {
                    parts.hour = hour
                    parts.minute = minute
                    guard let candidate = calendar.date(from: parts), forward ? candidate > date : candidate <= date else { continue }
                    return candidate
                }
            }
        }
        return nil
    }
}
