/// Limits retries to a share of recent calls, with a floor, as Envoy's `retry_budget` does:
/// over the last minute, retries may be at most `max(minRetriesPerMinute, ratio × calls)`.
/// Six ten-second buckets keep the memory fixed.
public struct RetryBudget: Sendable, Equatable {
    /// Retries allowed per call started in the last minute (0.2: one retry per five calls).
    public var ratio: Double
    /// Retries allowed in any minute, however few calls were made.
    public var minRetriesPerMinute: Int
    private var calls = [Int](repeating: 0, count: 6)
    private var retries = [Int](repeating: 0, count: 6)
    private var bucketStartMs = [Int64](repeating: Int64.min, count: 6)
    /// How often a retry was refused.
    public private(set) var exhaustedCount = 0

    /// An empty budget: by default 20% of calls, and at least three retries a minute.
    public init(ratio: Double = 0.2, minRetriesPerMinute: Int = 3) {
        self.ratio = ratio
        self.minRetriesPerMinute = minRetriesPerMinute
    }

    /// A call started.
    public mutating func recordCall(nowMs: Int64) {
        calls[slot(nowMs)] += 1
    }

    /// Takes one retry from the budget, or reports it spent.
    public mutating func tryAcquireRetry(nowMs: Int64) -> Bool {
        let index = slot(nowMs)
        let allowed = Swift.max(Double(minRetriesPerMinute), ratio * Double(calls.reduce(0, +)))
        guard Double(retries.reduce(0, +)) + 1 <= allowed else {
            exhaustedCount += 1
            return false
        }
        retries[index] += 1
        return true
    }

    /// Retries still allowed in the current minute.
    public func remaining(nowMs: Int64) -> Int {
        var copy = self
        _ = copy.slot(nowMs)
        let allowed = Swift.max(Double(copy.minRetriesPerMinute), copy.ratio * Double(copy.calls.reduce(0, +)))
        // Within Int for any floor and ratio (the config allows a million a minute).
        return Swift.max(0, Int(Swift.min(allowed, 1e15)) - copy.retries.reduce(0, +))
    }

    /// The bucket for `nowMs`, clearing buckets that have aged out.
    private mutating func slot(_ nowMs: Int64) -> Int {
        let start = nowMs - (nowMs % 10_000 + 10_000) % 10_000
        for index in 0..<6 where bucketStartMs[index] != Int64.min && bucketStartMs[index] <= start - 60_000 {
            calls[index] = 0
            retries[index] = 0
            bucketStartMs[index] = Int64.min
        }
        let index = Int(((start / 10_000) % 6 + 6) % 6)
        if bucketStartMs[index] != start {
            calls[index] = 0
            retries[index] = 0
            bucketStartMs[index] = start
        }
        return index
    }
}
