import Foundation

/// RFC 3339 timestamps without a formatter: Foundation's date formatters go through ICU and cost
/// tens of microseconds each, which adds up over ten thousand sources.
package enum Timestamp {
    /// `2026-11-22T01:02:03.456Z` for milliseconds since 1970.
    package static func rfc3339(_ ms: Int64) -> String {
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
        digits(Int(parts.tm_year) + 1900, 4); out.append(45)
        digits(Int(parts.tm_mon) + 1, 2); out.append(45)
        digits(Int(parts.tm_mday), 2); out.append(84)
        digits(Int(parts.tm_hour), 2); out.append(58)
        digits(Int(parts.tm_min), 2); out.append(58)
        digits(Int(parts.tm_sec), 2); out.append(46)
        digits(millis, 3); out.append(90)
        return String(decoding: out, as: UTF8.self)
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
