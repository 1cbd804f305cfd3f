/// A token bucket per source: `rate` tokens a second, at most `burst` saved up. A server that
/// says its quota is spent (`RateLimit: ...;r=0;t=N`) drains it until the reset.
public struct TokenBucket: Sendable, Equatable {
    /// Tokens added per second, continuously (fractions count).
    public var ratePerSecond: Double
    /// The most tokens the bucket holds (`init` raises it to at least 1).
    public var burst: Double
    private var tokens: Double
    private var lastMs: Int64?
    private var blockedUntilMs: Int64 = 0

    /// A full bucket: it starts with `burst` tokens, at least 1.
    public init(ratePerSecond: Double, burst: Double) {
        self.ratePerSecond = ratePerSecond
        self.burst = Swift.max(1, burst)
        self.tokens = Swift.max(1, burst)
    }

    /// Takes a token, or says how long until one is available.
    public mutating func take(nowMs: Int64) -> Duration? {
        refill(nowMs)
        if nowMs < blockedUntilMs { return .milliseconds(blockedUntilMs - nowMs) }
        if tokens >= 1 {
            tokens -= 1
            return nil
        }
        let missing = 1 - tokens
        return Duration.clamping(seconds: (missing / ratePerSecond * 1000).rounded(.up) / 1000) ?? .longest
    }

    /// Empties the bucket and holds it empty until `untilMs`.
    public mutating func drain(nowMs: Int64, untilMs: Int64) {
        refill(nowMs)
        tokens = 0
        blockedUntilMs = Swift.max(blockedUntilMs, untilMs)
    }

    /// Tokens available now.
    public mutating func available(nowMs: Int64) -> Double {
        refill(nowMs)
        return nowMs < blockedUntilMs ? 0 : tokens
    }

    private mutating func refill(_ nowMs: Int64) {
        defer { lastMs = Swift.max(lastMs ?? nowMs, nowMs) }
        guard let lastMs, nowMs > lastMs else { return }
        let from = Swift.max(lastMs, blockedUntilMs)
        guard nowMs > from else { return }
        tokens = Swift.min(burst, tokens + Double(nowMs - from) / 1000 * ratePerSecond)
    }
}
