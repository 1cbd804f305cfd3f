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

    /// IMF-fixdate, the obsolete RFC 850 form, and asctime (RFC 9110 §5.6.7).
    static func httpDate(_ value: String) -> Date? {
        let text = value.trimmingCharacters(in: .whitespaces)
        for format in ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"] {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = format
            if let date = formatter.date(from: text) { return date }
        }
        return nil
    }
}
