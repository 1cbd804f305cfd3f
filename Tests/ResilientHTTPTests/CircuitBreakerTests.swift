import ResilientHTTP
import Testing

/// The breaker driven by a manual clock: `now` is just a number the test moves.
@Suite("CircuitBreaker")
struct CircuitBreakerTests {
    let settings = CircuitBreakerSettings(
        failureThreshold: 3, successThreshold: 2, openTimeout: .seconds(10), openTimeoutMax: .seconds(35),
        jitter: 0, halfOpenMaxCalls: 1)

    /// Permission, then a final outcome, as one call.
    func call(_ breaker: inout CircuitBreaker, at now: Int64, failing category: ErrorCategory?) -> [BreakerTransition] {
        let (permission, opened) = breaker.acquirePermission(nowMs: now)
        guard permission == .permitted else { return opened }
        return opened + breaker.record(failure: category, nowMs: now, random: 0.5)
    }

    @Test func opensAfterTheThresholdOfConsecutiveFailures() {
        var breaker = CircuitBreaker(settings: settings)
        #expect(call(&breaker, at: 0, failing: .serverError).isEmpty)
        #expect(call(&breaker, at: 1, failing: .timeout).isEmpty)
        let transitions = call(&breaker, at: 2, failing: .transient)
        #expect(transitions == [BreakerTransition(from: .closed, to: .open, atMs: 2, consecutiveFailures: 3, openTimeoutMs: 10_000)])
        #expect(breaker.state == .open)
        #expect(breaker.nextAttemptAtMs == 10_002)
        #expect(breaker.openCount == 1)
    }

    @Test func aTrialCallIsTheHalfOpenTryWheneverItComes() {
        var breaker = CircuitBreaker(settings: settings)
        for now in 0..<3 { _ = call(&breaker, at: Int64(now), failing: .serverError) }
        #expect(breaker.state == .open && breaker.nextAttemptAtMs == 10_002)
        // Before the open period ends, an ordinary call is refused and a trial goes through.
        #expect(breaker.acquirePermission(nowMs: 5_000).0 == .rejected(nextAttemptAtMs: 10_002))
        let (permission, transitions) = breaker.acquirePermission(nowMs: 5_000, trial: true)
        #expect(permission == .permitted)
        #expect(transitions.map(\.to) == [.halfOpen])
        // It fails: open again for twice as long, and the next trial still goes through at once.
        _ = breaker.record(failure: .serverError, nowMs: 5_000, random: 0.5)
        #expect(breaker.state == .open && breaker.nextAttemptAtMs == 25_000)
        #expect(breaker.acquirePermission(nowMs: 10_000, trial: true).0 == .permitted)
        _ = breaker.record(failure: nil, nowMs: 10_000, random: 0.5)
        #expect(breaker.acquirePermission(nowMs: 15_000, trial: true).0 == .permitted)
        #expect(breaker.record(failure: nil, nowMs: 15_000, random: 0.5).map(\.to) == [.closed])
        // An operator's forced open refuses trials too.
        _ = breaker.forceOpen(nowMs: 16_000)
        #expect(breaker.acquirePermission(nowMs: 17_000, trial: true).0 == .rejected(nextAttemptAtMs: nil))
    }

    @Test func aSuccessResetsTheCount() {
        var breaker = CircuitBreaker(settings: settings)
        _ = call(&breaker, at: 0, failing: .serverError)
        _ = call(&breaker, at: 1, failing: .serverError)
        _ = call(&breaker, at: 2, failing: nil)
        _ = call(&breaker, at: 3, failing: .serverError)
        #expect(breaker.state == .closed)
        #expect(breaker.consecutiveFailures == 1)
    }

    @Test func clientErrorsAndInvalidResponsesDoNotTripIt() {
        var breaker = CircuitBreaker(settings: settings)
        for now in 0..<10 { _ = call(&breaker, at: Int64(now), failing: now % 2 == 0 ? .clientError : .invalidResponse) }
        #expect(breaker.state == .closed)
        #expect(breaker.consecutiveFailures == 0)
    }

    @Test func rejectsWhileOpenAndCountsRejections() {
        var breaker = CircuitBreaker(settings: settings)
        for now in 0..<3 { _ = call(&breaker, at: Int64(now), failing: .serverError) }
        let (permission, _) = breaker.acquirePermission(nowMs: 5_000)
        #expect(permission == .rejected(nextAttemptAtMs: 10_002))
        #expect(breaker.notPermittedCalls == 1)
        #expect(breaker.openDurationMs(nowMs: 5_002) == 5_000)
    }

    @Test func halfOpenLetsLimitedCallsThroughAndClosesAfterSuccesses() {
        var breaker = CircuitBreaker(settings: settings)
        for now in 0..<3 { _ = call(&breaker, at: Int64(now), failing: .serverError) }
        let (first, transitions) = breaker.acquirePermission(nowMs: 10_002)
        #expect(first == .permitted)
        #expect(transitions.map(\.to) == [.halfOpen])
        let (second, _) = breaker.acquirePermission(nowMs: 10_003)
        #expect(second == .rejected(nextAttemptAtMs: 10_002))
        let step1 = breaker.record(failure: nil, nowMs: 10_004, random: 0.5)
        #expect(step1.isEmpty)
        #expect(breaker.state == .halfOpen)
        let closing = call(&breaker, at: 10_005, failing: nil)
        #expect(closing.map(\.to) == [.closed])
        #expect(breaker.state == .closed)
        #expect(breaker.consecutiveFailures == 0)
    }

