import Foundation
import ResilientHTTP

/// Probes one source through the resilient client and judges the answer by the source's kind
/// and expectations.
package struct SourceProber: Sendable {
    package let client: ResilientClient
    package let downloads: DownloadProber
    /// What push sources' jobs have said.
    package let pushes: PushLedger

    package init(
        client: ResilientClient, pushes: PushLedger = PushLedger(), downloadProgress: @escaping @Sendable (String, DownloadProgress) -> Void = { _, _ in }
    ) {
        self.client = client
        self.pushes = pushes
        self.downloads = DownloadProber(client: client, progress: downloadProgress)
    }

    /// The longest a call may take: the interval or 2 × timeout × max attempts, whichever is
    /// smaller (SPEC section 4).
    package static func deadline(for source: SourceConfig) -> Duration {
        let attempts = max(1, source.policy.retry.rules.values.map(\.maxAttempts).max() ?? 1)
        return min(source.interval, source.timeout * (2 * attempts))
    }

    /// Hands the source's policy to the client (keeping its breaker state).
    package func configure(_ source: SourceConfig) {
        client.configure(upstream: source.name, policy: source.policy)
    }

    /// One probe of `source`, as its kind's prober makes it.
    package func probe(_ source: SourceConfig, breakerCountsFailures: Bool = true) async -> ProbeResult {
        await Probers.prober(for: source.kind).probe(source, with: self, breakerCountsFailures: breakerCountsFailures)
    }

    /// Reports a probe made without the client (one DNS query, one echo request) as one attempt,
    /// so it is counted (`lookout_errors_total`) and recorded (error rows) as calls are.
    package func report(_ result: ProbeResult, for source: SourceConfig) {
        let attempt = AttemptRecord(
            number: 1, startedAtMs: result.timestampMs, failure: result.failure, httpStatus: nil,
            durationSeconds: result.attemptSeconds ?? result.durationSeconds)
        client.report(
            CallOutcome(
                upstream: source.name, url: source.url, startedAtMs: result.timestampMs, final: nil, failure: result.failure, attempts: [attempt],
                durationSeconds: result.durationSeconds, upgradedToHTTPS: false, gaveUp: nil, cancelled: false, breaker: nil))
    }

    /// One call of the source's URL through the resilient client, judged by `ResponseCheck`:
    /// what every HTTP kind does.
    package func call(_ source: SourceConfig, breakerCountsFailures: Bool, adjusting adjust: (inout TransferRequest) -> Void = { _ in }) async -> ProbeResult {
        var transfer = TransferRequest(url: source.url, method: source.method, headers: source.headers.map { ($0.name, $0.value) }, timeout: source.timeout)
        transfer.caFile = source.caFile
        if let module = source.module {
            // The module's request, as /probe makes it; the source's own headers after its own.
            transfer.method = module.method
            transfer.headers = module.headers.map { ($0.name, $0.value) } + transfer.headers
            transfer.body = module.body.map { Array($0.utf8) }
            module.applyConnection(to: &transfer, fallbackCAFile: source.caFile)
            if let limit = module.bodySizeLimit { transfer.maxResponseBytes = min(limit, 16 << 20) }
            if let encoding = module.compression { transfer.acceptEncoding = encoding }
        }
        adjust(&transfer)
        transfer.forwardHeadersOnRedirect = source.forwardHeadersOnRedirect
        var request = CallRequest(
            transfer,
            acceptedStatuses: source.expect.statuses ?? source.module?.validStatusCodes, deadline: SourceProber.deadline(for: source),
            validate: ResponseCheck.validator(for: source))
        // A monitor keeps looking: each probe on the source's interval is the open breaker's
        // trial, so "up again" comes within an interval of the upstream's recovery.
        request.breakerTrial = true
        let outcome = await client.call(upstream: source.name, request, breakerCountsFailures: breakerCountsFailures)
        return ProbeResult(outcome: outcome, source: source.name)
    }
}

extension ProbeResult {
    /// The result of a finished call.
    package init(outcome: CallOutcome, source: String) {
        self.init(
            source: source, timestampMs: outcome.startedAtMs, ok: outcome.ok, failure: outcome.failure,
            httpStatus: outcome.final?.httpStatus, attempts: outcome.attempts.count,
            durationSeconds: outcome.durationSeconds, bytes: outcome.final?.bodyBytes ?? 0,
            phases: outcome.final?.phases ?? PhaseTimings())
        self.upgradedToHTTPS = outcome.upgradedToHTTPS
        self.certificateExpiry = outcome.final?.certificateExpiry
        self.callKind = outcome.kind
        // One attempt's latency, when it got an answer: a refused connection or a timeout has
        // none (not 0 ms, not the timeout).
        if let final = outcome.final, (final.httpStatus ?? 0) > 0 { self.attemptSeconds = final.totalSeconds }
        if outcome.failure != nil, let final = outcome.final, let wait = ServerWait.requested(by: final), wait > .zero {
            let endedMs = outcome.startedAtMs.addingClamped(Int64(clamping: outcome.durationSeconds * 1000) ?? 0)
            self.serverWaitUntilMs = endedMs.addingClamped(wait.totalMilliseconds)
        }
    }
}
