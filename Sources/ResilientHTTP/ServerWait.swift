import Foundation

/// Reads how long a server asks us to wait: `Retry-After` (seconds or an HTTP-date), the
/// `RateLimit` field's `t=` (draft-ietf-httpapi-ratelimit-headers) and the older `RateLimit-Reset`.
public enum ServerWait {
    /// The longest wait any of the headers asks for, relative to `now`.
    public static func requested(by result: TransferResult, now: Date = Date()) -> Duration? {
        [
            result.header("Retry-After").flatMap { retryAfter($0, now: now) },
            result.header("RateLimit").flatMap(rateLimitReset),
            result.header("RateLimit-Reset").flatMap(deltaSeconds),
        ].compactMap { $0 }.max()
    }

    /// `Retry-After: 120` or `Retry-After: Wed, 21 Oct 2015 07:28:00 GMT` (RFC 9110 §10.2.3).
    public static func retryAfter(_ value: String, now: Date) -> Duration? {
        if let seconds = deltaSeconds(value) { return seconds }
        guard let date = httpDate(value) else { return nil }
        return Duration.clamping(seconds: Swift.max(0, date.timeIntervalSince(now)))
    }

    /// The `t=` parameter of `RateLimit: "default";r=0;t=30`.
    public static func rateLimitReset(_ value: String) -> Duration? {
        parameter("t", in: value).flatMap(deltaSeconds)
    }

    /// The `r=` parameter (remaining quota) of a `RateLimit` field.
    public static func rateLimitRemaining(_ value: String) -> Int? {
        parameter("r", in: value).flatMap { Int($0) }
    }

    static func parameter(_ name: String, in value: String) -> String? {
        for item in value.split(whereSeparator: { $0 == ";" || $0 == "," }) {
            let parts = item.split(separator: "=", maxSplits: 1)
            if parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces) == name {
                return parts[1].trimmingCharacters(in: .whitespaces)
            }
        }
        return nil
    }

    static func deltaSeconds(_ value: String) -> Duration? {
        // Digits only (RFC 9110 delay-seconds); a value past Int64 is as good as "forever".
        let digits = value.trimmingCharacters(in: .whitespaces)
        guard !digits.isEmpty, digits.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { return nil }
        guard let seconds = Int64(digits) else { return .longest }
        return Swift.min(.seconds(seconds), .longest)
    }

    /// IMF-fixdate, the obsolete RFC 850 form, and asctime (RFC 9110 §5.6.7), parsed by hand:
    /// Foundation's DateFormatter leaks memory on Linux at every parse (found by fuzzing), and an
    /// upstream decides how often this runs.
    ///
    /// ```
    /// Sun, 06 Nov 1994 08:49:37 GMT     IMF-fixdate
    /// Sunday, 06-Nov-94 08:49:37 GMT    RFC 850
    /// Sun Nov  6 08:49:37 1994          asctime
    /// ```
    static func httpDate(_ value: String) -> Date? {
        let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
        let words = value.lowercased().split(whereSeparator: { $0 == " " || $0 == "," || $0 == "-" || $0 == "\t" }).map(String.init)
        var day: Int?
        var month: Int?
        var year: Int?
        var time: [Int]?
        for word in words.dropFirst() {  // the first word is the weekday
            if let index = months.firstIndex(of: word) {
                month = index + 1
            } else if word.contains(":") {
                let parts = word.split(separator: ":").map { Int($0) }
                guard parts.count == 3, parts.allSatisfy({ $0 != nil }) else { return nil }
                time = parts.map { $0! }
            } else if word == "gmt" || word == "utc" {
                continue
            } else if word.count <= 4, word.allSatisfy(\.isASCII), let number = Int(word) {
                if day == nil && month == nil && word.count <= 2 {
                    day = number
                }  // IMF and RFC 850: day first
                else if day == nil && month != nil && word.count <= 2 && time == nil {
                    day = number
                }  // asctime: "Nov  6"
                else if year == nil {
                    year = word.count == 2 ? (number < 70 ? 2000 + number : 1900 + number) : number
                } else {
                    return nil
                }
            } else {
                return nil
            }
        }
        guard let day, let month, let year, let time, (1...31).contains(day), (1...9999).contains(year),
            (0...23).contains(time[0]), (0...59).contains(time[1]), (0...60).contains(time[2])
        else { return nil }
        // Days from 1970-01-01 to the civil date (Howard Hinnant's days_from_civil).
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        return Date(timeIntervalSince1970: Double(days * 86_400 + time[0] * 3600 + time[1] * 60 + time[2]))
    }
}
