import Foundation

/// RFC 3339 timestamps without a formatter: Foundation's date formatters go through ICU and cost
/// tens of microseconds each, which adds up over ten thousand sources.
package enum Timestamp {
    /// The times `rfc3339` can write: years 0000 to 9999.
    package static let writable: ClosedRange<Int64> = -62_167_219_200_000...253_402_300_799_999

    /// `2026-11-22T01:02:03.456Z` for milliseconds since 1970. A time outside years 0000–9999
    /// (a damaged database may hold any number) is written as the nearest one inside.
    package static func rfc3339(_ ms: Int64) -> String { rfc3339(ms, fraction: true) }

    /// `2026-11-22T01:02:03Z`: `rfc3339` to the second.
    package static func rfc3339Seconds(_ ms: Int64) -> String { rfc3339(ms, fraction: false) }

    private static func rfc3339(_ ms: Int64, fraction: Bool) -> String {
        let ms = min(max(ms, writable.lowerBound), writable.upperBound)
        var seconds = time_t(ms >= 0 ? ms / 1000 : (ms - 999) / 1000)
        let millis = Int(ms - Int64(seconds) * 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        var out = [UInt8]()
        out.reserveCapacity(24)
        func digits(_ value: Int, _ count: Int) {
            var divisor = 1
            for _ in 1..<count { divisor *= 10 }
            var rest = value
            while divisor > 0 {
                out.append(UInt8(48 + (rest / divisor) % 10))
                rest %= divisor
                divisor /= 10
            }
        }
        digits(Int(parts.tm_year) + 1900, 4)
        out.append(45)
        digits(Int(parts.tm_mon) + 1, 2)
        out.append(45)
        digits(Int(parts.tm_mday), 2)
        out.append(84)
        digits(Int(parts.tm_hour), 2)
        out.append(58)
        digits(Int(parts.tm_min), 2)
        out.append(58)
        digits(Int(parts.tm_sec), 2)
        if fraction {
            out.append(46)
            digits(millis, 3)
        }
        out.append(90)
        return String(decoding: out, as: UTF8.self)
    }

    /// Milliseconds since 1970 for an RFC 3339 time: `2026-11-22T01:02:03Z`, with fractional
    /// seconds (`.456`) and an offset (`+01:00`) or not; nil for anything else. Written by hand:
    /// Foundation's formatters leak on Linux and cost tens of microseconds each.
    package static func parseRFC3339(_ text: String) -> Int64? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 20, bytes.count <= 40 else { return nil }
        func number(_ start: Int, _ count: Int) -> Int? {
            guard start + count <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[start..<(start + count)] {
                guard (48...57).contains(byte) else { return nil }
                value = value * 10 + Int(byte - 48)
            }
            return value
        }
        let separators: [(Int, UInt8)] = [(4, 45), (7, 45), (13, 58), (16, 58)]
        guard separators.allSatisfy({ bytes[$0.0] == $0.1 }), bytes[10] == 84 || bytes[10] == 116,
            let year = number(0, 4), let month = number(5, 2), let day = number(8, 2),
            let hour = number(11, 2), let minute = number(14, 2), let second = number(17, 2),
            (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var index = 19
        var millis = 0
        if bytes[index] == 46 {  // fraction: milliseconds from the first three digits
            index += 1
            var digits = 0
            while index < bytes.count, (48...57).contains(bytes[index]) {
                if digits < 3 { millis = millis * 10 + Int(bytes[index] - 48) }
                digits += 1
                index += 1
            }
            guard digits > 0 else { return nil }
            if digits < 3 { for _ in digits..<3 { millis *= 10 } }
        }
        var offsetMinutes = 0
        guard index < bytes.count else { return nil }
        switch bytes[index] {
        case 90, 122:  // Z
            guard index + 1 == bytes.count else { return nil }
        case 43, 45:  // + or -
            guard index + 6 == bytes.count, bytes[index + 3] == 58, let hours = number(index + 1, 2), let minutes = number(index + 4, 2),
                hours < 24, minutes < 60
            else { return nil }
            offsetMinutes = (hours * 60 + minutes) * (bytes[index] == 45 ? -1 : 1)
        default:
            return nil
        }
        var parts = tm()
        parts.tm_year = Int32(year - 1900)
        parts.tm_mon = Int32(month - 1)
        parts.tm_mday = Int32(day)
        parts.tm_hour = Int32(hour)
        parts.tm_min = Int32(minute)
        parts.tm_sec = Int32(second)
        return (Int64(timegm(&parts)) - Int64(offsetMinutes) * 60) * 1000 + Int64(millis)
    }

    /// Milliseconds since 1970 for an RFC 822 time as RSS gives it: `Fri, 27 Nov 2026 03:10:43
    /// +0000` (the weekday optional; `GMT`, `UTC`, `Z` or `±hhmm`; seconds optional); nil else.
    package static func parseRFC822(_ text: String) -> Int64? {
        var words = text.split(separator: " ").map(String.init)
        if let first = words.first, first.hasSuffix(",") { words.removeFirst() }
        let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
        guard words.count == 5, let day = Int(words[0]), (1...31).contains(day),
            let month = months.firstIndex(of: words[1].lowercased().prefix(3).description), let year = Int(words[2]), (1970...9999).contains(year)
        else { return nil }
        let clock = words[3].split(separator: ":").map { Int($0) }
        guard clock.count == 2 || clock.count == 3, let hour = clock[0], let minute = clock[1], hour < 24, minute < 60 else { return nil }
        let second = clock.count == 3 ? clock[2] : 0
        guard let second, second < 61 else { return nil }
        var offsetMinutes = 0
        switch words[4].uppercased() {
        case "GMT", "UTC", "UT", "Z": break
        case let zone where zone.count == 5 && (zone.hasPrefix("+") || zone.hasPrefix("-")):
            guard let hours = Int(zone.dropFirst().prefix(2)), let minutes = Int(zone.suffix(2)), hours < 24, minutes < 60 else { return nil }
            offsetMinutes = (hours * 60 + minutes) * (zone.hasPrefix("-") ? -1 : 1)
        default: return nil
        }
        var parts = tm()
        parts.tm_year = Int32(year - 1900)
        parts.tm_mon = Int32(month)
        parts.tm_mday = Int32(day)
        parts.tm_hour = Int32(hour)
        parts.tm_min = Int32(minute)
        parts.tm_sec = Int32(second)
        return (Int64(timegm(&parts)) - Int64(offsetMinutes) * 60) * 1000
    }

    /// An RFC 822 time in GMT, as RSS wants it: `Fri, 27 Nov 2026 03:10:43 GMT`.
    package static func rfc822(_ ms: Int64) -> String {
        var seconds = time_t(ms / 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let weekday = days[Int(max(0, min(6, parts.tm_wday)))]
        let month = months[Int(max(0, min(11, parts.tm_mon)))]
        return "\(weekday), \(two(parts.tm_mday)) \(month) \(parts.tm_year + 1900) \(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }

    /// The time of day in UTC, as a status line says it: `14:05 UTC`.
    package static func clock(_ ms: Int64) -> String {
        String(rfc3339(ms).dropFirst(11).prefix(5)) + " UTC"
    }

    /// A UTC day as a tooltip says it: `3 Nov 2026`.
    package static func day(_ ms: Int64) -> String {
        let text = rfc3339(ms)
        let month = Int(text.dropFirst(5).prefix(2)) ?? 1
        let names = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        return "\(Int(text.dropFirst(8).prefix(2)) ?? 1) \(names[max(1, min(12, month)) - 1]) \(text.prefix(4))"
    }

    /// A duration as people say it on a status line: `45s`, `4m`, `2h 5m`, `3d 4h`.
    package static func human(_ ms: Int64) -> String {
        let seconds = max(0, ms / 1000)
        if seconds < 60 { return "\(seconds)s" }
        if seconds < 3600 { return "\(seconds / 60)m" }
        if seconds < 86400 {
            let minutes = seconds % 3600 / 60
            return minutes == 0 ? "\(seconds / 3600)h" : "\(seconds / 3600)h \(minutes)m"
        }
        let hours = seconds % 86400 / 3600
        return hours == 0 ? "\(seconds / 86400)d" : "\(seconds / 86400)d \(hours)h"
    }

    /// Milliseconds since 1970 now.
    package static func nowMs() -> Int64 {
        Int64(Date().timeIntervalSince1970 * 1000)
    }
}
