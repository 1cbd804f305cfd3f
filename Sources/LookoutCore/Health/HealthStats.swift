import Synchronization

/// Counts in fixed time buckets, oldest overwritten: fixed memory however long Lookout runs.
public struct BucketRing: Sendable, Equatable {
    public struct Counts: Sendable, Equatable {
        public var probes: UInt32 = 0
        public var failures: UInt32 = 0
        public var retried: UInt32 = 0
        public var retrySucceeded: UInt32 = 0

        public init(probes: UInt32 = 0, failures: UInt32 = 0, retried: UInt32 = 0, retrySucceeded: UInt32 = 0) {
            self.probes = probes
            self.failures = failures
            self.retried = retried
            self.retrySucceeded = retrySucceeded
        }

        public static func + (a: Counts, b: Counts) -> Counts {
            Counts(probes: a.probes &+ b.probes, failures: a.failures &+ b.failures, retried: a.retried &+ b.retried, retrySucceeded: a.retrySucceeded &+ b.retrySucceeded)
        }
    }

    /// One bucket: when it starts, and what it counted.
    struct Slot: Sendable, Equatable {
        var start = Int64.min
        var counts = Counts()
    }

    public let widthMs: Int64
    private var slots: [Slot]

    public init(widthMs: Int64, count: Int) {
        self.widthMs = widthMs
        slots = Array(repeating: Slot(), count: count)
    }

    public mutating func add(_ delta: Counts, atMs: Int64) {
        let start = atMs - ((atMs % widthMs) + widthMs) % widthMs
        let index = Int(((start / widthMs) % Int64(slots.count) + Int64(slots.count)) % Int64(slots.count))
        if slots[index].start != start {
            guard start > slots[index].start else { return }  // older than what the ring holds
            slots[index] = Slot(start: start)
        }
        slots[index].counts = slots[index].counts + delta
    }

    /// Sums over several windows (ascending) in one walk from the newest bucket back, handing
    /// each window's sum to `store` (no allocation: this runs for every source on every scrape).
    public func sums(windowsMs: [Int64], nowMs: Int64, _ store: (Int, Counts) -> Void) {
        guard let longest = windowsMs.last else { return }
        walk(windows: windowsMs.count, longestMs: longest, nowMs: nowMs, window: { windowsMs[$0] }, store)
    }

    /// Sums over several windows (ascending).
    public func sums(windowsMs: [Int64], nowMs: Int64) -> [Counts] {
        var results = [Counts](repeating: Counts(), count: windowsMs.count)
        sums(windowsMs: windowsMs, nowMs: nowMs) { results[$0] = $1 }
        return results
    }

    /// The sum over the buckets that overlap the last `windowMs` before `nowMs`.
    public func sum(windowMs: Int64, nowMs: Int64) -> Counts {
        var result = Counts()
        walk(windows: 1, longestMs: windowMs, nowMs: nowMs, window: { _ in windowMs }) { result = $1 }
        return result
    }

    private func walk(windows: Int, longestMs: Int64, nowMs: Int64, window: (Int) -> Int64, _ store: (Int, Counts) -> Void) {
        guard windows > 0 else { return }
        let newest = nowMs - ((nowMs % widthMs) + widthMs) % widthMs
        let count = slots.count
        var index = Int(((newest / widthMs) % Int64(count) + Int64(count)) % Int64(count))
        var start = newest
        var running = Counts()
        var next = 0
        // A bucket that ends at or before `boundary` lies outside window `next`.
        var boundary = nowMs - window(0)
        let oldest = nowMs - longestMs
        slots.withUnsafeBufferPointer { slots in
            var visited = 0
            while visited < count && start + widthMs > oldest {
                if slots[index].start == start { running = running + slots[index].counts }
                start -= widthMs
                index = index == 0 ? count - 1 : index - 1
                visited += 1
                // Windows that the next (older) bucket no longer overlaps are complete.
                while next < windows && start + widthMs <= boundary {
                    store(next, running)
                    next += 1
                    if next < windows { boundary = nowMs - window(next) }
                }
            }
        }
        while next < windows {
            store(next, running)
            next += 1
        }
    }
}

