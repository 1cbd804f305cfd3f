import LookoutCore
import Testing

/// The rings behind the page's 90-day bars and response-time chart, and upcoming maintenance.
@Suite("history rings")
struct HistoryRingTests {
    let day = HealthWindow.day

    @Test func bucketsComeOldestFirstWithGapsAsNil() {
        var ring = CountRing(widthMs: day, count: 91, keepsRetries: false)
        let now = 100 * day + 5_000
        ring.add(BucketCounts(probes: 10, failures: 1), atMs: now - 2 * day)
        ring.add(BucketCounts(probes: 4), atMs: now)
        let buckets = ring.buckets(3, nowMs: now)
        #expect(buckets == [BucketCounts(probes: 10, failures: 1), nil, BucketCounts(probes: 4)])
        // A day older than the ring holds is a gap, not another day's counts.
        #expect(ring.buckets(92, nowMs: now).first! == nil)
    }

    /// The page's bars, badges, the availability API and the history tiers all read one ratio.
    @Test func availabilityIsOneRatioWhateverTheCountsAreKeptIn() {
        #expect(HealthWindow.availability(BucketCounts(probes: 8, failures: 2)) == 0.75)
        #expect(HealthWindow.availability(probes: 8 as Int, failures: 2) == 0.75)
        #expect(HealthWindow.availability(probes: 8 as UInt64, failures: 8) == 0)
        #expect(HealthWindow.availability(BucketCounts()) == nil)
        #expect(HealthWindow.availability(probes: -3 as Int, failures: 0) == nil)  // a hostile stored row
    }

    /// Counts grow past what a byte holds without losing the others and saturate at 32 bits,
    /// never wrap. Day buckets keep probes and failures, and no retries (no day-long window asks).
    @Test func bucketCountsWidenThenSaturateAndDayBucketsKeepProbesAndFailures() {
        var hours = CountRing(widthMs: HealthWindow.hour, count: 25)
        hours.add(BucketCounts(probes: 200, failures: 3, retried: 2, retrySucceeded: 1), atMs: 0)
        hours.add(BucketCounts(probes: 60_000, failures: UInt32.max), atMs: 1)
        hours.add(BucketCounts(probes: 60_000), atMs: 2)
        #expect(hours.buckets(1, nowMs: 2) == [BucketCounts(probes: 120_200, failures: UInt32.max, retried: 2, retrySucceeded: 1)])
        var days = CountRing(widthMs: day, count: 91, keepsRetries: false)
        days.add(BucketCounts(probes: 86_400, failures: 70_000, retried: 5, retrySucceeded: 5), atMs: 0)
        #expect(days.buckets(1, nowMs: 0) == [BucketCounts(probes: 86_400, failures: 70_000)])
    }

    /// A byte a count until one needs more; every value survives each widening.
    @Test func packedCountsWidenAsTheyGrowAndSaturate() {
        var counts = PackedCounts(count: 5)
        counts[0] = 255
        counts.add(7, at: 1)
        #expect(counts.width == 1)
        counts.add(1, at: 0)
        #expect(counts.width == 2)
        #expect((0..<5).map { counts[$0] } == [256, 7, 0, 0, 0])
        counts[4] = 70_000
        #expect(counts.width == 4)
        #expect((0..<5).map { counts[$0] } == [256, 7, 0, 0, 70_000])
        counts.add(UInt32.max, at: 4)
        #expect(counts[4] == UInt32.max)
        counts.clear(0..<2)
        #expect((0..<5).map { counts[$0] } == [0, 0, 0, 0, UInt32.max])
        // Equal by value, whatever width each keeps.
        var narrow = PackedCounts(count: 2)
        var wide = PackedCounts(count: 2)
        wide[1] = 1_000_000
        wide[1] = 3
        narrow[1] = 3
        #expect(narrow == wide && narrow.width == 1 && wide.width == 4)
        #expect(PackedCounts(count: -1).count == 0)
    }

