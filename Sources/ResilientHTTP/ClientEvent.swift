import Foundation

/// One attempt of a call.
public struct AttemptRecord: Sendable, Equatable {
    /// 1 for the first attempt.
    public var number: Int
    /// When the attempt began, in milliseconds since 1970.
    public var startedAtMs: Int64
    /// nil when the attempt succeeded (status accepted and the response valid).
    public var failure: Failure?
    /// The final response's status; nil when none arrived.
    public var httpStatus: Int?
    /// libcurl's total time for the attempt, in seconds; waits before it are not included.
    public var durationSeconds: Double
    /// Whether another attempt followed this one.
    public var retried: Bool

    /// Creates a record; the client sets `retried` later, once it decides to try again.
    public init(number: Int, startedAtMs: Int64, failure: Failure?, httpStatus: Int?, durationSeconds: Double, retried: Bool = false) {
        self.number = number
        self.startedAtMs = startedAtMs
        self.failure = failure
        self.httpStatus = httpStatus
        self.durationSeconds = durationSeconds
        self.retried = retried
    }
}

/// How a call ended, as resilience4j counts calls.
public enum CallKind: String, Sendable, CaseIterable {
    case successfulWithoutRetry = "successful_without_retry"
    case successfulWithRetry = "successful_with_retry"
    case failedWithRetry = "failed_with_retry"
    case failedWithoutRetry = "failed_without_retry"
}

/// Everything one call did.
public struct CallOutcome: Sendable {
    /// The upstream's name, or the label of a one-off call.
    public var upstream: String
    /// The URL requested, after any http→https upgrade.
    public var url: String
    /// When the call began, in milliseconds since 1970.
    public var startedAtMs: Int64
    /// The last attempt's result; nil when no request was made (breaker open, http refused).
    public var final: TransferResult?
    /// nil when the call succeeded.
    public var failure: Failure?
    /// The attempts made, in order; empty when no request was made.
    public var attempts: [AttemptRecord]
    /// Wall time of the whole call in seconds, rate-limit and retry waits included.
    public var durationSeconds: Double
    /// The http:// URL was replaced by https://.
    public var upgradedToHTTPS: Bool
    /// Why retrying stopped, when the call failed after a retryable failure.
    public var gaveUp: GiveUpReason?
    /// The call was cancelled (shutdown) rather than finished.
    public var cancelled: Bool
    /// The upstream's breaker after the call, to be saved across restarts.
    public var breaker: PersistedBreaker?

    /// The call succeeded and was not cancelled.
    public var ok: Bool { failure == nil && !cancelled }

    /// Creates an outcome; the client fills it in as the call proceeds.
    public init(
        upstream: String, url: String, startedAtMs: Int64, final: TransferResult?, failure: Failure?, attempts: [AttemptRecord],
        durationSeconds: Double, upgradedToHTTPS: Bool, gaveUp: GiveUpReason?, cancelled: Bool, breaker: PersistedBreaker?
    ) {
        self.upstream = upstream
        self.url = url
        self.startedAtMs = startedAtMs
        self.final = final
        self.failure = failure
        self.attempts = attempts
        self.durationSeconds = durationSeconds
        self.upgradedToHTTPS = upgradedToHTTPS
        self.gaveUp = gaveUp
        self.cancelled = cancelled
        self.breaker = breaker
    }

    /// The call's class for the call counters: "with retry" means more than one attempt; refused
    /// and cancelled calls count as failed.
    public var kind: CallKind {
        switch (ok, attempts.count > 1) {
        case (true, false): return .successfulWithoutRetry
        case (true, true): return .successfulWithRetry
        case (false, true): return .failedWithRetry
        case (false, false): return .failedWithoutRetry
        }
    }
}

/// What the client reports as it works, so a caller can record and count it.
public enum ClientEvent: Sendable {
    case attemptFinished(upstream: String, AttemptRecord)
    case retryScheduled(upstream: String, afterAttempt: Int, category: ErrorCategory, wait: Duration)
    case breakerTransition(upstream: String, BreakerTransition, state: PersistedBreaker)
    case callNotPermitted(upstream: String)
    case retryBudgetExhausted(upstream: String)
    case tokenRefreshed(upstream: String, succeeded: Bool)
    case callFinished(CallOutcome)

    /// The upstream the event is about.
    public var upstream: String {
        switch self {
        case .attemptFinished(let upstream, _), .retryScheduled(let upstream, _, _, _), .breakerTransition(let upstream, _, _),
            .callNotPermitted(let upstream), .retryBudgetExhausted(let upstream), .tokenRefreshed(let upstream, _):
            return upstream
        case .callFinished(let outcome):
            return outcome.upstream
        }
    }
}

/// Receives the client's events; called on whatever task made the call, so keep it quick.
public protocol ClientEventSink: Sendable {
    func handle(_ event: ClientEvent)
}

/// A snapshot of an upstream's protection, for metrics and the status page.
public struct UpstreamSnapshot: Sendable {
    /// A copy of the upstream's breaker.
    public var breaker: CircuitBreaker
    /// Tokens left in its rate limiter; nil when the upstream has no rate limit.
    public var availableTokens: Double?
    /// Retries its budget still allows in the current minute.
    public var retryBudgetRemaining: Int
    /// How often its budget has refused a retry since the upstream was added.
    public var retryBudgetExhausted: Int
}