/// The windows Lookout measures over, in milliseconds, named once for the rules, `/metrics`, the
/// JSON API and the page; and the arithmetic every one of them shares.
public enum HealthWindow {
    public static let minute: Int64 = 60_000
    public static let twoMinutes = 2 * minute
    public static let fiveMinutes = 5 * minute
    public static let fifteenMinutes = 15 * minute
    public static let thirtyMinutes = 30 * minute
    public static let hour = 60 * minute
    public static let sixHours = 6 * hour
    public static let day = 24 * hour
    public static let thirtyDays = 30 * day

    /// `lookout_error_rate{window}` and the JSON API's `error_rate`.
    public static let errorRates: [(label: String, ms: Int64)] = [("1m", minute), ("5m", fiveMinutes), ("15m", fifteenMinutes), ("1h", hour)]
    /// `lookout_availability_ratio{window}`.
    public static let availabilities: [(label: String, ms: Int64)] = [("24h", day), ("30d", thirtyDays)]
    /// The SLO target burn rates are measured against (SPEC 6: 99.9%).
    public static let sloTarget = 0.999

    /// Failed probes ÷ probes; nil without probes.
    public static func errorRate(_ counts: BucketRing.Counts) -> Double? {
        counts.probes == 0 ? nil : Double(counts.failures) / Double(counts.probes)
    }

    /// Calls that succeeded after a retry ÷ calls retried; nil without retries.
    public static func retrySuccessRatio(_ counts: BucketRing.Counts) -> Double? {
        counts.retried == 0 ? nil : Double(counts.retrySucceeded) / Double(counts.retried)
    }

    /// How fast the error budget of `target` burns: error rate ÷ (1 − target).
    public static func burnRate(errorRate: Double, target: Double = sloTarget) -> Double {
        errorRate / max(1e-9, 1 - target)
    }
}

/// The figures of one source at one moment, computed in one pass over its buckets.
public struct HealthSummary: Sendable, Equatable {
    /// The windows `counts(windowMs:)` answers for, in milliseconds.
    public static let windows: [Int64] = [
        HealthWindow.minute, HealthWindow.twoMinutes, HealthWindow.fiveMinutes, HealthWindow.fifteenMinutes,
        HealthWindow.thirtyMinutes, HealthWindow.hour, HealthWindow.sixHours, HealthWindow.day, HealthWindow.thirtyDays,
    ]
    /// The windows summed from the minute buckets (1m … 1h).
    static let minuteWindows = Array(windows.prefix(6))
    /// Counts per window of `windows`, stored inline so a summary copies without reference counting.
    var windowCounts = InlineArray<9, BucketRing.Counts>(repeating: BucketRing.Counts())
    public var retrySuccessRatio: Double?
    public var lastRecoveryMs: Int64?
    public var insecureBlocked = false
    public var recoveredAfterRetries = false

    /// The counts for `windowMs` if it is one of `windows`.
    public func counts(windowMs: Int64) -> BucketRing.Counts? {
        HealthSummary.windows.firstIndex(of: windowMs).map { windowCounts[$0] }
    }

    public func errorRate(windowMs: Int64) -> Double? {
        counts(windowMs: windowMs).flatMap(HealthWindow.errorRate)
    }

    /// 1 − error rate over the window.
    public func availability(windowMs: Int64) -> Double? {
        errorRate(windowMs: windowMs).map { 1 - $0 }
    }

    public static func == (a: HealthSummary, b: HealthSummary) -> Bool {
        a.retrySuccessRatio == b.retrySuccessRatio && a.lastRecoveryMs == b.lastRecoveryMs && a.insecureBlocked == b.insecureBlocked
            && a.recoveredAfterRetries == b.recoveredAfterRetries && HealthSummary.windows.indices.allSatisfy { a.windowCounts[$0] == b.windowCounts[$0] }
    }
}

/// One source's health over time: error rates, retry success, availability, recovery.
public struct SourceHealth: Sendable, Equatable {
    var minutes = BucketRing(widthMs: HealthWindow.minute, count: 61)
    var fiveMinutes = BucketRing(widthMs: HealthWindow.fiveMinutes, count: 73)
    var hours = BucketRing(widthMs: HealthWindow.hour, count: 25)
    var days = BucketRing(widthMs: HealthWindow.day, count: 31)
    /// When the current outage began (the first failure after a success).
    public var outageStartedMs: Int64?
    /// How long the last finished outage lasted.
    public var lastRecoveryMs: Int64?
    public var lastOk: Bool?
    /// The last probe was refused as plain http.
    public var insecureBlocked = false
    /// The last probe succeeded only after retries.
    public var recoveredAfterRetries = false

