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

/// How a ring keeps one bucket's counts, as narrow as the bucket's width allows; which bucket a
/// slot holds follows from its place and the ring's newest bucket.
package protocol BucketSlot: Sendable, Equatable {
    init()
    var counts: BucketCounts { get }
    mutating func add(_ delta: BucketCounts)
}

/// 16-bit counts (8 bytes), saturating: an hour of a probe every 100 ms is 36,000.
package struct NarrowSlot: BucketSlot {
    private var probes: UInt16 = 0
    private var failures: UInt16 = 0
    private var retried: UInt16 = 0
    private var retrySucceeded: UInt16 = 0

    package init() {}

    package var counts: BucketCounts {
        BucketCounts(probes: UInt32(probes), failures: UInt32(failures), retried: UInt32(retried), retrySucceeded: UInt32(retrySucceeded))
    }

    package mutating func add(_ delta: BucketCounts) {
        probes = UInt16(clamping: UInt32(probes) &+ min(delta.probes, UInt32(UInt16.max)))
        failures = UInt16(clamping: UInt32(failures) &+ min(delta.failures, UInt32(UInt16.max)))
        retried = UInt16(clamping: UInt32(retried) &+ min(delta.retried, UInt32(UInt16.max)))
        retrySucceeded = UInt16(clamping: UInt32(retrySucceeded) &+ min(delta.retrySucceeded, UInt32(UInt16.max)))
    }
}

/// Probes and failures only, 32-bit (8 bytes): what the 90-day bars and the 30-day availability
/// read; no window as long as a day asks about retries.
package struct DaySlot: BucketSlot {
    private var probes: UInt32 = 0
    private var failures: UInt32 = 0

    package init() {}

    package var counts: BucketCounts { BucketCounts(probes: probes, failures: failures) }

    package mutating func add(_ delta: BucketCounts) {
        probes = probes &+ delta.probes
        failures = failures &+ delta.failures
    }
}

/// Minutes, five minutes and hours fit 16-bit counts; days need 32 bits.
package typealias NarrowBucketRing = CountRing<NarrowSlot>
package typealias DayBucketRing = CountRing<DaySlot>

/// Counts in fixed time buckets, oldest overwritten: fixed memory however long Lookout runs.
///
/// A slot does not say which bucket it holds: the ring keeps the newest bucket's number, the
/// slots hold the `count` buckets up to it, and moving the newest forward clears the slots it
/// passes (4 bytes a slot less than a number in each: 1.2 KiB a source).
package struct CountRing<Slot: BucketSlot>: Sendable, Equatable {
    package typealias Counts = BucketCounts

    package let widthMs: Int64
    /// The newest bucket's start ÷ the width; nil before the first count.
    private var newest: Int64?
    private var slots: [Slot]

    package init(widthMs: Int64, count: Int) {
        self.widthMs = widthMs
        slots = Array(repeating: Slot(), count: count)
    }

    private func index(_ number: Int64) -> Int {
        let count = Int64(slots.count)
        return Int((number % count + count) % count)
    }

    /// Whether the ring holds bucket `number`: one of the `count` up to the newest.
    private func holds(_ number: Int64) -> Bool {
        guard let newest else { return false }
        return number <= newest && number > newest - Int64(slots.count)
    }

    package mutating func add(_ delta: Counts, atMs: Int64) {
        let number = HealthWindow.floor(atMs, to: widthMs) / widthMs
        if let newest, number <= newest {
            guard holds(number) else { return }  // older than what the ring holds
        } else {
            // A newer bucket: clear the slots of the buckets it passes (at most all of them).
            let passed = newest.map { min(number - $0, Int64(slots.count)) } ?? Int64(slots.count)
            for step in 0..<passed { slots[index(number - step)] = Slot() }
            newest = number
        }
        slots[index(number)].add(delta)
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
        let size = Int64(slots.count)
        return (0..<max(0, count)).map { offset in
            let start = newest - Int64(count - 1 - offset) * widthMs
            let number = start / widthMs
            // A held bucket nothing was counted in is a gap, as one the ring does not hold.
            guard holds(number) else { return nil }
            let counts = slots[Int((number % size + size) % size)].counts
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
                if holds(start / widthMs) { running = running + slots[index].counts }
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
