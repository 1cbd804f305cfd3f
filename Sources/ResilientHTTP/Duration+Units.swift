/// Durations as the numbers C APIs, configs and JSON want, and numbers from outside (configs,
/// headers, query strings) turned into durations and integers without ever trapping.
extension Duration {
    /// A hundred years: the longest duration a config, a header or a request may ask for. Anything
    /// longer is refused (configs) or clamped to this (headers), so that no later arithmetic on
    /// milliseconds can overflow.
    public static let longest = Duration.seconds(Int64(100 * 365 * 86_400))

    /// The whole milliseconds in this duration, saturating at Int64's bounds instead of trapping.
    public var totalMilliseconds: Int64 {
        let (seconds, attoseconds) = components
        let (milliseconds, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        if overflow { return seconds < 0 ? .min : .max }
        return milliseconds.addingClamped(attoseconds / 1_000_000_000_000_000)
    }

    /// The whole nanoseconds in this duration, saturating at Int64's bounds (about 292 years).
    public var totalNanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (nanoseconds, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        return nanoseconds.addingClamped(attoseconds / 1_000_000_000)
    }

    /// The duration in seconds, as a Double.
    public var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    /// Seconds from outside (a header, a JSON number, a computed wait) as a duration: nil when
    /// NaN or negative, `longest` when longer (infinity included), else rounded to milliseconds.
    ///
    /// ```swift
    /// Duration.clamping(seconds: 1e16)   // Duration.longest
    /// Duration.clamping(seconds: -1)     // nil
    /// ```
    public static func clamping(seconds: Double) -> Duration? {
        guard !seconds.isNaN, seconds >= 0 else { return nil }
        guard seconds < Duration.longest.seconds else { return .longest }
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }
}

extension Int64 {
    /// `value` rounded to the nearest whole number and clamped into Int64's range; nil for NaN.
    /// Use this, never `Int64(_:)`, on a Double that came from outside or from arithmetic on one.
    public init?(clamping value: Double) {
        guard !value.isNaN else { return nil }
        let rounded = value.rounded()
        // 2^63 is exactly representable; every Double below it converts without trapping.
        if rounded >= 9_223_372_036_854_775_808.0 { self = .max } else if rounded <= -9_223_372_036_854_775_808.0 { self = .min } else { self = Int64(rounded) }
    }
}

extension FixedWidthInteger {
    /// `self + other`, saturating at the type's bounds instead of trapping.
    @inlinable
    public func addingClamped(_ other: Self) -> Self {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other < 0 ? .min : .max) : sum
    }

    /// `self × other`, saturating at the type's bounds instead of trapping.
    @inlinable
    public func multipliedClamped(_ other: Self) -> Self {
        let (product, overflow) = multipliedReportingOverflow(by: other)
        return overflow ? ((self < 0) != (other < 0) ? .min : .max) : product
    }
}
