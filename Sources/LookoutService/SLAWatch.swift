import Foundation
import Logging
import LookoutCore
import LookoutStore

/// Works out every `sla` source's standing once a minute — this period so far and the last one
/// — for `/metrics` and the rules (`SLABudgetExhausted`, `SLAPeriodMissed`).
struct SLAWatch: Sendable {
    let monitor: Monitor
    let database: LookoutDatabase
    let logger: Logger
    static let interval: Duration = .seconds(60)
    /// After an outage begins or ends: time for the writer to store it (it commits at most a
    /// second behind) before the standings are read again.
    static let settle: Duration = .seconds(2)

    /// Reads the reports and sets each source's standing in the registry.
    func refresh(nowMs: Int64 = Timestamp.nowMs()) throws {
        let config = monitor.config
        let sources = config.sources.filter { $0.sla != nil }
        guard !sources.isEmpty else {
            monitor.registry.setSLA([:])
            return
        }
        let store = SLAStore(database: database)
        // What each vendor that is to be excluded says now: maintenance in progress.
        let announcing = sources.filter { source in
            guard source.sla?.exclude.contains(.vendorMaintenance) == true, let vendor = source.vendorStatus else { return false }
            return monitor.vendors.view(vendor, source: source.name).state == .maintenance
        }
        try store.noteVendorMaintenance(
            announcing.map(\.name), nowMs: nowMs, continuesWithinMs: 2 * SLAWatch.interval.totalMilliseconds + SLAWatch.settle.totalMilliseconds)
        let current = try store.reports(sources: sources, period: nil, windows: config.maintenance, nowMs: nowMs)
        let previous = try store.reports(sources: sources, period: nil, previous: true, windows: config.maintenance, nowMs: nowMs)
        let base = config.externalURL ?? ""
        var standings: [String: SLAStanding] = [:]
        for (now, last) in zip(current, previous) {
            var standing = SLAStanding(current: now, previous: last, nowMs: nowMs)
            standing.reportPath = base + standing.reportPath
            standings[now.source] = standing
        }
        monitor.registry.setSLA(standings)
    }

    /// Refreshes every `interval`, and soon after each outage's start or end: an SLA of 100%
    /// is spent by the first second down, and its alert should not wait a minute.
    func run() async {
        let wake = AsyncWakeUp()
        monitor.registry.onOutageEdge { [wake] edge in
            if monitor.config.sources.contains(where: { $0.name == edge.source && $0.sla != nil }) { wake.signal() }
        }
        var failing = false
        while !Task.isCancelled {
            // Reading every source's period is synchronous database work (0.3 s at 10,000
            // sources): on a Dispatch thread, never on the pool that answers /metrics.
            let problem = await withCheckedContinuation { (done: CheckedContinuation<String?, Never>) in
                DispatchQueue.global(qos: .utility).async {
                    do {
                        try refresh()
                        done.resume(returning: nil)
                    } catch {
                        done.resume(returning: "\(error)")
                    }
                }
            }
            if let problem {
                // Told once while it lasts; the last standings stay.
                if !failing { logger.error("cannot work out the SLA standings", metadata: ["error": "\(problem)"]) }
                failing = true
            } else {
                failing = false
            }
            await withTaskCancellationHandler {
                await wake.wait(timeout: SLAWatch.interval)
            } onCancel: {
                wake.signal()
            }
            do { try await Task.sleep(for: SLAWatch.settle) } catch { return }
        }
    }
}
