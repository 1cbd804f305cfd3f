import Foundation
import Logging
import ResilientHTTP
import TestSupport
import Testing

@testable import LookoutCore

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
        let second: Int64 = 1_000_000_000
        let start = 7 * second
        let interval = 10 * second
        #expect(ProbeScheduler.nextTick(after: start, interval: interval, now: start + 3 * second) == start + 10 * second)
        // The run took 25 s: the ticks at 10 s and 20 s are skipped, the next is at 30 s.
        #expect(ProbeScheduler.nextTick(after: start, interval: interval, now: start + 25 * second) == start + 30 * second)
        #expect(ProbeScheduler.nextTick(after: start, interval: interval, now: start + 10 * second) == start + 20 * second)
        // Hostile numbers saturate instead of trapping: a 100-year interval, and a tick near the end of time.
        #expect(ProbeScheduler.nextTick(after: .max - second, interval: Duration.longest.totalNanoseconds, now: 0) == .max)
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

/// The scheduler's run loop against a real upstream (lookout-sim).
@Suite("scheduler running")
struct SchedulerRunTests {
    final class Collected: ProbeResultSink, @unchecked Sendable {
        private let lock = NSLock()
        private var results: [ProbeResult] = []
        /// The thread each result was recorded on.
        private var threads: [String] = []
        func record(_ result: ProbeResult) {
            let thread = currentThreadName()
            lock.withLock {
                results.append(result)
                threads.append(thread)
            }
        }
        var count: Int { lock.withLock { results.count } }
        var recordedOn: [String] { lock.withLock { threads } }
    }

    /// A source probed hourly whose name puts its first tick within half a second of the start.
    func startingSoon(url: String) -> SourceConfig {
        let name = (0...).lazy.map { "soon-\($0)" }.first { ProbeScheduler.offset(for: $0, interval: .seconds(3600)) < .milliseconds(500) }!
        var source = SourceConfig(name: name, url: url)
        source.interval = .seconds(3600)
        return source
    }

    /// A scheduled probe runs on the transfer thread from start to record: at 1,000 probes a
    /// second, handing each one between threads cost 3–11 % of its CPU.
    @Test func aScheduledProbeRunsOnTheTransferThread() async throws {
        let (sim, base) = try await startSimulator()
        let collected = Collected()
        let scheduler = ProbeScheduler(prober: SourceProber(client: ResilientClient()), sinks: [collected], logger: Logger(label: "test"))
        scheduler.apply([startingSoon(url: "\(base)/status/200")])
        let run = Task { await scheduler.run() }
        let recorded = try await eventually("the probe was recorded") { collected.recordedOn.first }
        run.cancel()
        await run.value
        #expect(recorded == CurlTransport.threadName)
        #expect(try await sim.terminate() == 0)
    }

    /// Stopping empties the scheduler's slots while a probe is still in flight; that probe ends
    /// (cancelled) afterwards and must find its slot gone, not crash on it, and record nothing.
    @Test func aProbeInFlightWhenTheSchedulerStopsEndsQuietly() async throws {
        let (sim, base) = try await startSimulator()
        let collected = Collected()
        let scheduler = ProbeScheduler(prober: SourceProber(client: ResilientClient()), sinks: [collected], logger: Logger(label: "test"))
        // An hour's timeout too, so the call is not cut short.
        var slow = startingSoon(url: "\(base)/slow?ms=600000")
        slow.timeout = .seconds(3600)
        scheduler.apply([slow])
        let run = Task { await scheduler.run() }
        _ = try await eventually("the probe started") { scheduler.statistics.started == 1 ? true : nil }
        run.cancel()
        await run.value
        _ = try await eventually("the cancelled probe ended") { scheduler.statistics.finished == 1 ? true : nil }
        scheduler.apply([])  // and the slot can be used again
        scheduler.apply([SourceConfig(name: "other", url: "\(base)/status/200")])
        #expect(collected.count == 0)
        #expect(try await sim.terminate() == 0)
    }
}
