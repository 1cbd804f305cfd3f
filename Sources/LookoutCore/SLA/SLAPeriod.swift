import Foundation

/// One SLA period as a report asks for it: a calendar month (`2026-11`) or an ISO week
/// (`2026-W47`), read in a source's time zone, so its bounds differ by zone and a month with a
/// daylight-saving change is an hour shorter or longer.
package struct SLAPeriod: Sendable, Hashable, CustomStringConvertible {
    package var kind: SLASettings.Period
    package var year: Int
    /// The month (1–12) or the ISO week (1–53).
    package var number: Int

    package init(kind: SLASettings.Period, year: Int, number: Int) {
        self.kind = kind
        self.year = year
        self.number = number
    }

    /// Why a period's text cannot be read.
    package struct Problem: Error, CustomStringConvertible {
        package var description: String
    }

    /// `2026-11` or `2026-W47`.
    package init(parsing text: String) throws(Problem) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].count == 4, let year = Int(parts[0]), (1970...9999).contains(year) else {
            throw Problem(description: "\"\(text)\" is not a period (use a month such as 2026-11, or an ISO week such as 2026-W47)")
        }
        if parts[1].hasPrefix("W") {
            guard let week = Int(parts[1].dropFirst()), parts[1].count == 3, (1...SLAPeriod.weeks(in: year)).contains(week) else {
                throw Problem(description: "\"\(text)\": \(year) has weeks W01 to W\(SLAPeriod.weeks(in: year))")
            }
            self.init(kind: .week, year: year, number: week)
        } else {
            guard parts[1].count == 2, let month = Int(parts[1]), (1...12).contains(month) else {
                throw Problem(description: "\"\(text)\" is not a month (months are 01 to 12, as in 2026-11)")
            }
            self.init(kind: .month, year: year, number: month)
        }
    }

    package var description: String {
        kind == .month ? String(format: "%04d-%02d", year, number) : String(format: "%04d-W%02d", year, number)
    }

    /// "November 2026", "week 47 of 2026".
    package var title: String {
        guard kind == .month else { return "week \(number) of \(year)" }
        return "\(SLAPeriod.monthNames[number - 1]) \(year)"
    }

    /// "November" (the period's name in a sentence).
    package var shortTitle: String {
        kind == .month ? SLAPeriod.monthNames[number - 1] : "week \(number)"
    }

    static let monthNames = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"]

    /// Its first and its end instant (exclusive) in `timeZone`.
    package func bounds(in timeZone: TimeZone) -> (startMs: Int64, endMs: Int64) {
        let calendar = SLAPeriod.calendar(timeZone)
        var parts = DateComponents()
        if kind == .month {
            parts.year = year
            parts.month = number
            parts.day = 1
        } else {
            parts.yearForWeekOfYear = year
            parts.weekOfYear = number
            parts.weekday = 2
        }
        let start = calendar.date(from: parts) ?? Date(timeIntervalSince1970: 0)
        let end = calendar.date(byAdding: kind == .month ? .month : .weekOfYear, value: 1, to: start) ?? start
        return (SLAPeriod.ms(start), SLAPeriod.ms(end))
    }

    /// The period of `kind` that holds `atMs` in `timeZone`.
    package static func holding(_ atMs: Int64, kind: SLASettings.Period, in timeZone: TimeZone) -> SLAPeriod {
        let calendar = calendar(timeZone)
        let date = Date(timeIntervalSince1970: Double(atMs) / 1000)
        if kind == .month {
            let parts = calendar.dateComponents([.year, .month], from: date)
            return SLAPeriod(kind: .month, year: parts.year ?? 1970, number: parts.month ?? 1)
        }
        let parts = calendar.dateComponents([.yearForWeekOfYear, .weekOfYear], from: date)
        return SLAPeriod(kind: .week, year: parts.yearForWeekOfYear ?? 1970, number: parts.weekOfYear ?? 1)
    }

    /// The period before this one.
    package func previous(in timeZone: TimeZone) -> SLAPeriod {
        SLAPeriod.holding(bounds(in: timeZone).startMs - 1, kind: kind, in: timeZone)
    }

    /// ISO weeks of `year`: 53 when it ends on a Thursday, or on a Friday after a leap year's
    /// Thursday; 52 otherwise.
    static func weeks(in year: Int) -> Int {
        var calendar = calendar(TimeZone(identifier: "UTC")!)
        calendar.minimumDaysInFirstWeek = 4
        guard let december28 = calendar.date(from: DateComponents(year: year, month: 12, day: 28)) else { return 52 }
        return calendar.component(.weekOfYear, from: december28)
    }

    static func calendar(_ timeZone: TimeZone) -> Calendar {
        var calendar = Calendar(identifier: .iso8601)
        calendar.timeZone = timeZone
        return calendar
    }

    static func ms(_ date: Date) -> Int64 {
        Int64(clamping: Int64((date.timeIntervalSince1970 * 1000).rounded()))
    }

    /// `2027-01-30` in `timeZone`: the day a claim can still be filed.
    package static func day(_ ms: Int64, in timeZone: TimeZone) -> String {
        let parts = calendar(timeZone).dateComponents([.year, .month, .day], from: Date(timeIntervalSince1970: Double(ms) / 1000))
        return String(format: "%04d-%02d-%02d", parts.year ?? 1970, parts.month ?? 1, parts.day ?? 1)
    }
}
