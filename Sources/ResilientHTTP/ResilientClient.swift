import Foundation
import Synchronization

/// The resilient client: every call goes through the upstream's HTTPS policy, circuit breaker,
/// token bucket, credentials and retry policy, and everything it does is reported as events.
///
/// ```swift
/// let client = ResilientClient()
/// client.configure(upstream: "acme", policy: UpstreamPolicy())
/// let outcome = await client.call(upstream: "acme", CallRequest(TransferRequest(url: "https://acme.example/health")))
/// if let failure = outcome.failure { print(failure.message(operation: "probing acme")) }
/// ```
public final class ResilientClient: Sendable {
    struct Upstream {
        var policy: UpstreamPolicy
        var breaker: CircuitBreaker
        var bucket: TokenBucket?
        var budget: RetryBudget
        var tokens: TokenStore?
    }

    /// The transport every attempt goes through; OAuth2 token requests use it too.
    public let transport: CurlTransport
    let events: [any ClientEventSink]
    let nowMs: @Sendable () -> Int64
    let random: @Sendable () -> Double
    let sleep: @Sendable (Duration) async throws -> Void
    let upstreams = Mutex<[String: Upstream]>([:])
    /// Calls in flight that others may share: the key of each, with the callers waiting for it.
    let inFlight = Mutex<[String: [CheckedContinuation<CallOutcome, Never>]]>([:])

