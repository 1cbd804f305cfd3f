/// A cumulative histogram with fixed buckets, as Prometheus exposes it.
public struct Histogram: Sendable, Equatable {
    /// Upper bounds fitting probe latencies, 1 ms to 60 s.
    public static let latencyBuckets: [Double] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]

    public let bounds: [Double]
    /// Observations per bucket (not cumulative); the last entry counts those above every bound.
    public private(set) var counts: [UInt64]
    public private(set) var sum: Double = 0
    public private(set) var count: UInt64 = 0

    public init(bounds: [Double] = Histogram.latencyBuckets) {
        self.bounds = bounds
        self.counts = Array(repeating: 0, count: bounds.count + 1)
    }

    public mutating func observe(_ value: Double) {
        let index = bounds.firstIndex { value <= $0 } ?? bounds.count
        counts[index] += 1
        sum += value
        count += 1
    }

    /// Cumulative counts for each bound, then +Inf.
    public var cumulativeCounts: [UInt64] {
        var running: UInt64 = 0
        return counts.map { running += $0; return running }
    }
}
