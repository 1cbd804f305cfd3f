/// How waits grow between attempts.
public enum BackoffKind: String, Sendable, CaseIterable {
    case exponential, linear, constant
}

/// The retry rule of one error category.
public struct RetryRule: Sendable, Equatable {
    /// Attempts in all, the first included; 1 means no retry.
    public var maxAttempts: Int
    /// How the wait grows from one retry to the next (see the table on `RetryPolicy`).
    public var backoff: BackoffKind
    /// The wait after the first failed attempt, before jitter.
    public var base: Duration
    /// No wait is longer than this, whatever the server asks.
    public var max: Duration
    /// Each wait is spread uniformly over ±jitter of itself (0.2 = ±20%).
    public var jitter: Double

    /// Creates a rule; `jitter` is clamped to 0...1 when a wait is computed.
    public init(maxAttempts: Int, backoff: BackoffKind, base: Duration, max: Duration, jitter: Double) {
        self.maxAttempts = maxAttempts
        self.backoff = backoff
        self.base = base
        self.max = max
        self.jitter = jitter
    }
}

/// Why a call stops retrying.
public enum GiveUpReason: String, Sendable, Equatable {
    /// The category is never retried (client errors, TLS, invalid responses...).
    case notRetryable = "not_retryable"
    /// The category's `maxAttempts` were used.
    case attemptsExhausted = "attempts_exhausted"
    /// The next wait would end past the call's deadline.
    case deadline
    /// The source's retry budget is spent.
    case budgetExhausted = "budget_exhausted"
}

/// What to do after a failed attempt.
public enum RetryDecision: Sendable, Equatable {
    case retry(after: Duration)
    case giveUp(GiveUpReason)
}

/// Per-category retry rules (SPEC section 4) and the wait before each retry.
///
/// The wait before attempt `n + 1`, after attempt `n` failed, before jitter and the cap:
///
/// | backoff       | after attempt 1 | after 2   | after 3   | after n             |
/// |---------------|-----------------|-----------|-----------|---------------------|
/// | `exponential` | base            | 2 × base  | 4 × base  | base × 2^(n−1)      |
/// | `linear`      | base            | 2 × base  | 3 × base  | base × n            |
/// | `constant`    | base            | base      | base      | base                |
///
/// Jitter then spreads the wait over `[w × (1 − jitter), w × (1 + jitter)]`. The wait actually
/// taken is the largest of that, the server's `Retry-After` and its `RateLimit` reset — and never
/// more than the rule's `max`. With the defaults, a `server_error` (base 2 s, max 30 s, 3 attempts)
/// waits about 2 s, then about 4 s; a `timeout` (linear, base 1 s) about 1 s, then 2 s.
public struct RetryPolicy: Sendable, Equatable {
    /// The rule of each category; a category without one is not retried.
    public var rules: [ErrorCategory: RetryRule]

    /// A policy with exactly these rules; `standard` holds the defaults.
    public init(rules: [ErrorCategory: RetryRule]) {
        self.rules = rules
    }

    /// SPEC section 3's defaults.
    public static let standard = RetryPolicy(rules: [
        .transient: RetryRule(maxAttempts: 3, backoff: .exponential, base: .seconds(1), max: .seconds(10), jitter: 0.2),
        .serverError: RetryRule(maxAttempts: 3, backoff: .exponential, base: .seconds(2), max: .seconds(30), jitter: 0.2),
        .rateLimited: RetryRule(maxAttempts: 2, backoff: .exponential, base: .seconds(5), max: .seconds(60), jitter: 0.3),
        .networkUnreachable: RetryRule(maxAttempts: 2, backoff: .linear, base: .seconds(1), max: .seconds(5), jitter: 0.2),
        .timeout: RetryRule(maxAttempts: 3, backoff: .linear, base: .seconds(1), max: .seconds(10), jitter: 0.2),
    ])

    /// No retries at all.
    public static let none = RetryPolicy(rules: [:])

    /// The backoff after `failedAttempt` (1-based) failed, jitter applied with `random` in [0, 1).
    public static func backoff(_ rule: RetryRule, failedAttempt: Int, random: Double) -> Duration {
        let attempt = Swift.max(1, failedAttempt)
        let baseSeconds = rule.base.seconds
        var seconds: Double
        switch rule.backoff {
        case .exponential: seconds = baseSeconds * Double(1 << Swift.min(attempt - 1, 30))
        case .linear: seconds = baseSeconds * Double(attempt)
        case .constant: seconds = baseSeconds
        }
        seconds = Swift.min(seconds, rule.max.seconds)
        let jitter = Swift.min(Swift.max(rule.jitter, 0), 1)
        seconds *= 1 + jitter * (2 * random - 1)
        return Duration.clamping(seconds: Swift.min(seconds, rule.max.seconds)) ?? .zero
    }

    /// Whether and when to try again after attempt `failedAttempt` failed with `category`.
    ///
    /// - Parameters:
    ///   - serverWait: what the server asked for (`Retry-After` or the `RateLimit` reset), if anything.
    ///   - remaining: time left before the call's deadline.
    ///   - random: a number in [0, 1) for the jitter.
    public func decide(
        category: ErrorCategory, failedAttempt: Int, serverWait: Duration?, remaining: Duration, random: Double
    ) -> RetryDecision {
        guard category.isRetryable, let rule = rules[category], rule.maxAttempts > 1 else { return .giveUp(.notRetryable) }
        guard failedAttempt < rule.maxAttempts else { return .giveUp(.attemptsExhausted) }
        var wait = RetryPolicy.backoff(rule, failedAttempt: failedAttempt, random: random)
        if let serverWait, serverWait > wait { wait = Swift.min(serverWait, rule.max) }
        guard wait < remaining else { return .giveUp(.deadline) }
        return .retry(after: wait)
    }
}
