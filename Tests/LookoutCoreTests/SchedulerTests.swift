@testable import LookoutCore
import Testing

@Suite("ProbeScheduler")
struct SchedulerTests {
    @Test func offsetsAreStableAndWithinTheInterval() {
        let interval = Duration.seconds(30)
        let first = ProbeScheduler.offset(for: "greenhouse-acme", interval: interval)
        #expect(first == ProbeScheduler.offset(for: "greenhouse-acme", interval: interval))
        for index in 0..<500 {
            let offset = ProbeScheduler.offset(for: "source-\(index)", interval: interval)
            #expect(offset >= .zero && offset < interval)
        }
    }

    @Test func offsetsSpreadSourcesOverTheInterval() {
        let interval = Duration.seconds(10)
        var perSecond = [Int](repeating: 0, count: 10)
        for index in 0..<1000 {
            let offset = ProbeScheduler.offset(for: "source-\(index)", interval: interval)
            perSecond[Int(offset.totalMilliseconds / 1000)] += 1
        }
        #expect(perSecond.allSatisfy { $0 > 50 && $0 < 150 })
    }

    @Test func aLateTickIsSkippedNotQueued() {
        let start = ContinuousClock.now
        let interval = Duration.seconds(10)
        #expect(ProbeScheduler.nextTick(after: start, interval: interval, now: start + .seconds(3)) == start + .seconds(10))
        // The run took 25 s: the ticks at 10 s and 20 s are skipped, the next is at 30 s.
        #expect(ProbeScheduler.nextTick(after: start, interval: interval, now: start + .seconds(25)) == start + .seconds(30))
        #expect(ProbeScheduler.nextTick(after: start, interval: interval, now: start + .seconds(10)) == start + .seconds(20))
    }

    /// `--shard auto`: ordinal k of a StatefulSet with R pods per shard is replica k mod R of
    /// shard k div R.
    @Test func aPodsOrdinalPicksItsShardAndReplica() throws {
        let placed = try Shard.fromPod(hostName: "lookout-5", replicas: 2, count: 3).get()
        #expect(placed.shard == Shard(index: 2, count: 3) && placed.replica == 1)
        #expect(try Shard.fromPod(hostName: "my-lookout-0", replicas: 1, count: 1).get().shard == Shard(index: 0, count: 1))
        #expect(throws: Shard.Problem.self) { try Shard.fromPod(hostName: "lookout-6", replicas: 2, count: 3).get() }
        #expect(throws: Shard.Problem.self) { try Shard.fromPod(hostName: "lookout", replicas: 2, count: 3).get() }
        #expect(throws: Shard.Problem.self) { try Shard.fromPod(hostName: "lookout-x", replicas: 2, count: 3).get() }
    }
}

@Suite("Histogram")
struct HistogramTests {
    @Test func countsObservationsCumulatively() {
        var histogram = Histogram(bounds: [0.1, 1, 10])
        for value in [0.05, 0.1, 0.5, 5, 50] { histogram.observe(value) }
        #expect(histogram.cumulativeCounts == [2, 3, 4, 5])
        #expect(histogram.count == 5)
        #expect(abs(histogram.sum - 55.65) < 1e-9)
    }
}
