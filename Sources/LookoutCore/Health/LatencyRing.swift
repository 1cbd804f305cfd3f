/// Response times in fixed time buckets (an hour each for the page's 24-hour chart), each a
/// histogram over `Histogram.latencyBuckets`: fixed memory, the same buckets the rollups store,
/// so a restart restores it.
package struct LatencyRing: Sendable, Equatable {
    package let widthMs: Int64
    private static let width = Histogram.latencyBuckets.count + 1
    /// A histogram of `width` counts per hour, a byte a count while a byte holds them (an hour
    /// of a probe every 30 s is 120).
    private var slots: BucketSlots

    package init(widthMs: Int64, count: Int) {
        self.widthMs = widthMs
        slots = BucketSlots(size: count, width: LatencyRing.width)
    }

    package mutating func observe(seconds: Double, atMs: Int64) {
        guard let base = slots.enter(HealthWindow.floor(atMs, to: widthMs) / widthMs) else { return }
        let index = Histogram.latencyBuckets.firstIndex { seconds <= $0 } ?? Histogram.latencyBuckets.count
        slots.add(1, at: base + index)
    }

    /// Adds bucket counts (`Histogram.latencyBuckets`, then +Inf); others are ignored.
    package mutating func add(_ bucketCounts: [Int], atMs: Int64) {
        guard bucketCounts.count == LatencyRing.width, let base = slots.enter(HealthWindow.floor(atMs, to: widthMs) / widthMs) else { return }
        for (index, count) in bucketCounts.enumerated() {
            // Clamped before adding: a count read back from the database is not trusted.
            slots.add(UInt32(clamping: max(0, count)), at: base + index)
        }
    }

    /// For each of the last `count` buckets (oldest first, the newest holding `nowMs`), the
    /// quantiles `qs` in seconds, interpolated within the histogram's buckets as Prometheus'
    /// `histogram_quantile` does; nil for a bucket without observations.
    package func quantiles(_ qs: [Double], last count: Int, nowMs: Int64) -> [[Double]?] {
        let newest = HealthWindow.floor(nowMs, to: widthMs)
        return (0..<max(0, count)).map { offset -> [Double]? in
            let number = (newest - Int64(count - 1 - offset) * widthMs) / widthMs
            guard let base = slots.base(number) else { return nil }
            let histogram = (base..<(base + LatencyRing.width)).lazy.map { slots[$0] }
            let total = histogram.reduce(UInt64(0)) { $0 + UInt64($1) }
            guard total > 0 else { return nil }
            return qs.map { LatencyRing.quantile($0, histogram, total: total) }
        }
    }

    static func quantile(_ q: Double, _ histogram: some Collection<UInt32>, total: UInt64) -> Double {
        let bounds = Histogram.latencyBuckets
        let rank = max(0, min(1, q)) * Double(total)
        var below: UInt64 = 0
        for (offset, count) in histogram.enumerated() {
            let through = below + UInt64(count)
            if Double(through) >= rank && count > 0 {
                guard offset < bounds.count else { return bounds[bounds.count - 1] }  // above every bound
                let lower = offset == 0 ? 0 : bounds[offset - 1]
                return lower + (bounds[offset] - lower) * (rank - Double(below)) / Double(count)
            }
            below = through
        }
        return bounds[bounds.count - 1]
    }
}
