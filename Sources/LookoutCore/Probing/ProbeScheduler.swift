import Foundation
import Logging
import Synchronization

/// Probes every source on its interval, starting each at a stable offset in [0, interval) so a
/// large config does not fire at once. A source's runs never overlap; a tick missed because the
/// previous run was slow is skipped, not queued; at most `maxConcurrent` probes run at once.
/// Sources can be replaced while it runs: untouched ones keep their schedule.
package final class ProbeScheduler: Sendable {
    /// Counters of the scheduler's own health.
    package struct Stats: Sendable, Equatable {
        package var started: UInt64 = 0
        /// Probes that started more than a second after their tick.
        package var lateStarts: UInt64 = 0
        package var skippedTicks: UInt64 = 0
    }

    /// A configured source: where its config is in `State.configs` (the array `apply` was
    /// given, shared, not copied per source), which version of it (a changed source starts a new
    /// schedule), and its probe while one runs.
    private struct Scheduled {
        var index: Int
        var generation: UInt64
        var busy = false
        var task: Task<Void, Never>?
    }

    /// A source's next tick, in the heap.
    private struct Due {
        var tick: ContinuousClock.Instant
        var name: String
        var generation: UInt64
    }

    private struct State {
        var configs: [SourceConfig] = []
        var sources: [String: Scheduled] = [:]
        /// Min-heap by tick; entries of replaced or removed sources are dropped when they come up.
        var heap: [Due] = []
        var nextGeneration: UInt64 = 0
    }

    let prober: SourceProber
    let sinks: [any ProbeResultSink]
    let connectivity: ConnectivityMonitor
    let fallback: @Sendable (SourceConfig) -> String?
    /// Whether a source is in a maintenance window now.
    let inMaintenance: @Sendable (String) -> Bool
    let logger: Logger
    let limit: AsyncSemaphore
    private let state = Mutex(State())
    private let stats = Mutex(Stats())
    private let clock = ContinuousClock()
    /// How late a tick may be served, at most (plus the system's timer slack): one wake-up
    /// serves every tick due within it.
    static let slot: Duration = .milliseconds(5)

    package init(
        prober: SourceProber, sinks: [any ProbeResultSink], connectivity: ConnectivityMonitor = ConnectivityMonitor(),
        fallback: @escaping @Sendable (SourceConfig) -> String? = { _ in nil },
        inMaintenance: @escaping @Sendable (String) -> Bool = { _ in false }, maxConcurrent: Int = 512, logger: Logger
    ) {
        self.inMaintenance = inMaintenance
        self.prober = prober
        self.sinks = sinks
        self.connectivity = connectivity
        self.fallback = fallback
        self.logger = logger
        self.limit = AsyncSemaphore(maxConcurrent)
    }

    package var statistics: Stats { stats.withLock { $0 } }

    /// Schedules, reschedules or drops sources so exactly `sources` are probed: an unchanged
    /// source keeps its schedule, a changed one starts again at its offset (its running probe
    /// cancelled), a removed one stops.
    package func apply(_ sources: [SourceConfig]) {
        for source in sources { prober.configure(source) }
        connectivity.setSources(sources)
        let now = clock.now
        let wanted = Dictionary(uniqueKeysWithValues: sources.map { ($0.name, $0) })
        let stopped = state.withLock { state -> [Task<Void, Never>] in
            var stopped: [Task<Void, Never>] = []
            for (name, entry) in state.sources where wanted[name] != state.configs[entry.index] {
                if let task = entry.task { stopped.append(task) }
                state.sources.removeValue(forKey: name)
            }
            state.configs = sources
            for (index, source) in sources.enumerated() {
                if state.sources[source.name] != nil {
                    state.sources[source.name]?.index = index
                    continue
                }
                let generation = state.nextGeneration
                state.nextGeneration += 1
                state.sources[source.name] = Scheduled(index: index, generation: generation)
                let first = now + ProbeScheduler.offset(for: source.name, interval: source.interval)
                ProbeScheduler.push(Due(tick: first, name: source.name, generation: generation), into: &state.heap)
            }
            return stopped
        }
        for task in stopped { task.cancel() }
    }

    /// Starts each source's probes at their ticks until cancelled, then stops every probe.
    ///
    /// One loop and one heap of ticks for every source: a waiting source costs a heap entry,
    /// not a task (a task kept about 5.6 KB for each of 10,000 sources), and one wake-up serves
    /// every tick of its 5-ms slot. Each probe runs in a task of its own that ends with it.
    package func run() async {
        await withTaskCancellationHandler {
            while !Task.isCancelled {
                let now = clock.now
                let due = state.withLock { state -> [Due] in
                    var due: [Due] = []
                    while let first = state.heap.first, first.tick <= now + ProbeScheduler.slot {
                        due.append(ProbeScheduler.popFirst(from: &state.heap))
                    }
                    return due
                }
                for entry in due { await start(entry) }
                // Wake at the next tick, a slot from now at the earliest, and at least every
                // 100 ms so a source added meanwhile starts on time.
                let next = state.withLock { $0.heap.first?.tick }
                let wake = min(max(next ?? now + .milliseconds(100), now + ProbeScheduler.slot), now + .milliseconds(100))
                try? await clock.sleep(until: wake, tolerance: ProbeScheduler.slot)
            }
        } onCancel: {
            self.stopAll()
        }
        stopAll()
    }

    /// Starts the probe of one tick (unless the source's last one still runs: the tick is
    /// skipped, not queued), and schedules the source's next tick.
    private func start(_ entry: Due) async {
        enum Decision {
            case gone  // the source was replaced or removed
            case skip
            case run(SourceConfig)
        }
        let decision = state.withLock { state -> Decision in
            guard var scheduled = state.sources[entry.name], scheduled.generation == entry.generation else { return .gone }
            let source = state.configs[scheduled.index]
            let next = ProbeScheduler.nextTick(after: entry.tick, interval: source.interval, now: clock.now)
            ProbeScheduler.push(Due(tick: next, name: entry.name, generation: entry.generation), into: &state.heap)
            if scheduled.busy { return .skip }
            scheduled.busy = true
            state.sources[entry.name] = scheduled
            return .run(source)
        }
        guard case .run(let source) = decision else {
            if case .skip = decision { stats.withLock { $0.skippedTicks += 1 } }
            return
        }
        await limit.wait()
        let late = clock.now - entry.tick > .seconds(1)
        stats.withLock {
            $0.started += 1
            if late { $0.lateStarts += 1 }
        }
        let task = Task {
            _ = await self.runProbe(source, host: source.host, holdingPermit: true)
            self.finished(entry.name, generation: entry.generation)
        }
        state.withLock { state in
            // Kept to cancel it when the source changes, unless it has already finished.
            if state.sources[entry.name]?.generation == entry.generation, state.sources[entry.name]?.busy == true {
                state.sources[entry.name]?.task = task
            }
        }
    }

    private func finished(_ name: String, generation: UInt64) {
        state.withLock { state in
            guard state.sources[name]?.generation == generation else { return }
            state.sources[name]?.busy = false
            state.sources[name]?.task = nil
        }
    }

    private func stopAll() {
        let tasks = state.withLock { state -> [Task<Void, Never>] in
            defer {
                state.sources.removeAll()
                state.heap.removeAll()
                state.configs.removeAll()
            }
            return state.sources.values.compactMap(\.task)
        }
        for task in tasks { task.cancel() }
    }

    /// Probes one source now, outside its schedule (admin "probe now").
    package func probeNow(_ name: String) async -> ProbeResult? {
        guard let source = state.withLock({ state in state.sources[name].map { state.configs[$0.index] } }) else { return nil }
        return await runProbe(source, host: source.host)
    }

    private func runProbe(_ source: SourceConfig, host: String, holdingPermit: Bool = false) async -> ProbeResult? {
        if !holdingPermit { await limit.wait() }
        let offline = connectivity.isOffline
        var result = await prober.probe(source, breakerCountsFailures: !offline)
        limit.signal()
        if Task.isCancelled { return nil }
        result.duringOffline = offline
        result.duringMaintenance = inMaintenance(source.name)
        if !result.ok { result.fallbackInUse = fallback(source) }
        connectivity.record(result, host: host)
        for sink in sinks { sink.record(result) }
        if let failure = result.failure, !offline {
            logger.info("probe failed", metadata: [
                "source": "\(source.name)", "category": "\(failure.category.rawValue)", "reason": "\(failure.reason)",
                "attempts": "\(result.attempts)",
            ])
        }
        return result
    }

    /// The first tick after `now` on the grid `previous + k × interval`: late ticks are skipped.
    static func nextTick(after previous: ContinuousClock.Instant, interval: Duration, now: ContinuousClock.Instant) -> ContinuousClock.Instant {
        var next = previous + interval
        if next <= now {
            let behind = (now - next) / interval
            next = next + interval * (Int(behind) + 1)
        }
        return next
    }

    /// A stable offset in [0, interval) from the source's name (FNV-1a), the same on every start.
    package static func offset(for name: String, interval: Duration) -> Duration {
        let milliseconds = max(1, interval.totalMilliseconds)
        return .milliseconds(Int64(stableHash(name) % UInt64(milliseconds)))
    }

    /// FNV-1a 64 of the UTF-8 bytes.
    package static func stableHash(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x100_0000_01b3
        }
        return hash
    }

    private static func push(_ due: Due, into heap: inout [Due]) {
        heap.append(due)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].tick < heap[parent].tick else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private static func popFirst(from heap: inout [Due]) -> Due {
        heap.swapAt(0, heap.count - 1)
        let first = heap.removeLast()
        var node = 0
        while true {
            let left = 2 * node + 1
            let right = left + 1
            var smallest = node
            if left < heap.count, heap[left].tick < heap[smallest].tick { smallest = left }
            if right < heap.count, heap[right].tick < heap[smallest].tick { smallest = right }
            guard smallest != node else { break }
            heap.swapAt(node, smallest)
            node = smallest
        }
        return first
    }
}
