import Foundation
import ResilientHTTP

/// Probes one source through the resilient client and judges the answer by the source's kind.
public struct SourceProber: Sendable {
    public let client: ResilientClient

    public init(client: ResilientClient) {
        self.client = client
    }

    /// The longest a call may take: the interval or 2 × timeout × max attempts, whichever is
    /// smaller (SPEC section 4).
    public static func deadline(for source: SourceConfig, policy: RetryPolicy) -> Duration {
        let attempts = max(1, policy.rules.values.map(\.maxAttempts).max() ?? 1)
        return min(source.interval, source.timeout * (2 * attempts))
    }

    public func probe(_ source: SourceConfig, policy: RetryPolicy = .standard, breakerCountsFailures: Bool = true) async -> ProbeResult {
        let request = CallRequest(
            TransferRequest(url: source.url, timeout: source.timeout),
            deadline: SourceProber.deadline(for: source, policy: policy),
            validate: ResponseCheck.validator(for: source.kind))
        let outcome = await client.call(upstream: source.name, request, breakerCountsFailures: breakerCountsFailures)
        return ProbeResult(outcome: outcome, source: source.name)
    }
}

extension ProbeResult {
    /// The result of a finished call.
    public init(outcome: CallOutcome, source: String) {
        self.init(
            source: source, timestampMs: outcome.startedAtMs, ok: outcome.ok, failure: outcome.failure,
            httpStatus: outcome.final?.httpStatus, attempts: outcome.attempts.count,
            durationSeconds: outcome.durationSeconds, bytes: outcome.final?.bodyBytes ?? 0,
            phases: outcome.final?.phases ?? PhaseTimings())
        self.upgradedToHTTPS = outcome.upgradedToHTTPS
        self.certificateExpiry = outcome.final?.certificateExpiry
    }
}