    /// - Parameters:
    ///   - nowMs: wall-clock milliseconds since 1970 (breaker times are persisted).
    ///   - random: numbers in [0, 1) for jitter.
    ///   - sleep: how retry waits are spent; tests record them instead.
    public init(
        transport: CurlTransport = CurlTransport(), events: [any ClientEventSink] = [],
        nowMs: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1000) },
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) },
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
    ) {
        self.transport = transport
        self.events = events
        self.nowMs = nowMs
        self.random = random
        self.sleep = sleep
    }

    // MARK: - Upstreams

    /// Adds an upstream, or changes its policy while keeping its breaker, bucket and budget state.
    public func configure(upstream name: String, policy: UpstreamPolicy) {
        upstreams.withLock { upstreams in
            if var existing = upstreams[name] {
                existing.breaker.settings = policy.breaker
                existing.budget.ratio = policy.retryBudgetRatio
                existing.budget.minRetriesPerMinute = policy.retryBudgetMinPerMinute
                if existing.policy.rateLimit != policy.rateLimit { existing.bucket = policy.rateLimit.map(ResilientClient.bucket) }
                if existing.policy.auth != policy.auth { existing.tokens = tokenStore(name, policy.auth) }
                existing.policy = policy
                upstreams[name] = existing
            } else {
                upstreams[name] = Upstream(
                    policy: policy, breaker: CircuitBreaker(settings: policy.breaker),
                    bucket: policy.rateLimit.map(ResilientClient.bucket),
                    budget: RetryBudget(ratio: policy.retryBudgetRatio, minRetriesPerMinute: policy.retryBudgetMinPerMinute),
                    tokens: tokenStore(name, policy.auth))
            }
        }
    }

    /// Forgets an upstream with its breaker, bucket and budget; a later call to it starts afresh
    /// with the default policy.
    public func remove(upstream name: String) {
        _ = upstreams.withLock { $0.removeValue(forKey: name) }
    }

    /// Puts back a breaker saved before a restart.
    public func restoreBreaker(upstream name: String, _ saved: PersistedBreaker) {
        upstreams.withLock { upstreams in
            guard var upstream = upstreams[name] else { return }
            upstream.breaker = CircuitBreaker(settings: upstream.policy.breaker, restoring: saved)
            upstreams[name] = upstream
        }
    }

    /// Operator actions on a breaker.
    public enum BreakerAction: String, Sendable {
        case reset
        case forceOpen = "force_open"
        case disable
    }

    /// Applies an operator's action; returns false for an unknown upstream.
    @discardableResult
    public func breaker(upstream name: String, _ action: BreakerAction) -> Bool {
        let now = nowMs()
        guard let (transitions, saved) = upstreams.withLock({ upstreams -> ([BreakerTransition], PersistedBreaker)? in
            guard var upstream = upstreams[name] else { return nil }
            let transitions: [BreakerTransition]
            switch action {
            case .reset: transitions = upstream.breaker.reset(nowMs: now)
            case .forceOpen: transitions = upstream.breaker.forceOpen(nowMs: now)
            case .disable: transitions = upstream.breaker.disable(nowMs: now)
            }
            upstreams[name] = upstream
            return (transitions, upstream.breaker.persisted)
        }) else { return false }
        for transition in transitions { emit(.breakerTransition(upstream: name, transition, state: saved)) }
        return true
    }

    /// The breakers of `names`, in their order (nil for unknown upstreams), in one lock.
    public func breakers(_ names: [String]) -> [CircuitBreaker?] {
        upstreams.withLock { upstreams in names.map { upstreams.index(forKey: $0).map { upstreams.values[$0].breaker } } }
    }

    /// Tokens left in the rate limiters of `names`, in their order (nil without a limit), in one lock.
    public func availableTokens(_ names: [String]) -> [Double?] {
        let now = nowMs()
        return upstreams.withLock { upstreams in names.map { upstreams.index(forKey: $0).flatMap { upstreams.values[$0].bucket?.available(nowMs: now) } } }
    }

    /// The upstream's breaker, tokens and retry budget now; nil for an unknown upstream.
    public func snapshot(upstream name: String) -> UpstreamSnapshot? {
        let now = nowMs()
        return upstreams.withLock { upstreams in
            guard upstreams[name] != nil else { return nil }
            let tokens = upstreams[name]!.bucket?.available(nowMs: now)
            let upstream = upstreams[name]!
            return UpstreamSnapshot(
                breaker: upstream.breaker, availableTokens: tokens,
                retryBudgetRemaining: upstream.budget.remaining(nowMs: now), retryBudgetExhausted: upstream.budget.exhaustedCount)
        }
    }

    private func tokenStore(_ name: String, _ method: AuthMethod?) -> TokenStore? {
        method.map { method in
            TokenStore(method: method, transport: transport) { [self] succeeded in
                emit(.tokenRefreshed(upstream: name, succeeded: succeeded))
            }
        }
    }

    private static func bucket(_ settings: RateLimitSettings) -> TokenBucket {
        TokenBucket(ratePerSecond: settings.perSecond, burst: settings.burst)
    }

    func emit(_ event: ClientEvent) {
        for sink in events { sink.handle(event) }
    }

    /// Runs `body` on the upstream's state in place (no copy of its buffers).
    func withUpstream<T>(_ name: String, _ body: (inout Upstream) -> T) -> T? {
        upstreams.withLock { upstreams in
            guard upstreams[name] != nil else { return nil }
            return body(&upstreams[name]!)
        }
    }

    // MARK: - Calls

    /// Makes one call with retries. An upstream that was never configured gets the default policy.
    ///
    /// - Parameter breakerCountsFailures: false while the caller knows its own network is down,
    ///   so the failure does not trip the breaker.
    public func call(upstream name: String, _ request: CallRequest, breakerCountsFailures: Bool = true) async -> CallOutcome {
        if upstreams.withLock({ $0[name] == nil }) { configure(upstream: name, policy: UpstreamPolicy()) }
        guard request.singleFlight, request.transfer.method == "GET" else {
            return await perform(upstream: name, request, breakerCountsFailures: breakerCountsFailures)
        }
        let key = ([name, request.transfer.url] + request.transfer.headers.map { "\($0.name):\($0.value)" }).joined(separator: "\n")
        let leader = inFlight.withLock { inFlight -> Bool in
            if inFlight[key] != nil { return false }
            inFlight[key] = []
            return true
        }
        guard leader else {
            // Follow the call already in flight; registering under the lock cannot miss its end,
            // because the leader removes the key under the same lock before resuming anyone.
            return await withCheckedContinuation { continuation in
                let joined = inFlight.withLock { inFlight -> Bool in
                    guard inFlight[key] != nil else { return false }
                    inFlight[key]!.append(continuation)
                    return true
                }
                if !joined {
                    Task { continuation.resume(returning: await self.call(upstream: name, request, breakerCountsFailures: breakerCountsFailures)) }
                }
            }
        }
        let outcome = await perform(upstream: name, request, breakerCountsFailures: breakerCountsFailures)
        let followers = inFlight.withLock { $0.removeValue(forKey: key) } ?? []
        for follower in followers { follower.resume(returning: outcome) }
        return outcome
    }
}