    @Test func latencyQuantilesInterpolateWithinTheBucketsAsPrometheusDoes() throws {
        var ring = LatencyRing(widthMs: HealthWindow.hour, count: 25)
        let now = 1_000 * HealthWindow.hour
        for _ in 0..<90 { ring.observe(seconds: 0.02, atMs: now) }  // the 10–25 ms bucket
        for _ in 0..<10 { ring.observe(seconds: 0.3, atMs: now) }  // the 250–500 ms bucket
        let hours = ring.quantiles([0.5, 0.95], last: 2, nowMs: now)
        #expect(hours[0] == nil)  // no probes the hour before
        let latest = try #require(hours[1])
        #expect(abs(latest[0] - (0.01 + 0.015 * 50 / 90)) < 1e-9)
        #expect(abs(latest[1] - (0.25 + 0.25 * 5 / 10)) < 1e-9)
        // Above every bound: the last bound, not infinity.
        var slow = LatencyRing(widthMs: HealthWindow.hour, count: 25)
        slow.observe(seconds: 120, atMs: now)
        #expect(slow.quantiles([0.5], last: 1, nowMs: now)[0] == [60])
    }

    @Test func aLatencyBucketIsReusedAfterTheRingWrapsAndRestoredCountsAdd() {
        var ring = LatencyRing(widthMs: HealthWindow.hour, count: 25)
        let now = 1_000 * HealthWindow.hour
        ring.observe(seconds: 5, atMs: now - 25 * HealthWindow.hour)
        ring.observe(seconds: 0.001, atMs: now)  // same slot, a day later: the old hour is gone
        #expect(ring.quantiles([0.95], last: 1, nowMs: now)[0]!.first! <= 0.001)
        var restored = LatencyRing(widthMs: HealthWindow.hour, count: 25)
        restored.add([Int](repeating: 0, count: 3) + [4] + [Int](repeating: 0, count: 12), atMs: now)
        #expect(restored.quantiles([1], last: 1, nowMs: now)[0] == [0.01])
        restored.add([1, 2], atMs: now)  // the wrong length is ignored
        #expect(restored.quantiles([1], last: 1, nowMs: now)[0] == [0.01])
    }

    /// Counts saturate at 32 bits instead of wrapping, and a huge or negative count read back
    /// from the database does not trap.
    @Test func latencyCountsSaturate() {
        var ring = LatencyRing(widthMs: HealthWindow.hour, count: 25)
        let now = 1_000 * HealthWindow.hour
        ring.add([Int](repeating: 0, count: 4) + [Int.max] + [Int](repeating: 0, count: 11), atMs: now)
        ring.add([Int](repeating: 0, count: 4) + [Int.max] + [Int](repeating: 0, count: 11), atMs: now)
        ring.observe(seconds: 0.02, atMs: now)
        ring.add([Int](repeating: 0, count: 15) + [-5], atMs: now)
        #expect(ring.quantiles([0.5, 1], last: 1, nowMs: now)[0] == [0.0175, 0.025])
    }

    @Test func upcomingMaintenanceIsFoundWithinTheHorizon() throws {
        let now = Timestamp.parseRFC3339("2026-11-24T12:00:00Z")!  // a Tuesday
        let weekly = MaintenanceWindow(
            name: "w", schedule: .recurring(weekdays: [7], minuteOfDay: 120, durationMs: 3_600_000, timeZone: "UTC"), note: "")
        let next = try #require(weekly.next(afterMs: now, withinMs: 7 * day))
        #expect(Timestamp.rfc3339(next.startMs) == "2026-11-28T02:00:00.000Z")  // Saturday 02:00
        #expect(weekly.next(afterMs: now, withinMs: 2 * day) == nil)
        let once = MaintenanceWindow(name: "o", schedule: .once(startMs: now + 3_600_000, endMs: now + 7_200_000), note: "")
        #expect(once.next(afterMs: now, withinMs: day)?.startMs == now + 3_600_000)
        #expect(once.next(afterMs: now + 3_600_000, withinMs: day) == nil)  // started: in progress, not upcoming
    }
}
