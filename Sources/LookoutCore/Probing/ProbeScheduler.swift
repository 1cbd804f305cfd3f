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

    private struct Running {
        var source: SourceConfig
        var task: Task<Void, Never>
    }

    let prober: SourceProber
    let sinks: [any ProbeResultSink]
    let connectivity: ConnectivityMonitor
    let fallback: @Sendable (SourceConfig) -> String?
    /// Whether a source is in a maintenance window now.
    let inMaintenance: @Sendable (String) -> Bool
    let logger: Logger
    let limit: AsyncSemaphore
    let ticker = Ticker()
    private let running = Mutex<[String: Running]>([:])
    private let stats = Mutex(Stats())

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

    /// Starts, restarts or stops per-source loops so exactly `sources` are probed.
    package func apply(_ sources: [SourceConfig]) {
        for source in sources { prober.configure(source) }
        connectivity.setSources(sources)
        let wanted = Dictionary(uniqueKeysWithValues: sources.map { ($0.name, $0) })
        let stopped = running.withLock { running -> [Task<Void, Never>] in
            var stopped: [Task<Void, Never>] = []
            for (name, entry) in running where wanted[name] != entry.source {
                stopped.append(entry.task)
                running.removeValue(forKey: name)
            }
            for source in sources where running[source.name] == nil {
                running[source.name] = Running(source: source, task: Task { await self.loop(source) })
            }
            return stopped
        }
        for task in stopped { task.cancel() }
    }

    /// Runs until cancelled, then stops every loop and waits for them.
    package func run() async {
        await withTaskCancellationHandler {
            await ticker.run()
        } onCancel: {
            self.stopAll()
        }
        stopAll()
    }

    private func stopAll() {
        let tasks = running.withLock { running -> [Task<Void, Never>] in
            defer { running.removeAll() }
            return running.values.map(\.task)
        }
        for task in tasks { task.cancel() }
    }

    /// Probes one source now, outside its schedule (admin "probe now").
    package func probeNow(_ name: String) async -> ProbeResult? {
        guard let source = running.withLock({ $0[name]?.source }) else { return nil }
        return await runProbe(source, host: source.host)
    }

    private func loop(_ source: SourceConfig) async {
        let clock = ContinuousClock()
        let interval = source.interval
        let host = source.host
        var tick = clock.now + ProbeScheduler.offset(for: source.name, interval: interval)
        while !Task.isCancelled {
            await ticker.wait(until: tick)
            if Task.isCancelled { return }
            await limit.wait()
            let late = clock.now - tick > .seconds(1)
            stats.withLock {
                $0.started += 1
                if late { $0.lateStarts += 1 }
            }
            // The probe runs in a child task that ends with it: a task keeps the memory its
            // deepest call needed until it ends, and the client call needs about 20 KB, which
            // 10,000 long-lived loops held for good (340 MB).
            await withDiscardingTaskGroup { group in
                group.addTask { _ = await self.runProbe(source, host: host, holdingPermit: true) }
            }
            let next = ProbeScheduler.nextTick(after: tick, interval: interval, now: clock.now)
            let skipped = UInt64(max(0, Int((next - tick) / interval) - 1))
            if skipped > 0 { stats.withLock { $0.skippedTicks += skipped } }
            tick = next
        }
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
}
