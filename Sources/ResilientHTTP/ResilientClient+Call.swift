import Foundation
import Synchronization

/// Where a call keeps its upstream's state: the client's registered upstream (breaker, bucket and
/// budget live on, events are reported), or a private one that ends with the call and reports
/// nothing. Either way the call holds the state itself, looked up once, not by name per step.
struct UpstreamSlot: Sendable {
    let state: UpstreamState
    let reportsEvents: Bool
}

/// One upstream's breaker, bucket, budget and policy, under a lock of its own: calls to
/// different upstreams never wait for each other.
final class UpstreamState: Sendable {
    let state: Mutex<ResilientClient.Upstream>
    /// Set when the upstream is removed: a call still running with this state reports nothing
    /// more, as for a source that is gone.
    let removed = Atomic<Bool>(false)

    init(_ upstream: ResilientClient.Upstream) {
        state = Mutex(upstream)
    }
}

extension ResilientClient {
    /// One call that keeps no state and reports no events: a fresh breaker, bucket and budget are
    /// made for it and dropped with it. For calls to arbitrary targets (blackbox-style `/probe`),
    /// where per-target state would grow without bound.
    ///
    /// ```swift
    /// let outcome = await client.callOnce(CallRequest(TransferRequest(url: target)), policy: UpstreamPolicy())
    /// ```
    public func callOnce(_ request: CallRequest, policy: UpstreamPolicy, label: String = "one-off") async -> CallOutcome {
        // Credentials of its own too: an OAuth2 token is fetched for this call and dropped with it.
        let upstream = Upstream(
            policy: policy, breaker: CircuitBreaker(settings: policy.breaker),
            bucket: nil,
            budget: RetryBudget(ratio: policy.retryBudgetRatio, minRetriesPerMinute: policy.retryBudgetMinPerMinute),
            tokens: policy.auth.map { TokenStore(method: $0, transport: transport) { _ in } })
        return await perform(slot: UpstreamSlot(state: UpstreamState(upstream), reportsEvents: false), label: label, request, breakerCountsFailures: false)
    }

    func perform(upstream name: String, _ request: CallRequest, breakerCountsFailures: Bool) async -> CallOutcome {
        // An upstream removed before its call starts is made afresh with the default policy,
        // as `call` does for one never configured.
        let state = registered(name, UpstreamPolicy(), updating: false)
        return await perform(slot: UpstreamSlot(state: state, reportsEvents: true), label: name, request, breakerCountsFailures: breakerCountsFailures)
    }

