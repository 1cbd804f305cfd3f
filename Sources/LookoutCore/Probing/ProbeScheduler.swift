import Foundation
import Logging
import ResilientHTTP
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
        /// Ticks left out because the upstream asked for a wait (Retry-After).
        package var waitedTicks: UInt64 = 0
        /// Probes that ended, cancelled ones included.
        package var finished: UInt64 = 0
    }

    /// A configured source: where its config is in `State.configs` (the array `apply` was
    /// given, shared, not copied per source), which version of it (a changed source starts a new
    /// schedule), and its probe while one runs.
    private struct Scheduled {
        var name: String
        var index: Int
        var generation: UInt64
        var busy = false
        var task: Task<Void, Never>?
        /// The upstream asked not to be called before this (Retry-After, RateLimit reset), in
        /// the heap's nanoseconds: ticks before it are skipped.
        var notBefore: Int64?
    }

    /// A source's next tick, in the heap: plain numbers, so the heap moves no references.
    private struct Due {
        /// Nanoseconds after `ProbeScheduler.base`.
        var tick: Int64
        var slot: Int
        var generation: UInt64
    }

    private struct State {
        var configs: [SourceConfig] = []
        /// Scheduled sources by slot; a removed source's slot is reused.
        var slots: [Scheduled?] = []
        var freeSlots: [Int] = []
        var slotOfName: [String: Int] = [:]
        /// Min-heap by tick; entries of replaced or removed sources are dropped when they come up.
        var heap: [Due] = []
        var nextGeneration: UInt64 = 0

        /// The source in `slot` if it is still the one of `generation` (slots are emptied and
        /// reused as sources change, and all of them when the scheduler stops).
        func current(_ slot: Int, _ generation: UInt64) -> Scheduled? {
            guard slots.indices.contains(slot), let scheduled = slots[slot], scheduled.generation == generation else { return nil }
            return scheduled
        }

        mutating func remove(_ slot: Int) -> Task<Void, Never>? {
            guard let scheduled = slots[slot] else { return nil }
            slots[slot] = nil
            freeSlots.append(slot)
            slotOfName.removeValue(forKey: scheduled.name)
            return scheduled.task
        }

        mutating func add(_ scheduled: Scheduled) -> Int {
            let slot = freeSlots.popLast() ?? slots.count
            if slot == slots.count { slots.append(scheduled) } else { slots[slot] = scheduled }
            slotOfName[scheduled.name] = slot
            return slot
        }
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
    /// Ticks are kept as nanoseconds after this instant.
    private let base = ContinuousClock.now
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
        let now = nanoseconds(clock.now)
        let wanted = Dictionary(uniqueKeysWithValues: sources.map { ($0.name, $0) })
        let stopped = state.withLock { state -> [Task<Void, Never>] in
            var stopped: [Task<Void, Never>] = []
            for (name, slot) in state.slotOfName {
                guard let scheduled = state.slots[slot], wanted[name] != state.configs[scheduled.index] else { continue }
                if let task = state.remove(slot) { stopped.append(task) }
            }
            state.configs = sources
            for (index, source) in sources.enumerated() {
                if let slot = state.slotOfName[source.name] {
                    state.slots[slot]?.index = index
                    continue
                }
                let generation = state.nextGeneration
                state.nextGeneration += 1
                let slot = state.add(Scheduled(name: source.name, index: index, generation: generation))
                let first = now.addingClamped(ProbeScheduler.offset(for: source.name, interval: source.interval).totalNanoseconds)
                ProbeScheduler.push(Due(tick: first, slot: slot, generation: generation), into: &state.heap)
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
            var due: [Due] = []
            let slot = ProbeScheduler.slot.totalNanoseconds
            while !Task.isCancelled {
                let now = nanoseconds(clock.now)
                state.withLock { state in
                    while let first = state.heap.first, first.tick <= now + slot {
                        due.append(ProbeScheduler.popFirst(from: &state.heap))
                    }
                }
                for entry in due { await start(entry) }
                due.removeAll(keepingCapacity: true)
                // Wake at the next tick, a slot from now at the earliest, and at least every
                // 100 ms so a source added meanwhile starts on time.
                let next = state.withLock { $0.heap.first?.tick }
                let wake = min(max(next ?? now + 100_000_000, now + slot), now + 100_000_000)
                try? await clock.sleep(until: base + .nanoseconds(wake), tolerance: ProbeScheduler.slot)
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
            case waiting  // told to wait by the upstream
            case run(SourceConfig)
        }
        let decision = state.withLock { state -> Decision in
            guard let scheduled = state.current(entry.slot, entry.generation) else { return .gone }
            let source = state.configs[scheduled.index]
            let next = ProbeScheduler.nextTick(after: entry.tick, interval: source.interval.totalNanoseconds, now: nanoseconds(clock.now))
            ProbeScheduler.push(Due(tick: next, slot: entry.slot, generation: entry.generation), into: &state.heap)
            if scheduled.busy { return .skip }
            if let notBefore = scheduled.notBefore, entry.tick < notBefore { return .waiting }
            state.slots[entry.slot]?.busy = true
            return .run(source)
        }
        guard case .run(let source) = decision else {
            if case .skip = decision { stats.withLock { $0.skippedTicks += 1 } }
            if case .waiting = decision { stats.withLock { $0.waitedTicks += 1 } }
            return
        }
        await limit.wait()
        let late = nanoseconds(clock.now) - entry.tick > 1_000_000_000
        stats.withLock {
            $0.started += 1
            if late { $0.lateStarts += 1 }
        }
        // On the transfer thread: the probe hands its transfer over and resumes there, waking
        // no other thread (a large body's check goes elsewhere; see ResilientClient). Detached:
        // a probe reads no task-local value, and an attached task copies every one bound around
        // the loop (the service group's) into a new set per probe.
        let task = Task.detached(executorPreference: prober.client.transport.executor) {
            let result = await self.runProbe(source, holdingPermit: true)
            self.finished(entry.slot, generation: entry.generation, waitUntilMs: result?.serverWaitUntilMs)
        }
        state.withLock { state in
            // Kept to cancel it when the source changes, unless it has already finished.
            if state.current(entry.slot, entry.generation)?.busy == true { state.slots[entry.slot]?.task = task }
        }
    }

    private func finished(_ slot: Int, generation: UInt64, waitUntilMs: Int64? = nil) {
        stats.withLock { $0.finished += 1 }
        let now = nanoseconds(clock.now)
        let notBefore = waitUntilMs.map { now.addingClamped(max(0, $0 - Timestamp.nowMs()).multipliedClamped(1_000_000)) }
        state.withLock { state in
            guard state.current(slot, generation) != nil else { return }
            state.slots[slot]?.busy = false
            state.slots[slot]?.task = nil
            state.slots[slot]?.notBefore = notBefore
        }
    }

    private func nanoseconds(_ instant: ContinuousClock.Instant) -> Int64 {
        (instant - base).totalNanoseconds
    }

    private func stopAll() {
        let tasks = state.withLock { state -> [Task<Void, Never>] in
            // Generations keep counting: a probe still ending must not match a later source.
            defer { state = State(nextGeneration: state.nextGeneration) }
            return state.slots.compactMap { $0?.task }
        }
        for task in tasks { task.cancel() }
    }

    /// Probes one source now, outside its schedule (admin "probe now").
    package func probeNow(_ name: String) async -> ProbeResult? {
        guard let source = state.withLock({ state in state.slotOfName[name].flatMap { state.slots[$0] }.map { state.configs[$0.index] } }) else {
            return nil
        }
        return await runProbe(source)
    }

    private func runProbe(_ source: SourceConfig, holdingPermit: Bool = false) async -> ProbeResult? {
        if !holdingPermit { await limit.wait() }
        let offline = connectivity.isOffline
        var result = await prober.probe(source, breakerCountsFailures: !offline)
        limit.signal()
        if Task.isCancelled { return nil }
        result.duringOffline = offline
        result.duringMaintenance = inMaintenance(source.name)
        // Told to wait: no probe before then, up to the source's `max_retry_after` (an upstream
        // must not silence its own source for long).
        result.serverWaitUntilMs = result.serverWaitUntilMs.flatMap {
            ProbeScheduler.serverWait(untilMs: $0, nowMs: Timestamp.nowMs(), atMost: source.maxServerWait)
        }
        if !result.ok { result.fallbackInUse = fallback(source) }
        // A failure that ends once Lookout knows itself offline (this one may have tipped it) is
        // no more the upstream's doing than one that began then.
        if connectivity.record(result) && !result.ok { result.duringOffline = true }
        for sink in sinks { sink.record(result) }
        // Every failure at debug level; the registry tells a source's changes at info and above.
        if !result.ok, !offline { logger.debug("probe failed", metadata: result.logMetadata) }
        return result
    }

    /// How long an upstream's asked-for wait keeps its source unprobed: until `untilMs`, but not
    /// past `atMost` from `nowMs`; nil for a time already past.
    package static func serverWait(untilMs: Int64, nowMs: Int64, atMost: Duration) -> Int64? {
        let until = min(untilMs, nowMs.addingClamped(atMost.totalMilliseconds))
        return until > nowMs ? until : nil
    }

    /// The first tick after `now` on the grid `previous + k × interval` (nanoseconds, as in the
    /// heap): late ticks are skipped.
    static func nextTick(after previous: Int64, interval: Int64, now: Int64) -> Int64 {
        let interval = max(1, interval)
        var next = previous.addingClamped(interval)
        if next <= now {
            let behind = (now - next) / interval
            next = next.addingClamped((behind + 1).multipliedClamped(interval))
        }
        return next
    }

    /// A stable offset in [0, interval) from the source's name (FNV-1a), the same on every start.
    package static func offset(for name: String, interval: Duration) -> Duration {
        let milliseconds = max(1, interval.totalMilliseconds)
        return .milliseconds(Int64(StableHash.of(name) % UInt64(milliseconds)))
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
