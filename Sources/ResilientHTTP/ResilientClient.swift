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
    let upstreams = Mutex<[String: UpstreamState]>([:])
    /// Calls in flight that others may share: the key of each, with the callers waiting for it.
    let inFlight = Mutex<[FlightKey: [CheckedContinuation<CallOutcome, Never>]]>([:])

    /// Calls waiting for an identical GET already in flight to answer them too.
    package var callsWaitingOnSharedGETs: Int { inFlight.withLock { $0.values.reduce(0) { $0 + $1.count } } }

    /// Bodies up to this size are classified and checked where the call runs, on the transfer
    /// thread when the task prefers `CurlTransport.executor`; larger ones on the global executor.
    public static let inlineJudgementBytes = 64 << 10

    /// What makes two calls the same call: upstream, URL and headers.
    struct FlightKey: Hashable {
        var upstream: String
        var url: String
        var headers: [String]
    }

    /// - Parameters:
    ///   - nowMs: wall-clock milliseconds since 1970 (breaker times are persisted).
    ///   - random: numbers in [0, 1) for jitter.
    ///   - sleep: how retry waits are spent; tests record them instead.
    public init(
        transport: CurlTransport = CurlTransport(), events: [any ClientEventSink] = [],
        nowMs: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1000) },
        random: @escaping @Sendable () -> Double = { Jitter.next() },
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
        _ = registered(name, policy)
    }

    /// The upstream's state, configured with `policy`: made when new; when it exists, updated
    /// in place, or (`updating: false`, a call's fallback) left as it is.
    @discardableResult
    func registered(_ name: String, _ policy: UpstreamPolicy, updating: Bool = true) -> UpstreamState {
        let (state, isNew) = upstreams.withLock { upstreams -> (UpstreamState, Bool) in
            if let existing = upstreams[name] { return (existing, false) }
            let state = UpstreamState(
                Upstream(
                    policy: policy, breaker: CircuitBreaker(settings: policy.breaker),
                    bucket: policy.rateLimit.map(ResilientClient.bucket),
                    budget: RetryBudget(ratio: policy.retryBudgetRatio, minRetriesPerMinute: policy.retryBudgetMinPerMinute),
                    tokens: tokenStore(name, policy.auth)))
            upstreams[name] = state
            return (state, true)
        }
        guard !isNew, updating else { return state }
        // One lock for the whole update: two configurations of one upstream at once (a reload
        // racing the start) must not mix one's policy with the other's credentials.
        state.state.withLock { existing in
            existing.breaker.settings = policy.breaker
            existing.budget.ratio = policy.retryBudgetRatio
            existing.budget.minRetriesPerMinute = policy.retryBudgetMinPerMinute
            if existing.policy.rateLimit != policy.rateLimit { existing.bucket = policy.rateLimit.map(ResilientClient.bucket) }
            if existing.policy.auth != policy.auth { existing.tokens = tokenStore(name, policy.auth) }
            existing.policy = policy
        }
        return state
    }

    /// Forgets an upstream with its breaker, bucket and budget; a later call to it starts afresh
    /// with the default policy.
    public func remove(upstream name: String) {
        upstreams.withLock { $0.removeValue(forKey: name) }?.removed.store(true, ordering: .relaxed)
    }

    /// Puts back a breaker saved before a restart.
    public func restoreBreaker(upstream name: String, _ saved: PersistedBreaker) {
        _ = withUpstream(name) { upstream in
            upstream.breaker = CircuitBreaker(settings: upstream.policy.breaker, restoring: saved)
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
        guard
            let (transitions, saved) = withUpstream(
                name,
                { upstream -> ([BreakerTransition], PersistedBreaker) in
                    let transitions: [BreakerTransition]
                    switch action {
                    case .reset: transitions = upstream.breaker.reset(nowMs: now)
                    case .forceOpen: transitions = upstream.breaker.forceOpen(nowMs: now)
                    case .disable: transitions = upstream.breaker.disable(nowMs: now)
                    }
                    return (transitions, upstream.breaker.persisted)
                })
        else { return false }
        for transition in transitions { emit(.breakerTransition(upstream: name, transition, state: saved)) }
        return true
    }

    /// The breakers of `names`, in their order (nil for unknown upstreams), in one lock.
    public func breakers(_ names: [String]) -> [CircuitBreaker?] {
        states(names).map { $0?.state.withLock { $0.breaker } }
    }

    /// Tokens left in the rate limiters of `names`, in their order (nil without a limit), in one lock.
    public func availableTokens(_ names: [String]) -> [Double?] {
        let now = nowMs()
        return states(names).map { $0?.state.withLock { $0.bucket?.available(nowMs: now) } ?? nil }
    }

    /// The upstream's breaker, tokens and retry budget now; nil for an unknown upstream.
    public func snapshot(upstream name: String) -> UpstreamSnapshot? {
        let now = nowMs()
        return withUpstream(name) { upstream in
            let tokens = upstream.bucket?.available(nowMs: now)
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

    /// Reports a call made without the client (a DNS query) as the client reports its own: its
    /// attempts and its outcome go to the same sinks, so they are counted and recorded alike.
    public func report(_ outcome: CallOutcome) {
        for attempt in outcome.attempts { emit(.attemptFinished(upstream: outcome.upstream, attempt)) }
        emit(.callFinished(outcome))
    }

    func emit(_ event: ClientEvent) {
        for sink in events { sink.handle(event) }
    }

    /// Runs `body` on the upstream's state in place (no copy of its buffers).
    func withUpstream<T>(_ name: String, _ body: (inout Upstream) -> T) -> T? {
        upstreams.withLock { $0[name] }?.state.withLock { body(&$0) }
    }

    /// The states of `names`, in their order (nil for unknown upstreams), in one lock.
    private func states(_ names: [String]) -> [UpstreamState?] {
        upstreams.withLock { upstreams in names.map { upstreams[$0] } }
    }

    // MARK: - Calls

    /// Makes one call with retries. An upstream that was never configured gets the default policy.
    ///
    /// - Parameter breakerCountsFailures: false while the caller knows its own network is down,
    ///   so the failure does not trip the breaker.
    public func call(upstream name: String, _ request: CallRequest, breakerCountsFailures: Bool = true) async -> CallOutcome {
        guard request.singleFlight, request.transfer.method == "GET" else {
            return await perform(upstream: name, request, breakerCountsFailures: breakerCountsFailures)
        }
        let key = FlightKey(upstream: name, url: request.transfer.url, headers: request.transfer.headers.map { "\($0.name):\($0.value)" })
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

/// Numbers in [0, 1) for jitter: splitmix64 over an atomic counter seeded once from the system's
/// generator. Not for secrets; the system's generator is a `getrandom` call each time, and
/// every call's breaker bookkeeping takes one.
public enum Jitter {
    private static let state = Atomic<UInt64>(UInt64.random(in: .min ... .max))

    public static func next() -> Double {
        var z = state.wrappingAdd(0x9E37_79B9_7F4A_7C15, ordering: .relaxed).newValue
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        return Double(z >> 11) * 0x1.0p-53
    }
}
