import Foundation
import Logging

/// Probes every source on its interval, starting each at a stable offset in [0, interval) so a
/// large config does not fire at once. A source's runs never overlap; a tick missed because the
/// previous run was slow is skipped, not queued.
public final class ProbeScheduler: Sendable {
    let sources: [SourceConfig]
    let prober: SourceProber
    let sinks: [any ProbeResultSink]
    let logger: Logger

    public init(sources: [SourceConfig], prober: SourceProber, sinks: [any ProbeResultSink], logger: Logger) {
        self.sources = sources
        self.prober = prober
        self.sinks = sinks
        self.logger = logger
    }

    /// Runs until the task is cancelled.
    public func run() async {
        await withDiscardingTaskGroup { group in
            for source in sources {
                group.addTask { await self.loop(source) }
            }
        }
    }

    private func loop(_ source: SourceConfig) async {
        let clock = ContinuousClock()
        let interval = source.interval
        var next = clock.now + ProbeScheduler.offset(for: source.name, interval: interval)
        while !Task.isCancelled {
            do { try await clock.sleep(until: next) } catch { return }
            let result = await prober.probe(source)
            if Task.isCancelled { return }
            for sink in sinks { sink.record(result) }
            if let failure = result.failure {
                logger.info("probe failed", metadata: [
                    "source": "\(source.name)", "category": "\(failure.category.rawValue)", "reason": "\(failure.reason)",
                ])
            }
            next = ProbeScheduler.nextTick(after: next, interval: interval, now: clock.now)
        }
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
    public static func offset(for name: String, interval: Duration) -> Duration {
        let milliseconds = max(1, interval.totalMilliseconds)
        return .milliseconds(Int64(stableHash(name) % UInt64(milliseconds)))
    }

    /// FNV-1a 64 of the UTF-8 bytes.
    public static func stableHash(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x100_0000_01b3
        }
        return hash
    }
}
