import Foundation
import Logging
import ResilientHTTP

/// One finished probe of a source: a call with its retries, judged against the source's
/// expectations.
package struct ProbeResult: Sendable, Equatable {
    package var source: String
    /// When the probe started, in milliseconds since 1970.
    package var timestampMs: Int64
    package var ok: Bool
    /// nil when `ok`.
    package var failure: Failure?
    package var httpStatus: Int?
    package var attempts: Int
    /// The whole call: every attempt, and the waits between them.
    package var durationSeconds: Double
    /// The upstream's response time, the *latency* everything shows: the last attempt alone,
    /// when it got an answer (nil when no request was made or none came back).
    package var attemptSeconds: Double?
    package var bytes: Int
    package var phases: PhaseTimings
    /// The http:// URL was probed as https://.
    package var upgradedToHTTPS = false
    /// When the first of the upstream's TLS certificates expires.
    package var certificateExpiry: Date?
    /// How the call went, counting retries.
    package var callKind: CallKind = .successfulWithoutRetry
    /// Downloads: how far it got and whether it verified.
    package var download: DownloadProgress?
    /// While this source is down: the name of its fallback, when that one is up.
    package var fallbackInUse: String?
    /// Lookout itself was offline when this probe ran.
    package var duringOffline = false
    /// The source was in a maintenance window: not counted in availability or SLO figures.
    package var duringMaintenance = false
    /// A failure that opens an outage at once, whatever `failure_threshold` says: a push
    /// source's job reporting a failure, or not calling in within its grace.
    package var decisive = false
    /// A flow's steps, each with what it did.
    package var steps: [FlowStepOutcome]?
    /// The upstream asked not to be called again before this time (its Retry-After or
    /// RateLimit reset), capped by the source's `max_retry_after`; nil: no wait asked.
    package var serverWaitUntilMs: Int64?

    package init(
        source: String, timestampMs: Int64, ok: Bool, failure: Failure? = nil, httpStatus: Int? = nil,
        attempts: Int = 1, durationSeconds: Double = 0, latencySeconds: Double? = nil, bytes: Int = 0, phases: PhaseTimings = .init()
    ) {
        self.attemptSeconds = latencySeconds
        self.source = source
        self.timestampMs = timestampMs
        self.ok = ok
        self.failure = failure
        self.httpStatus = httpStatus
        self.attempts = attempts
        self.durationSeconds = durationSeconds
        self.bytes = bytes
        self.phases = phases
    }

    /// An open circuit breaker refused the call: no request was made, so this is not a
    /// measurement of the upstream (not a sample, not an error record).
    package var heldBack: Bool {
        failure?.category == .circuitOpen
    }

    /// The message an on-call engineer reads, e.g. "Error while probing acme: the server answered 503."
    package var message: String? {
        failure.map { ProbeResult.opening(source) + $0.whatHappened }
    }

    /// How `message` (and so an alert's description) begins: "Error while probing acme: ".
    package static func opening(_ source: String) -> String {
        "Error while probing \(source): "
    }

    /// A message or an alert's description without its opening, for a line that already names
    /// the source: "the server answered 503. The server said: …". Other text is kept as it is.
    package static func withoutOpening(_ text: String, source: String) -> String {
        let opening = opening(source)
        return text.hasPrefix(opening) ? String(text.dropFirst(opening.count)) : text
    }

    /// A failed probe's fields in a log line: source, category, reason, attempts, and the HTTP
    /// status, the message and the maintenance mark where they apply.
    package var logMetadata: Logger.Metadata {
        var metadata: Logger.Metadata = [
            "source": "\(source)", "category": "\(failure?.category.rawValue ?? "")",
            "reason": "\(failure?.reason ?? "")", "attempts": "\(attempts)",
        ]
        if let httpStatus { metadata["http_status"] = "\(httpStatus)" }
        if let message { metadata["message"] = "\(message)" }
        if duringMaintenance { metadata["maintenance"] = "true" }
        return metadata
    }
}

/// Receives every finished probe (the store, the status board).
package protocol ProbeResultSink: Sendable {
    func record(_ result: ProbeResult)
}
