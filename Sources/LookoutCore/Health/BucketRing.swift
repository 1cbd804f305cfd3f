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

/// Which bucket each slot of a ring holds, without a number in each: the ring keeps the newest
/// bucket's number, its slots hold the `size` buckets up to it, and moving the newest forward
/// clears the slots it passes.
struct RingPosition: Sendable, Equatable {
    let size: Int
    /// The newest bucket's start ÷ the width; nil before the first count.
    private(set) var newest: Int64?

    init(size: Int) {
        self.size = max(1, size)
    }

    /// The slot bucket `number` takes.
    func index(_ number: Int64) -> Int {
        let size = Int64(size)
        return Int((number % size + size) % size)
    }

    /// Whether the ring holds bucket `number`: one of the `size` up to the newest.
    func holds(_ number: Int64) -> Bool {
        guard let newest else { return false }
        return number <= newest && number > newest - Int64(size)
    }

    /// Makes bucket `number` one the ring holds, handing `clear` each slot a newer bucket
    /// passes (at most all of them); false when it is older than the ring holds.
    mutating func enter(_ number: Int64, clearing clear: (Int) -> Void) -> Bool {
        if let newest, number <= newest { return holds(number) }
        let passed = newest.map { min(number - $0, Int64(size)) } ?? Int64(size)
        for step in 0..<passed { clear(index(number - step)) }
        newest = number
        return true
    }
}

/// Counts in fixed time buckets, oldest overwritten: fixed memory however long Lookout runs.
/// Each bucket keeps probes and failures, and retries unless the ring is told not to (no window
/// as long as a day asks about them), in `PackedCounts`: a byte a count while a byte holds it.
package struct CountRing: Sendable, Equatable {
    package typealias Counts = BucketCounts

    package let widthMs: Int64
    private var position: RingPosition
    /// Per slot, `fields` counts: probes, failures, then retried and retries that succeeded.
    private var counts: PackedCounts
    private let fields: Int

    package init(widthMs: Int64, count: Int, keepsRetries: Bool = true) {
        self.widthMs = widthMs
        position = RingPosition(size: count)
        fields = keepsRetries ? 4 : 2
        counts = PackedCounts(count: position.size * fields)
    }

    private func slot(_ index: Int) -> Counts {
        let base = index * fields
        guard fields == 4 else { return Counts(probes: counts[base], failures: counts[base + 1]) }
        return Counts(probes: counts[base], failures: counts[base + 1], retried: counts[base + 2], retrySucceeded: counts[base + 3])
    }

    package mutating func add(_ delta: Counts, atMs: Int64) {
        let number = HealthWindow.floor(atMs, to: widthMs) / widthMs
        let fields = fields
        guard position.enter(number, clearing: { counts.clear(($0 * fields)..<(($0 + 1) * fields)) }) else { return }
        let base = position.index(number) * fields
        counts.add(delta.probes, at: base)
        counts.add(delta.failures, at: base + 1)
        guard fields == 4 else { return }
        counts.add(delta.retried, at: base + 2)
        counts.add(delta.retrySucceeded, at: base + 3)
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
            guard position.holds(number) else { return nil }
            let counts = slot(position.index(number))
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
        let count = position.size
        var index = position.index(newest / widthMs)
        var start = newest
        var running = Counts()
        var next = 0
        // A bucket that ends at or before `boundary` lies outside window `next`.
        var boundary = nowMs - window(0)
        let oldest = nowMs - longestMs
        var visited = 0
        while visited < count && start + widthMs > oldest {
            if position.holds(start / widthMs) { running = running + slot(index) }
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
        while next < windows {
            store(next, running)
            next += 1
        }
    }
}
