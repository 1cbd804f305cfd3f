/// Whether a source is *down* — in an outage people are told of — by its `OutagePolicy`: opened by
/// `failure_threshold` failed probes in a row or by `window.failures` of the last `window.probes`,
/// ended by `success_threshold` successes in a row. A value-type state machine fed each probe's
/// outcome; the paging rules follow its `down`.
///
/// | policy (default)             | probes (✗ failed, ✓ passed) | down                       |
/// | ---------------------------- | --------------------------- | -------------------------- |
/// | `failure_threshold: 2`       | ✓ ✗ ✓ ✗ ✓                   | never: single failures     |
/// | `failure_threshold: 2`       | ✓ ✗ ✗ ✗ ✓                   | from the 2nd ✗ to the ✓    |
/// | `window: {failures: 3, probes: 10}`, `success_threshold: 3` | ✗ ✓ ✗ ✓ ✗ ✓ ✓ ✓ | from the 3rd ✗ to the 3rd ✓ in a row |
package struct OutageTracker: Sendable, Equatable {
    /// The longest window (and threshold) the tracker counts: one bit per probe in a `UInt64`.
    package static let maxWindow = 64

    /// The last 64 outcomes, newest in bit 0; a set bit is a failure.
    private var recent: UInt64 = 0
    package private(set) var consecutiveFailures = 0
    package private(set) var consecutiveSuccesses = 0
    /// In an outage.
    package private(set) var down = false
    /// The first failed probe of the run of failures that opened the outage (or is under way).
    package private(set) var failingSinceMs: Int64?
    /// The first success of the run of successes under way while down: where an outage that
    /// `success_threshold` successes close ends for an SLA (its first success).
    package private(set) var recoveringSinceMs: Int64?
    /// Failed probes of the outage: those of the run that opened it and every one since.
    package private(set) var failedProbes = 0

    package init() {}

    /// What a probe changed.
    package enum Change: Sendable, Equatable {
        /// The outage began; it counts from the first failed probe of its run, `sinceMs`.
        case opened(sinceMs: Int64)
        /// The outage that began at `sinceMs` ended; it was up from `upAtMs`, the first success
        /// of the run that closed it, after `failedProbes` failed probes.
        case closed(sinceMs: Int64, upAtMs: Int64, failedProbes: Int)
    }

    /// Takes one probe's outcome at `atMs`; returns the change it made, if any. A `decisive`
    /// failure opens the outage at once.
    @discardableResult
    package mutating func record(ok: Bool, atMs: Int64, policy: OutagePolicy, decisive: Bool = false) -> Change? {
        recent = (recent << 1) | (ok ? 0 : 1)
        if ok {
            consecutiveFailures = 0
            consecutiveSuccesses += 1
            if consecutiveSuccesses == 1 { recoveringSinceMs = atMs }
            if !down { failingSinceMs = nil }
            guard down, consecutiveSuccesses >= policy.successThreshold else { return nil }
            down = false
            let closed = Change.closed(sinceMs: failingSinceMs ?? atMs, upAtMs: recoveringSinceMs ?? atMs, failedProbes: failedProbes)
            failingSinceMs = nil
            recoveringSinceMs = nil
            failedProbes = 0
            return closed
        }
        consecutiveSuccesses = 0
        recoveringSinceMs = nil
        if consecutiveFailures == 0, !down || failingSinceMs == nil { failingSinceMs = atMs }
        consecutiveFailures += 1
        if down { failedProbes = failedProbes.addingClamped(1) }
        guard !down, decisive || opens(policy) else { return nil }
        down = true
        // The window's failures opened it, or the run of them.
        failedProbes = max(consecutiveFailures, (recent & windowMask(policy)).nonzeroBitCount)
        return .opened(sinceMs: failingSinceMs ?? atMs)
    }

    /// Takes back an outage that was open when Lookout stopped.
    package mutating func restore(downSinceMs: Int64, failedProbes: Int = 0) {
        down = true
        failingSinceMs = downSinceMs
        self.failedProbes = max(0, failedProbes)
    }

    private func windowMask(_ policy: OutagePolicy) -> UInt64 {
        guard let probes = policy.windowProbes, probes > 0 else { return 0 }
        return probes >= 64 ? .max : (1 << UInt64(probes)) - 1
    }

    private func opens(_ policy: OutagePolicy) -> Bool {
        if consecutiveFailures >= policy.failureThreshold { return true }
        guard let failures = policy.windowFailures, policy.windowProbes ?? 0 > 0 else { return false }
        return (recent & windowMask(policy)).nonzeroBitCount >= failures
    }
}

/// An outage's start or end by its source's policy, as the registry tells it.
package struct OutageEdge: Sendable {
    package var source: String
    package var change: OutageTracker.Change
    /// At the start, the upstream's failure that opened it (its cause); at the end, the success
    /// that closed it.
    package var cause: ProbeResult

    package init(source: String, change: OutageTracker.Change, cause: ProbeResult) {
        self.source = source
        self.change = change
        self.cause = cause
    }
}
