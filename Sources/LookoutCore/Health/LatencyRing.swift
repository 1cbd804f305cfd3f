/// Response times in fixed time buckets (an hour each for the page's 24-hour chart), each a
/// histogram over `Histogram.latencyBuckets`: fixed memory, the same buckets the rollups store,
/// so a restart restores it.
package struct LatencyRing: Sendable, Equatable {
    package let widthMs: Int64
    private static let width = Histogram.latencyBuckets.count + 1
    private var starts: [Int64]
    /// `starts.count` histograms of `width` counts each, flat; 16 bits saturate at 65,535 an hour
    /// in one bucket (a probe every 55 ms), far past any interval, at half the memory.
    private var counts: [UInt16]

    package init(widthMs: Int64, count: Int) {
        self.widthMs = widthMs
        starts = Array(repeating: Int64.min, count: count)
        counts = Array(repeating: 0, count: count * LatencyRing.width)
    }

    package mutating func observe(seconds: Double, atMs: Int64) {
        guard let base = slot(atMs) else { return }
        let index = Histogram.latencyBuckets.firstIndex { seconds <= $0 } ?? Histogram.latencyBuckets.count
        if counts[base + index] < UInt16.max { counts[base + index] += 1 }
    }

    /// Adds bucket counts (`Histogram.latencyBuckets`, then +Inf); others are ignored.
    package mutating func add(_ bucketCounts: [Int], atMs: Int64) {
        guard bucketCounts.count == LatencyRing.width, let base = slot(atMs) else { return }
        for (index, count) in bucketCounts.enumerated() {
            // Clamped before adding: a count read back from the database is not trusted.
            counts[base + index] = UInt16(clamping: Int(counts[base + index]) + min(Int(UInt16.max), max(0, count)))
        }
    }

    /// The bucket holding `atMs`, cleared when it held an older one; nil when older than the ring.
    private mutating func slot(_ atMs: Int64) -> Int? {
        let start = HealthWindow.floor(atMs, to: widthMs)
        let size = Int64(starts.count)
        let index = Int(((start / widthMs) % size + size) % size)
        let base = index * LatencyRing.width
        if starts[index] != start {
            guard start > starts[index] else { return nil }
            starts[index] = start
            for offset in 0..<LatencyRing.width { counts[base + offset] = 0 }
        }
        return base
    }

    /// For each of the last `count` buckets (oldest first, the newest holding `nowMs`), the
    /// quantiles `qs` in seconds, interpolated within the histogram's buckets as Prometheus'
    /// `histogram_quantile` does; nil for a bucket without observations.
    package func quantiles(_ qs: [Double], last count: Int, nowMs: Int64) -> [[Double]?] {
        let newest = HealthWindow.floor(nowMs, to: widthMs)
        let size = Int64(starts.count)
        return (0..<max(0, count)).map { offset -> [Double]? in
            let start = newest - Int64(count - 1 - offset) * widthMs
            let index = Int(((start / widthMs) % size + size) % size)
            guard starts[index] == start else { return nil }
            let base = index * LatencyRing.width
            let histogram = counts[base..<(base + LatencyRing.width)]
            let total = histogram.reduce(UInt64(0)) { $0 + UInt64($1) }
            guard total > 0 else { return nil }
            return qs.map { LatencyRing.quantile($0, histogram, total: total) }
        }
    }

    static func quantile(_ q: Double, _ histogram: ArraySlice<UInt16>, total: UInt64) -> Double {
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