    public init() {}

    /// Adds counts at a time; `coarseOnly` feeds only the hour and day buckets (for hourly sums
    /// restored from the database).
    public mutating func add(_ counts: BucketRing.Counts, atMs: Int64, coarseOnly: Bool = false) {
        if !coarseOnly {
            minutes.add(counts, atMs: atMs)
            fiveMinutes.add(counts, atMs: atMs)
        }
        hours.add(counts, atMs: atMs)
        days.add(counts, atMs: atMs)
    }

    public mutating func record(_ result: ProbeResult) {
        let retried = result.attempts > 1
        add(BucketRing.Counts(probes: 1, failures: result.ok ? 0 : 1, retried: retried ? 1 : 0, retrySucceeded: retried && result.ok ? 1 : 0), atMs: result.timestampMs)
        if result.ok {
            if let started = outageStartedMs { lastRecoveryMs = result.timestampMs - started }
            outageStartedMs = nil
        } else if outageStartedMs == nil {
            outageStartedMs = result.timestampMs
        }
        lastOk = result.ok
        insecureBlocked = result.failure?.category == .insecureBlocked
        recoveredAfterRetries = result.ok && retried
    }

    /// Failed probes ÷ probes over the window; nil without probes.
    public func errorRate(windowMs: Int64, nowMs: Int64) -> Double? {
        HealthWindow.errorRate(sum(windowMs, nowMs))
    }

    public func counts(windowMs: Int64, nowMs: Int64) -> BucketRing.Counts {
        sum(windowMs, nowMs)
    }

    /// Every standard window at once.
    public func summary(nowMs: Int64) -> HealthSummary {
        var summary = HealthSummary()
        minutes.sums(windowsMs: HealthSummary.minuteWindows, nowMs: nowMs) { summary.windowCounts[$0] = $1 }
        for index in 6..<HealthSummary.windows.count {
            summary.windowCounts[index] = sum(HealthSummary.windows[index], nowMs)
        }
        summary.retrySuccessRatio = HealthWindow.retrySuccessRatio(summary.windowCounts[3])
        summary.lastRecoveryMs = lastRecoveryMs
        summary.insecureBlocked = insecureBlocked
        summary.recoveredAfterRetries = recoveredAfterRetries
        return summary
    }

    /// `summary(nowMs:)` on the stored value in place: called on an array element, the
    /// non-mutating method got a copy of the whole struct (eight ring arrays retained and
    /// released) for every source on every scrape.
    mutating func summaryInPlace(nowMs: Int64) -> HealthSummary {
        summary(nowMs: nowMs)
    }

    /// The error rate of each of the last 60 minutes, oldest first; nil for minutes without probes.
    public func minuteErrorRates(nowMs: Int64) -> [Double?] {
        let current = nowMs - nowMs % HealthWindow.minute
        return (0..<60).reversed().map { back in
            HealthWindow.errorRate(minutes.sum(windowMs: 1, nowMs: current - Int64(back) * HealthWindow.minute))
        }
    }

    /// Calls that succeeded after a retry ÷ calls retried, over 15 minutes.
    public func retrySuccessRatio(nowMs: Int64) -> Double? {
        HealthWindow.retrySuccessRatio(minutes.sum(windowMs: HealthWindow.fifteenMinutes, nowMs: nowMs))
    }

    /// How fast the error budget of `target` (0.999) burns: error rate ÷ (1 − target).
    public func burnRate(windowMs: Int64, nowMs: Int64, target: Double = HealthWindow.sloTarget) -> Double? {
        errorRate(windowMs: windowMs, nowMs: nowMs).map { HealthWindow.burnRate(errorRate: $0, target: target) }
    }