    @Test func eachFailedHalfOpenTryDoublesTheOpenPeriodUpToTheCap() {
        var breaker = CircuitBreaker(settings: settings)
        for now in 0..<3 { _ = call(&breaker, at: Int64(now), failing: .serverError) }
        var now: Int64 = 2
        var periods: [Int64] = []
        for _ in 0..<4 {
            now = breaker.nextAttemptAtMs!
            let transitions = call(&breaker, at: now, failing: .serverError)
            #expect(transitions.map(\.to) == [.halfOpen, .open])
            periods.append(transitions.last!.openTimeoutMs)
        }
        #expect(periods == [20_000, 35_000, 35_000, 35_000])
        // Closing resets the period to the first one.
        now = breaker.nextAttemptAtMs!
        _ = call(&breaker, at: now, failing: nil)
        _ = call(&breaker, at: now + 1, failing: nil)
        #expect(breaker.state == .closed)
        for offset in 2..<5 { _ = call(&breaker, at: now + Int64(offset), failing: .timeout) }
        #expect(breaker.nextAttemptAtMs == now + 4 + 10_000)
    }

    @Test func jitterSpreadsTheOpenPeriod() {
        var jittered = settings
        jittered.jitter = 0.3
        for (random, expected) in [(0.0, Int64(7_000)), (0.5, 10_000), (0.999, 12_994)] {
            var breaker = CircuitBreaker(settings: jittered)
            var transitions: [BreakerTransition] = []
            for now in 0..<3 {
                _ = breaker.acquirePermission(nowMs: Int64(now))
                transitions = breaker.record(failure: .serverError, nowMs: Int64(now), random: random)
            }
            #expect(transitions.last?.openTimeoutMs == expected)
        }
    }

    @Test func forcedOpenRefusesAndDisabledPermitsUntilReset() {
        var breaker = CircuitBreaker(settings: settings)
        let step2 = breaker.forceOpen(nowMs: 0)
        #expect(step2.map(\.to) == [.forcedOpen])
        let step3 = breaker.acquirePermission(nowMs: 1_000_000)
        #expect(step3.0 == .rejected(nextAttemptAtMs: nil))
        let step4 = breaker.disable(nowMs: 1)
        #expect(step4.map(\.to) == [.disabled])
        for now in 0..<10 { _ = call(&breaker, at: Int64(now), failing: .serverError) }
        #expect(breaker.state == .disabled)
        let step5 = breaker.reset(nowMs: 20)
        #expect(step5.map(\.to) == [.closed])
        #expect(breaker.state == .closed)
        #expect(breaker.consecutiveFailures == 0)
    }

    @Test func aFailureWhileOfflineDoesNotCount() {
        var breaker = CircuitBreaker(settings: settings)
        for now in 0..<10 {
            _ = breaker.acquirePermission(nowMs: Int64(now))
            _ = breaker.record(failure: .networkUnreachable, nowMs: Int64(now), random: 0.5, countsAsFailure: false)
        }
        #expect(breaker.state == .closed)
        #expect(breaker.consecutiveFailures == 0)
    }

    /// A hook's breaker: a 429 is the receiver asking to wait, not a failure; in half-open it
    /// neither closes nor reopens the breaker, and the next call is let through.
    @Test func aRateLimitNeedNotTripIt() {
        var settings = settings
        settings.rateLimitTrips = false
        var breaker = CircuitBreaker(settings: settings)
        for now in 0..<10 { _ = call(&breaker, at: Int64(now), failing: .rateLimited) }
        #expect(breaker.state == .closed)
        for now in 10..<13 { _ = call(&breaker, at: Int64(now), failing: .serverError) }
        #expect(breaker.state == .open)
        let trial = breaker.nextAttemptAtMs!
        #expect(call(&breaker, at: trial, failing: .rateLimited).map(\.to) == [.halfOpen])
        #expect(breaker.state == .halfOpen)
        #expect(call(&breaker, at: trial + 1, failing: .rateLimited).isEmpty)
        #expect(call(&breaker, at: trial + 2, failing: nil).isEmpty)
        #expect(call(&breaker, at: trial + 3, failing: nil).map(\.to) == [.closed])

        var strict = CircuitBreaker(settings: self.settings)
        for now in 0..<3 { _ = call(&strict, at: Int64(now), failing: .rateLimited) }
        #expect(strict.state == .open)
    }

    @Test func restoresFromThePersistedForm() {
        var breaker = CircuitBreaker(settings: settings)
        for now in 0..<3 { _ = call(&breaker, at: Int64(now), failing: .serverError) }
        _ = call(&breaker, at: breaker.nextAttemptAtMs!, failing: .serverError)
        let saved = breaker.persisted
        #expect(saved.state == .open && saved.openTimeoutMs == 20_000 && saved.openCount == 1)  // a failed try is the same opening

        var restored = CircuitBreaker(settings: settings, restoring: saved)
        #expect(restored.state == .open)
        let step6 = restored.acquirePermission(nowMs: saved.nextAttemptAtMs! - 1)
        #expect(step6.0 == .rejected(nextAttemptAtMs: saved.nextAttemptAtMs))
        // The doubling continues where it was.
        let transitions = call(&restored, at: saved.nextAttemptAtMs!, failing: .timeout)
        #expect(transitions.last?.openTimeoutMs == 35_000)

        var halfOpen = saved
        halfOpen.state = .halfOpen
        #expect(CircuitBreaker(settings: settings, restoring: halfOpen).state == .open)
    }
}
