/// One source's health over time: error rates, retry success, availability, recovery.
package struct SourceHealth: Sendable, Equatable {
    var minutes = CountRing(widthMs: HealthWindow.minute, count: 61)
    var fiveMinutes = CountRing(widthMs: HealthWindow.fiveMinutes, count: 73)
    var hours = CountRing(widthMs: HealthWindow.hour, count: 25)
    /// 91 days: the status page's 90-day bars (UTC days) and the 30-day availability.
    package private(set) var days = CountRing(widthMs: HealthWindow.day, count: 91, keepsRetries: false)
    /// Response times per hour over the last day, for the page's chart.
    package private(set) var latency = LatencyRing(widthMs: HealthWindow.hour, count: 25)
    /// The oldest moment counted (a probe, or history restored after a restart): windowed alert
    /// figures need history reaching back over their whole window.
    package private(set) var firstSampleMs: Int64?
    /// When the breaker last opened from closed, newest last (at most 16): alert rules count
    /// them, so an opening between two evaluations is not missed.
    private var breakerOpenings: [Int64] = []
    /// When the current outage began (the first failure after a success).
    package var outageStartedMs: Int64?
    /// How long the last finished outage lasted.
    package var lastRecoveryMs: Int64?
    package var lastOk: Bool?
    /// The last probe was refused as plain http.
    package var insecureBlocked = false

    package init() {}

    /// Adds counts at a time; `coarseOnly` feeds only the hour and day buckets (for hourly sums
    /// restored from the database).
    package mutating func add(_ counts: BucketCounts, atMs: Int64, coarseOnly: Bool = false) {
        firstSampleMs = min(firstSampleMs ?? atMs, atMs)
        if !coarseOnly {
            minutes.add(counts, atMs: atMs)
            fiveMinutes.add(counts, atMs: atMs)
        }
        hours.add(counts, atMs: atMs)
        days.add(counts, atMs: atMs)
    }

    package mutating func record(_ result: ProbeResult) {
        let retried = result.attempts > 1
        if let seconds = result.attemptSeconds { latency.observe(seconds: seconds, atMs: result.timestampMs) }
        add(
            BucketCounts(probes: 1, failures: result.ok ? 0 : 1, retried: retried ? 1 : 0, retrySucceeded: retried && result.ok ? 1 : 0),
            atMs: result.timestampMs)
        if result.ok {
            if let started = outageStartedMs { lastRecoveryMs = result.timestampMs - started }
            outageStartedMs = nil
        } else if outageStartedMs == nil {
            outageStartedMs = result.timestampMs
        }
        lastOk = result.ok
        insecureBlocked = result.failure?.category == .insecureBlocked
    }

    /// Adds stored latency bucket counts (`Histogram.latencyBuckets`, then +Inf) after a restart.
    package mutating func addLatency(_ counts: [Int], atMs: Int64) {
        latency.add(counts, atMs: atMs)
    }

    mutating func noteBreakerOpened(atMs: Int64) {
        breakerOpenings.append(atMs)
        if breakerOpenings.count > 16 { breakerOpenings.removeFirst() }
    }

    /// Times the breaker opened from closed in the `windowMs` before `nowMs`.
    package func breakerOpens(windowMs: Int64, nowMs: Int64) -> Int {
        breakerOpenings.reduce(0) { $0 + ($1 > nowMs - windowMs && $1 <= nowMs ? 1 : 0) }
    }

    /// Whether the counted history reaches back over the whole window.
    package func covers(windowMs: Int64, nowMs: Int64) -> Bool {
        guard let firstSampleMs else { return false }
        return nowMs - firstSampleMs >= windowMs
    }

    /// Failed probes ÷ probes over the window; nil without probes.
    package func errorRate(windowMs: Int64, nowMs: Int64) -> Double? {
        HealthWindow.errorRate(sum(windowMs, nowMs))
    }

    package func counts(windowMs: Int64, nowMs: Int64) -> BucketCounts {
        sum(windowMs, nowMs)
    }

    /// Every standard window at once.
    package func summary(nowMs: Int64) -> HealthSummary {
        var summary = HealthSummary()
        minutes.sums(windowsMs: HealthSummary.minuteWindows, nowMs: nowMs) { summary.windowCounts[$0] = $1 }
        for index in 6..<HealthSummary.windows.count {
            summary.windowCounts[index] = sum(HealthSummary.windows[index], nowMs)
        }
        summary.retrySuccessRatio = HealthWindow.retrySuccessRatio(summary.windowCounts[3])
        summary.lastRecoveryMs = lastRecoveryMs
        summary.insecureBlocked = insecureBlocked
        return summary
    }

    /// The error rate of each of the last 60 minutes, oldest first; nil for minutes without probes.
    package func minuteErrorRates(nowMs: Int64) -> [Double?] {
        let current = nowMs - nowMs % HealthWindow.minute
        return (0..<60).reversed().map { back in
            HealthWindow.errorRate(minutes.sum(windowMs: 1, nowMs: current - Int64(back) * HealthWindow.minute))
        }
    }

    /// Calls that succeeded after a retry ÷ calls retried, over 15 minutes.
    package func retrySuccessRatio(nowMs: Int64) -> Double? {
        HealthWindow.retrySuccessRatio(minutes.sum(windowMs: HealthWindow.fifteenMinutes, nowMs: nowMs))
    }

    /// How fast the error budget of `target` (0.999) burns: error rate ÷ (1 − target).
    package func burnRate(windowMs: Int64, nowMs: Int64, target: Double = HealthWindow.sloTarget) -> Double? {
        errorRate(windowMs: windowMs, nowMs: nowMs).map { HealthWindow.burnRate(errorRate: $0, target: target) }
    }

    /// Sums the finest ring that covers the window (without copying it).
    private func sum(_ windowMs: Int64, _ nowMs: Int64) -> BucketCounts {
        if windowMs <= HealthWindow.hour { return minutes.sum(windowMs: windowMs, nowMs: nowMs) }
        if windowMs <= HealthWindow.sixHours { return fiveMinutes.sum(windowMs: windowMs, nowMs: nowMs) }
        if windowMs <= HealthWindow.day { return hours.sum(windowMs: windowMs, nowMs: nowMs) }
        return days.sum(windowMs: windowMs, nowMs: nowMs)
    }
}

