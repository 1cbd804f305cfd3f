/// What a bucket counted.
package struct BucketCounts: Sendable, Equatable {
    package var probes: UInt32 = 0
    package var failures: UInt32 = 0
    package var retried: UInt32 = 0
    package var retrySucceeded: UInt32 = 0

    package init(probes: UInt32 = 0, failures: UInt32 = 0, retried: UInt32 = 0, retrySucceeded: UInt32 = 0) {
        self.probes = probes
        self.failures = failures
        self.retried = retried
        self.retrySucceeded = retrySucceeded
    }

    package static func + (a: BucketCounts, b: BucketCounts) -> BucketCounts {
        BucketCounts(
            probes: a.probes &+ b.probes, failures: a.failures &+ b.failures, retried: a.retried &+ b.retried,
            retrySucceeded: a.retrySucceeded &+ b.retrySucceeded)
    }
}

/// A ring's slots: `size` buckets of `width` counts each, in `PackedCounts` (a byte a count
/// while a byte holds it). No slot says which bucket it holds: the ring keeps the newest
/// bucket's number, the slots hold the `size` buckets up to it, and moving the newest forward
/// clears the slots it passes.
struct BucketSlots: Sendable, Equatable {
    let size: Int
    let width: Int
    /// The newest bucket's start ÷ the bucket's duration; nil before the first count.
    private var newest: Int64?
    private var counts: PackedCounts

    init(size: Int, width: Int) {
        self.size = max(1, size)
        self.width = width
        counts = PackedCounts(count: self.size * width)
    }

    /// Where bucket `number`'s counts begin, whether or not the ring holds it.
    private func start(_ number: Int64) -> Int {
        let size = Int64(size)
        return Int((number % size + size) % size) * width
    }

    /// Where the counts of bucket `number` begin; nil unless it is one of the `size` up to the
    /// newest.
    func base(_ number: Int64) -> Int? {
        guard let newest, number <= newest, number > newest - Int64(size) else { return nil }
        return start(number)
    }

    /// Where the counts of bucket `number` begin, made one the ring holds: a newer bucket clears
    /// the slots it passes (at most all of them); nil when it is older than the ring holds.
    mutating func enter(_ number: Int64) -> Int? {
        if let newest, number <= newest { return base(number) }
        let passed = newest.map { min(number - $0, Int64(size)) } ?? Int64(size)
        for step in 0..<passed {
            let first = start(number - step)
            counts.clear(first..<(first + width))
        }
        newest = number
        return start(number)
    }

    subscript(index: Int) -> UInt32 { counts[index] }

    mutating func add(_ delta: UInt32, at index: Int) {
        counts.add(delta, at: index)
    }
}

/// Counts in fixed time buckets, oldest overwritten: fixed memory however long Lookout runs.
/// Each bucket keeps probes and failures, and retries unless the ring is told not to (no window
/// as long as a day asks about them).
package struct CountRing: Sendable, Equatable {
    package typealias Counts = BucketCounts

    package let widthMs: Int64
    /// Per bucket: probes, failures, then retried and retries that succeeded.
    private var slots: BucketSlots

    package init(widthMs: Int64, count: Int, keepsRetries: Bool = true) {
        self.widthMs = widthMs
        slots = BucketSlots(size: count, width: keepsRetries ? 4 : 2)
    }

    private func counts(at base: Int) -> Counts {
        guard slots.width == 4 else { return Counts(probes: slots[base], failures: slots[base + 1]) }
        return Counts(probes: slots[base], failures: slots[base + 1], retried: slots[base + 2], retrySucceeded: slots[base + 3])
    }

    package mutating func add(_ delta: Counts, atMs: Int64) {
        guard let base = slots.enter(HealthWindow.floor(atMs, to: widthMs) / widthMs) else { return }
        slots.add(delta.probes, at: base)
        slots.add(delta.failures, at: base + 1)
        guard slots.width == 4 else { return }
        slots.add(delta.retried, at: base + 2)
        slots.add(delta.retrySucceeded, at: base + 3)
    }

    /// Sums over several windows (ascending) in one walk from the newest bucket back, handing
    /// each window's sum to `store` (no allocation: this runs for every source on every scrape).
    package func sums(windowsMs: [Int64], nowMs: Int64, _ store: (Int, Counts) -> Void) {
        guard let longest = windowsMs.last else { return }
        walk(windows: windowsMs.count, longestMs: longest, nowMs: nowMs, window: { windowsMs[$0] }, store)
    }

    /// Sums over several windows (ascending).
    package func sums(windowsMs: [Int64], nowMs: Int64) -> [Counts] {
        var results = [Counts](repeating: Counts(), count: windowsMs.count)
        sums(windowsMs: windowsMs, nowMs: nowMs) { results[$0] = $1 }
        return results
    }

    /// The last `count` buckets, oldest first, the newest holding `nowMs`: nil for a bucket
    /// nothing was counted in (or older than the ring holds).
    package func buckets(_ count: Int, nowMs: Int64) -> [Counts?] {
        let newest = HealthWindow.floor(nowMs, to: widthMs)
        return (0..<max(0, count)).map { offset in
            let start = newest - Int64(count - 1 - offset) * widthMs
            let number = start / widthMs
            // A held bucket nothing was counted in is a gap, as one the ring does not hold.
            guard let base = slots.base(number) else { return nil }
            let counts = counts(at: base)
            return counts == Counts() ? nil : counts
        }
    }

    /// The sum over the buckets that overlap the last `windowMs` before `nowMs`.
    package func sum(windowMs: Int64, nowMs: Int64) -> Counts {
        var result = Counts()
        walk(windows: 1, longestMs: windowMs, nowMs: nowMs, window: { _ in windowMs }) { result = $1 }
        return result
    }

    private func walk(windows: Int, longestMs: Int64, nowMs: Int64, window: (Int) -> Int64, _ store: (Int, Counts) -> Void) {
        guard windows > 0 else { return }
        let newest = HealthWindow.floor(nowMs, to: widthMs)
        let count = slots.size
        var start = newest
        var running = Counts()
        var next = 0
        // A bucket that ends at or before `boundary` lies outside window `next`.
        var boundary = nowMs - window(0)
        let oldest = nowMs - longestMs
        var visited = 0
        while visited < count && start + widthMs > oldest {
            if let base = slots.base(start / widthMs) { running = running + counts(at: base) }
            start -= widthMs
            visited += 1
            // Windows that the next (older) bucket no longer overlaps are complete.
            while next < windows && start + widthMs <= boundary {
                store(next, running)
                next += 1
                if next < windows { boundary = nowMs - window(next) }
            }
        }
        while next < windows {
            store(next, running)
            next += 1
        }
    }
}
