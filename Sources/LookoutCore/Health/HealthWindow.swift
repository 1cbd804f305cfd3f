/// The windows Lookout measures over, in milliseconds, named once for the rules, `/metrics`, the
/// JSON API and the page; and the arithmetic every one of them shares.
package enum HealthWindow {
    package static let minute: Int64 = 60_000
    package static let twoMinutes = 2 * minute
    package static let fiveMinutes = 5 * minute
    package static let fifteenMinutes = 15 * minute
    package static let thirtyMinutes = 30 * minute
    package static let hour = 60 * minute
    package static let sixHours = 6 * hour
    package static let day = 24 * hour
    package static let thirtyDays = 30 * day

    /// The start of the `width`-wide bucket holding `ms` (rounding down, before 1970 too; in the
    /// first bucket of all, where that start is not an Int64, `ms` itself).
    package static func floor(_ ms: Int64, to width: Int64) -> Int64 {
        let offset = ((ms % width) + width) % width
        return ms >= Int64.min + offset ? ms - offset : ms
    }

    /// `lookout_error_rate{window}` and the JSON API's `error_rate`.
    package static let errorRates: [(label: String, ms: Int64)] = [("1m", minute), ("5m", fiveMinutes), ("15m", fifteenMinutes), ("1h", hour)]
    /// `lookout_availability_ratio{window}`.
    package static let availabilities: [(label: String, ms: Int64)] = [("24h", day), ("30d", thirtyDays)]
    /// The SLO target burn rates are measured against (SPEC 6: 99.9%).
    package static let sloTarget = 0.999

    /// Failed probes ÷ probes; nil without probes.
    package static func errorRate(_ counts: BucketCounts) -> Double? {
        counts.probes == 0 ? nil : Double(counts.failures) / Double(counts.probes)
    }

    /// Probes that did not fail ÷ probes; nil without probes.
    package static func availability(_ counts: BucketCounts) -> Double? {
        availability(probes: counts.probes, failures: counts.failures)
    }

    /// The same for counts kept in other integer types: history tiers, sums over many days.
    /// Inlinable: the availability route calls it for every day of every source.
    @inlinable package static func availability<Count: BinaryInteger>(probes: Count, failures: Count) -> Double? {
        probes > 0 ? 1 - Double(failures) / Double(probes) : nil
    }

    /// Calls that succeeded after a retry ÷ calls retried; nil without retries.
    package static func retrySuccessRatio(_ counts: BucketCounts) -> Double? {
        counts.retried == 0 ? nil : Double(counts.retrySucceeded) / Double(counts.retried)
    }

    /// How fast the error budget of `target` burns: error rate ÷ (1 − target).
    package static func burnRate(errorRate: Double, target: Double = sloTarget) -> Double {
        errorRate / max(1e-9, 1 - target)
    }
}

/// The figures of one source at one moment, computed in one pass over its buckets.
package struct HealthSummary: Sendable, Equatable {
    /// The windows `counts(windowMs:)` answers for, in milliseconds.
    package static let windows: [Int64] = [
        HealthWindow.minute, HealthWindow.twoMinutes, HealthWindow.fiveMinutes, HealthWindow.fifteenMinutes,
        HealthWindow.thirtyMinutes, HealthWindow.hour, HealthWindow.sixHours, HealthWindow.day, HealthWindow.thirtyDays,
    ]
    /// The windows summed from the minute buckets (1m … 1h).
    static let minuteWindows = Array(windows.prefix(6))
    /// Counts per window of `windows`, stored inline so a summary copies without reference counting.
    var windowCounts = InlineArray<9, BucketCounts>(repeating: BucketCounts())
    package var retrySuccessRatio: Double?
    package var lastRecoveryMs: Int64?
    package var insecureBlocked = false

    /// The counts for `windowMs` if it is one of `windows`.
    package func counts(windowMs: Int64) -> BucketCounts? {
        HealthSummary.windows.firstIndex(of: windowMs).map { windowCounts[$0] }
    }

    package func errorRate(windowMs: Int64) -> Double? {
        counts(windowMs: windowMs).flatMap(HealthWindow.errorRate)
    }

    /// 1 − error rate over the window.
    package func availability(windowMs: Int64) -> Double? {
        errorRate(windowMs: windowMs).map { 1 - $0 }
    }

    package static func == (a: HealthSummary, b: HealthSummary) -> Bool {
        a.retrySuccessRatio == b.retrySuccessRatio && a.lastRecoveryMs == b.lastRecoveryMs && a.insecureBlocked == b.insecureBlocked
            && HealthSummary.windows.indices.allSatisfy { a.windowCounts[$0] == b.windowCounts[$0] }
    }
}