    /// Sums the finest ring that covers the window (without copying it).
    private func sum(_ windowMs: Int64, _ nowMs: Int64) -> BucketRing.Counts {
        if windowMs <= HealthWindow.hour { return minutes.sum(windowMs: windowMs, nowMs: nowMs) }
        if windowMs <= HealthWindow.sixHours { return fiveMinutes.sum(windowMs: windowMs, nowMs: nowMs) }
        if windowMs <= HealthWindow.day { return hours.sum(windowMs: windowMs, nowMs: nowMs) }
        return days.sum(windowMs: windowMs, nowMs: nowMs)
    }
}

/// Every source's health plus the service-wide partial-failure rounds; a probe result sink.
/// A round is one minute: it is partial when some but not all probed sources failed in it.
public final class HealthAnalyzer: ProbeResultSink {
    private struct Round: Sendable {
        var minuteMs: Int64 = Int64.min
        var probed: Set<String> = []
        var failed: Set<String> = []
    }

    private struct State {
        /// Kept in an array (read in place) with positions by name: a dictionary's getter would
        /// copy each source's rings on every read.
        var sources: [SourceHealth] = []
        var positions: [String: Int] = [:]
        var rounds = [Round](repeating: Round(), count: 16)

        mutating func position(_ source: String) -> Int {
            if let position = positions[source] { return position }
            sources.append(SourceHealth())
            positions[source] = sources.count - 1
            return sources.count - 1
        }
    }

    private let state = Mutex(State())

    public init() {}

    public func record(_ result: ProbeResult) {
        state.withLock { state in
            let position = state.position(result.source)
            state.sources[position].record(result)
            let minute = result.timestampMs - result.timestampMs % HealthWindow.minute
            let index = Int((minute / HealthWindow.minute) % Int64(state.rounds.count))
            if state.rounds[index].minuteMs != minute {
                guard minute > state.rounds[index].minuteMs else { return }
                state.rounds[index] = Round(minuteMs: minute)
            }
            state.rounds[index].probed.insert(result.source)
            if !result.ok { state.rounds[index].failed.insert(result.source) }
        }
    }

    /// Adds stored counts (from `probe_rollups`) after a restart: minutes, or hourly sums.
    public func restore(source: String, atMs: Int64, counts: BucketRing.Counts, hourly: Bool) {
        state.withLock { state in
            let position = state.position(source)
            state.sources[position].add(counts, atMs: atMs, coarseOnly: hourly)
        }
    }

    /// Keeps only the sources still configured.
    public func retain(_ names: Set<String>) {
        state.withLock { state in
            let kept = state.positions.filter { names.contains($0.key) }.sorted { $0.value < $1.value }
            state.sources = kept.map { state.sources[$0.value] }
            state.positions = Dictionary(uniqueKeysWithValues: kept.enumerated().map { ($0.element.key, $0.offset) })
        }
    }

    /// The last hour's per-minute error rates of `sources`, in their order.
    public func minuteErrorRates(_ sources: [String], nowMs: Int64) -> [[Double?]] {
        state.withLock { state in sources.map { state.positions[$0].map { state.sources[$0].minuteErrorRates(nowMs: nowMs) } ?? [] } }
    }

    /// Summaries of `sources`, in their order, computed under one lock without copying buckets.
    public func summaries(_ sources: [String], nowMs: Int64) -> [HealthSummary?] {
        state.withLock { state in
            var summaries: [HealthSummary?] = []
            summaries.reserveCapacity(sources.count)
            for source in sources {
                if let position = state.positions[source] {
                    summaries.append(state.sources[position].summaryInPlace(nowMs: nowMs))
                } else {
                    summaries.append(nil)
                }
            }
            return summaries
        }
    }

    public func health(_ source: String) -> SourceHealth? {
        state.withLock { state in state.positions[source].map { state.sources[$0] } }
    }

    /// Share of the finished rounds of the last 15 minutes in which some but not all sources failed.
    public func partialFailureRatio(nowMs: Int64) -> Double {
        state.withLock { state in
            let current = nowMs - nowMs % HealthWindow.minute
            let rounds = state.rounds.filter { $0.minuteMs != Int64.min && $0.minuteMs > current - HealthWindow.fifteenMinutes && $0.minuteMs <= current }
            guard !rounds.isEmpty else { return 0 }
            let partial = rounds.filter { !$0.failed.isEmpty && $0.failed.count < $0.probed.count }.count
            return Double(partial) / Double(rounds.count)
        }
    }
}
