/// A cumulative histogram with fixed buckets, as Prometheus exposes it. The counts are a plain
/// array: an `InlineArray` here, inside a source's record, was miscompiled by Swift 6.3 in debug
/// builds (copies of the record read freed memory once the record gained one more field).
package struct Histogram: Sendable, Equatable {
    /// Upper bounds fitting probe latencies, 1 ms to 60 s.
    package static let latencyBuckets: [Double] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]
    /// The most bounds a histogram can have (one more slot counts everything above them).
    package static let maxBounds = 15

    package let bounds: [Double]
    private var slots = [UInt64](repeating: 0, count: 16)
    package private(set) var sum: Double = 0
    package private(set) var count: UInt64 = 0

    package init(bounds: [Double] = Histogram.latencyBuckets) {
        precondition(bounds.count <= Histogram.maxBounds, "a histogram has at most \(Histogram.maxBounds) bounds")
        self.bounds = bounds
    }

    package mutating func observe(_ value: Double) {
        let index = bounds.firstIndex { value <= $0 } ?? bounds.count
        slots[index] += 1
        sum += value
        count += 1
    }

    /// Observations per bucket (not cumulative); the last entry counts those above every bound.
    package var counts: [UInt64] { (0...bounds.count).map { slots[$0] } }

    /// Observations in bucket `index` (not cumulative); `bounds.count` is the bucket above every bound.
    package subscript(bucket index: Int) -> UInt64 { slots[index] }

    /// Cumulative counts for each bound, then +Inf.
    package var cumulativeCounts: [UInt64] {
        var running: UInt64 = 0
        return (0...bounds.count).map {
            running += slots[$0]
            return running
        }
    }

    package static func == (a: Histogram, b: Histogram) -> Bool {
        a.bounds == b.bounds && a.sum == b.sum && a.count == b.count && a.counts == b.counts
    }
}