    /// One call: policy checks, then attempts until success, a final failure or the deadline.
    private func perform(slot: UpstreamSlot, label name: String, _ request: CallRequest, breakerCountsFailures: Bool) async -> CallOutcome {
        func withUpstream<T>(_ ignored: String, _ body: (inout Upstream) -> T) -> T? {
            slot.state.state.withLock { body(&$0) }
        }
        func emit(_ event: ClientEvent) {
            if slot.reportsEvents && !slot.state.removed.load(ordering: .relaxed) { self.emit(event) }
        }
        let clock = ContinuousClock()
        let started = clock.now
        var outcome = CallOutcome(
            upstream: name, url: request.transfer.url, startedAtMs: nowMs(), final: nil, failure: nil, attempts: [],
            durationSeconds: 0, upgradedToHTTPS: false, gaveUp: nil, cancelled: false, breaker: nil)
        func finish() -> CallOutcome {
            outcome.durationSeconds = (clock.now - started).seconds
            emit(.callFinished(outcome))
            return outcome
        }
        guard let policy = withUpstream(name, { $0.policy }) else { return finish() }

        var transfer = request.transfer
        // A connect-only probe sends nothing, so nothing goes in the clear.
        if policy.requireHTTPS, !transfer.connectOnly, ASCII.hasPrefixIgnoringCase(transfer.url, "http://") {
            guard policy.upgradeToHTTPS else {
                outcome.failure = Failure(
                    category: .insecureBlocked, reason: "plain_http_refused",
                    detail: "\(transfer.url) is plain http:// and the source requires https")
                return finish()
            }
            transfer.url = "https://" + transfer.url.dropFirst("http://".count)
            outcome.url = transfer.url
            outcome.upgradedToHTTPS = true
        }

        let now = nowMs()
        let (permission, opening, openingState, trial) =
            withUpstream(name) { upstream -> (BreakerPermission, [BreakerTransition], PersistedBreaker?, Bool) in
                let wasOpen = upstream.breaker.state == .open || upstream.breaker.state == .halfOpen
                let answer = upstream.breaker.acquirePermission(nowMs: now, trial: request.breakerTrial)
                if answer.0 == .permitted { upstream.budget.recordCall(nowMs: now) }
                return (answer.0, answer.1, answer.1.isEmpty ? nil : upstream.breaker.persisted, wasOpen && answer.0 == .permitted)
            } ?? (.permitted, [], nil, false)
        if let openingState {
            for transition in opening { emit(.breakerTransition(upstream: name, transition, state: openingState)) }
        }
        if case .rejected(let next) = permission {
            outcome.breaker = withUpstream(name) { $0.breaker.persisted }
            let when = next.map { " until " + ResilientClient.timeOfDay($0) } ?? " by an operator"
            outcome.failure = Failure(category: .circuitOpen, reason: "circuit_open", detail: "calls to \(name) are paused\(when)")
            emit(.callNotPermitted(upstream: name))
            return finish()
        }

        var refreshedToken = false
        var token: String?
        attempts: for number in 1... {
            if Task.isCancelled {
                outcome.cancelled = true
                break
            }
            let remaining = request.deadline - (clock.now - started)
            if let wait = withUpstream(name, { $0.bucket?.take(nowMs: nowMs()) }) ?? nil {
                guard wait < remaining else {
                    outcome.failure = Failure(
                        category: .rateLimited, reason: "local_rate_limit",
                        detail: "the source's rate limit leaves no request before the deadline")
                    break
                }
                do { try await sleep(wait) } catch {
                    outcome.cancelled = true
                    break
                }
            }
            var attemptRequest = transfer
            if let tokens = withUpstream(name, { $0.tokens }) ?? nil {
                switch await tokens.current() {
                case .success(let current):
                    token = current
                    attemptRequest.headers.append(("Authorization", "Bearer \(current)"))
                case .failure(let failure):
                    outcome.failure = failure
                    break attempts
                }
            }
            let left = request.deadline - (clock.now - started)
            if left < attemptRequest.timeout { attemptRequest.timeout = max(.milliseconds(1), left) }

            let attemptStart = nowMs()
            let result = await transport.perform(attemptRequest)
            if result.cancelled {
                outcome.cancelled = true
                break
            }
            func judge() -> Failure? {
                let failure = FailureClassifier.classify(result, acceptedStatuses: request.acceptedStatuses) ?? request.validate?(result)
                return request.secrets.isEmpty ? failure : failure?.hiding(request.secrets)
            }
            // Reading a large body (a feed's items, a big JSON document or error page) would hold
            // up the transfer thread, and with it the timing of every other transfer, when this
            // task prefers it; on the shared pool it would hold up health checks and scrapes. It
            // is judged on a thread of its own.
            let failure =
                result.body.count > ResilientClient.inlineJudgementBytes
                ? await withTaskExecutorPreference(CheckThread.shared) { judge() }
                : judge()
            if let drainUntil = ResilientClient.quotaReset(result, nowMs: nowMs()) {
                _ = withUpstream(name) { $0.bucket?.drain(nowMs: drainUntil.now, untilMs: drainUntil.until) }
            }
            outcome.final = result
            outcome.failure = failure
            let record = AttemptRecord(
                number: number, startedAtMs: attemptStart, failure: failure, httpStatus: result.httpStatus,
                durationSeconds: result.totalSeconds)
            outcome.attempts.append(record)
            emit(.attemptFinished(upstream: name, record))
            guard let failure else { break }
            // The breaker's trial is one attempt: its retries are what the open breaker protects.
            if trial { break }

            if failure.category == .authError, failure.httpStatus == 401, (withUpstream(name, { $0.tokens }) ?? nil) == nil {
                outcome.failure?.detail = Failure.noCredentials
            }
            if failure.category == .authError, failure.httpStatus == 401, let tokens = withUpstream(name, { $0.tokens }) ?? nil {
                guard !refreshedToken else { break }
                refreshedToken = true
                if case .failure(let refreshFailure) = await tokens.refresh(replacing: token) {
                    outcome.failure = refreshFailure
                    break
                }
                outcome.attempts[outcome.attempts.count - 1].retried = true
                continue
            }

            let decision = policy.retry.decide(
                category: failure.category, failedAttempt: number, serverWait: ServerWait.requested(by: result),
                remaining: request.deadline - (clock.now - started), random: random())
            guard case .retry(let wait) = decision else {
                if case .giveUp(let reason) = decision, reason != .notRetryable { outcome.gaveUp = reason }
                break
            }
            guard withUpstream(name, { $0.budget.tryAcquireRetry(nowMs: nowMs()) }) ?? false else {
                outcome.gaveUp = .budgetExhausted
                emit(.retryBudgetExhausted(upstream: name))
                break
            }
            outcome.attempts[outcome.attempts.count - 1].retried = true
            emit(.retryScheduled(upstream: name, afterAttempt: number, category: failure.category, wait: wait))
            do { try await sleep(wait) } catch {
                outcome.cancelled = true
                break
            }
        }

        if !outcome.cancelled {
            let category = outcome.failure?.category
            let (transitions, saved) =
                withUpstream(name) { upstream -> ([BreakerTransition], PersistedBreaker) in
                    let transitions = upstream.breaker.record(
                        failure: category, nowMs: nowMs(), random: random(), countsAsFailure: breakerCountsFailures)
                    return (transitions, upstream.breaker.persisted)
                } ?? ([], nil)
            if let saved {
                outcome.breaker = saved
                for transition in transitions { emit(.breakerTransition(upstream: name, transition, state: saved)) }
            }
        }
        return finish()
    }

    /// A `RateLimit` field that says the quota is spent drains the bucket until its reset.
    private static func quotaReset(_ result: TransferResult, nowMs now: Int64) -> (now: Int64, until: Int64)? {
        guard let field = result.header("RateLimit"), ServerWait.rateLimitRemaining(field) == 0 else { return nil }
        // At most an hour: an upstream must not be able to silence its own source for longer.
        let reset = min(ServerWait.rateLimitReset(field) ?? .seconds(1), .seconds(3600))
        return (now, now + reset.totalMilliseconds)
    }

    /// `HH:mm:ss UTC`, by arithmetic: this runs for every call an open breaker refuses, and a
    /// DateFormatter per call was most of that call's cost.
    public static func timeOfDay(_ ms: Int64) -> String {
        let seconds = (ms / 1000 % 86_400 + 86_400) % 86_400
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(two(seconds / 3600)):\(two(seconds % 3600 / 60)):\(two(seconds % 60)) UTC"
    }
}