/// The service-wide partial-failure rounds. A round is one minute: it is partial when some but
/// not all probed sources failed in it. A round counts sources, not names: each source keeps
/// `Marks` of the last minute it was counted in, so a probe costs no hashing of its name.
struct PartialFailureRounds: Sendable {
    /// The last minutes a source was counted as probed and as failed.
    struct Marks: Sendable {
        var probedMinuteMs = Int64.min
        var failedMinuteMs = Int64.min
    }

    private struct Round: Sendable {
        var minuteMs: Int64 = Int64.min
        var probed = 0
        var failed = 0
    }

    private var rounds = [Round](repeating: Round(), count: 16)

    mutating func record(_ result: ProbeResult, marks: inout Marks) {
        let minute = result.timestampMs - result.timestampMs % HealthWindow.minute
        // Once a minute per source, and never for a minute before one it was counted in (a
        // clock set back would count it twice in the later one). A result of an earlier minute
        // that arrives late (a probe now overlapping a scheduled one) counts for neither, and
        // starts no round: a failure counted where its source was not would make a round look
        // whole. (Its failure is lost when its source was counted in that minute already.)
        guard minute >= marks.probedMinuteMs else { return }
        // Not negative for a time before 1970 (a clock set back that far).
        let count = Int64(rounds.count)
        let index = Int(((minute / HealthWindow.minute) % count + count) % count)
        if rounds[index].minuteMs != minute {
            guard minute > rounds[index].minuteMs else { return }
            rounds[index] = Round(minuteMs: minute)
        }
        if minute > marks.probedMinuteMs {
            marks.probedMinuteMs = minute
            rounds[index].probed += 1
        }
        if !result.ok, minute > marks.failedMinuteMs {
            marks.failedMinuteMs = minute
            rounds[index].failed += 1
        }
    }

    /// Share of the finished rounds of the last 15 minutes in which some but not all sources failed.
    func partialFailureRatio(nowMs: Int64) -> Double {
        let current = nowMs - nowMs % HealthWindow.minute
        let recent = rounds.filter { $0.minuteMs != Int64.min && $0.minuteMs > current - HealthWindow.fifteenMinutes && $0.minuteMs <= current }
        guard !recent.isEmpty else { return 0 }
        let partial = recent.filter { $0.failed > 0 && $0.failed < $0.probed }.count
        return Double(partial) / Double(recent.count)
    }
}
