import Foundation
import ResilientHTTP
import Testing

@Suite("RetryPolicy")
struct RetryPolicyTests {
    func rule(_ kind: BackoffKind, jitter: Double = 0) -> RetryRule {
        RetryRule(maxAttempts: 6, backoff: kind, base: .seconds(1), max: .seconds(10), jitter: jitter)
    }

    @Test func exponentialDoublesUpToTheCap() {
        let waits = (1...6).map { RetryPolicy.backoff(rule(.exponential), failedAttempt: $0, random: 0.5) }
        #expect(waits == [.seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(10), .seconds(10)])
    }

    @Test func linearGrowsByTheBase() {
        let waits = (1...4).map { RetryPolicy.backoff(rule(.linear), failedAttempt: $0, random: 0.5) }
        #expect(waits == [.seconds(1), .seconds(2), .seconds(3), .seconds(4)])
    }

    @Test func constantStays() {
        let waits = (1...3).map { RetryPolicy.backoff(rule(.constant), failedAttempt: $0, random: 0.9) }
        #expect(waits == [.seconds(1), .seconds(1), .seconds(1)])
    }

    @Test func jitterStaysWithinItsBoundsAndTheCap() {
        let jittered = rule(.exponential, jitter: 0.2)
        #expect(RetryPolicy.backoff(jittered, failedAttempt: 3, random: 0) == .milliseconds(3200))
        #expect(RetryPolicy.backoff(jittered, failedAttempt: 3, random: 0.9999) <= .milliseconds(4800))
        #expect(RetryPolicy.backoff(jittered, failedAttempt: 3, random: 0.9999) > .milliseconds(4790))
        for attempt in 1...8 {
            for step in 0..<50 {
                let wait = RetryPolicy.backoff(jittered, failedAttempt: attempt, random: Double(step) / 50)
                #expect(wait <= .seconds(10))
                #expect(wait >= .milliseconds(800))
            }
        }
    }

    @Test func retriesOnlyRetryableCategoriesUpToMaxAttempts() {
        let policy = RetryPolicy.standard
        #expect(policy.decide(category: .clientError, failedAttempt: 1, serverWait: nil, remaining: .seconds(60), random: 0.5) == .giveUp(.notRetryable))
        #expect(policy.decide(category: .tlsError, failedAttempt: 1, serverWait: nil, remaining: .seconds(60), random: 0.5) == .giveUp(.notRetryable))
        #expect(policy.decide(category: .serverError, failedAttempt: 1, serverWait: nil, remaining: .seconds(60), random: 0.5) == .retry(after: .seconds(2)))
        #expect(policy.decide(category: .serverError, failedAttempt: 2, serverWait: nil, remaining: .seconds(60), random: 0.5) == .retry(after: .seconds(4)))
        #expect(policy.decide(category: .serverError, failedAttempt: 3, serverWait: nil, remaining: .seconds(60), random: 0.5) == .giveUp(.attemptsExhausted))
        #expect(policy.decide(category: .timeout, failedAttempt: 2, serverWait: nil, remaining: .seconds(60), random: 0.5) == .retry(after: .seconds(2)))
    }

    @Test func theServersWaitWinsWhenLongerButNeverPastTheCap() {
        let policy = RetryPolicy.standard
        #expect(
            policy.decide(category: .rateLimited, failedAttempt: 1, serverWait: .seconds(20), remaining: .seconds(300), random: 0.5)
                == .retry(after: .seconds(20)))
        #expect(
            policy.decide(category: .rateLimited, failedAttempt: 1, serverWait: .seconds(1), remaining: .seconds(300), random: 0.5)
                == .retry(after: .seconds(5)))
        #expect(
            policy.decide(category: .rateLimited, failedAttempt: 1, serverWait: .seconds(600), remaining: .seconds(300), random: 0.5)
                == .retry(after: .seconds(60)))
    }

    @Test func neverWaitsPastTheDeadline() {
        let policy = RetryPolicy.standard
        #expect(policy.decide(category: .serverError, failedAttempt: 1, serverWait: nil, remaining: .seconds(1), random: 0.5) == .giveUp(.deadline))
        #expect(policy.decide(category: .rateLimited, failedAttempt: 1, serverWait: .seconds(30), remaining: .seconds(29), random: 0.5) == .giveUp(.deadline))
    }
}

@Suite("ServerWait")
struct ServerWaitTests {
    let now = Date(timeIntervalSince1970: 1_445_412_400)  // Wed, 21 Oct 2015 07:26:40 GMT

    @Test func readsRetryAfterInSecondsAndAsAnHTTPDate() {
        #expect(ServerWait.retryAfter("120", now: now) == .seconds(120))
        #expect(ServerWait.retryAfter("Wed, 21 Oct 2015 07:28:00 GMT", now: now) == .seconds(80))
        #expect(ServerWait.retryAfter("Wednesday, 21-Oct-15 07:28:00 GMT", now: now) == .seconds(80))
        #expect(ServerWait.retryAfter("Wed Oct 21 07:28:00 2015", now: now) == .seconds(80))
        #expect(ServerWait.retryAfter("Tue, 20 Oct 2015 07:28:00 GMT", now: now) == .zero)
        #expect(ServerWait.retryAfter("soon", now: now) == nil)
        // Parsed by hand: nonsense is nil, never a trap or a wrong date.
        for text in [
            "Wed, 32 Oct 2015 07:28:00 GMT", "Wed, 21 Foo 2015 07:28:00 GMT", "Wed, 21 Oct 2015 25:28:00 GMT",
            "Wed, 21 Oct 99999 07:28:00 GMT", "Wed, 21 Oct 2015 07:28 GMT", "Wed, 21 Oct 2015 07:28:00:00 GMT", ",,,", "",
        ] {
            #expect(ServerWait.retryAfter(text, now: now) == nil, "\(text)")
        }
        #expect(ServerWait.retryAfter("-5", now: now) == nil)
    }

    @Test func readsTheRateLimitFields() {
        #expect(ServerWait.rateLimitReset(#""default";r=0;t=30"#) == .seconds(30))
        #expect(ServerWait.rateLimitRemaining(#""default";r=0;t=30"#) == 0)
        #expect(ServerWait.rateLimitRemaining(#""default";r=7;t=30"#) == 7)
        let result = TransferResult(httpStatus: 429, headers: [("Retry-After", "3"), ("RateLimit", #""default";r=0;t=9"#)])
        #expect(ServerWait.requested(by: result, now: now) == .seconds(9))
        let old = TransferResult(httpStatus: 429, headers: [("RateLimit-Reset", "12")])
        #expect(ServerWait.requested(by: old, now: now) == .seconds(12))
    }
}

@Suite("RetryBudget")
struct RetryBudgetTests {
    @Test func theFloorAllowsAFewRetriesWhenTrafficIsLow() {
        var budget = RetryBudget(ratio: 0.2, minRetriesPerMinute: 3)
        budget.recordCall(nowMs: 0)
        let step1 = budget.tryAcquireRetry(nowMs: 1)
        #expect(step1)
        let step2 = budget.tryAcquireRetry(nowMs: 2)
        #expect(step2)
        let step3 = budget.tryAcquireRetry(nowMs: 3)
        #expect(step3)
        let step4 = budget.tryAcquireRetry(nowMs: 4)
        #expect(!step4)
        #expect(budget.exhaustedCount == 1)
    }

    @Test func theRatioScalesWithCalls() {
        var budget = RetryBudget(ratio: 0.2, minRetriesPerMinute: 3)
        for now in 0..<100 { budget.recordCall(nowMs: Int64(now)) }
        var granted = 0
        for now in 0..<50 {
            if budget.tryAcquireRetry(nowMs: Int64(100 + now)) { granted += 1 }
        }
        #expect(granted == 20)
    }

    @Test func retriesAgeOutAfterAMinute() {
        var budget = RetryBudget(ratio: 0, minRetriesPerMinute: 2)
        let step5 = budget.tryAcquireRetry(nowMs: 0)
        #expect(step5)
        let step6 = budget.tryAcquireRetry(nowMs: 15_000)
        #expect(step6)
        let step7 = budget.tryAcquireRetry(nowMs: 30_000)
        #expect(!step7)
        #expect(budget.remaining(nowMs: 30_000) == 0)
        let step8 = budget.tryAcquireRetry(nowMs: 65_000)
        #expect(step8)
        #expect(budget.remaining(nowMs: 65_000) == 0)
        #expect(budget.remaining(nowMs: 200_000) == 2)
    }

    @Test func theRemainingCountOfAHugeFloorFitsInAnInt() {
        // Int(Double(Int.max)) traps: the read-out clamps whatever the floor.
        let budget = RetryBudget(ratio: 1, minRetriesPerMinute: Int.max)
        #expect(budget.remaining(nowMs: 0) == 1_000_000_000_000_000)
    }
}

@Suite("TokenBucket")
struct TokenBucketTests {
    @Test func allowsABurstThenTheRate() {
        var bucket = TokenBucket(ratePerSecond: 2, burst: 3)
        let step9 = bucket.take(nowMs: 0)
        #expect(step9 == nil)
        let step10 = bucket.take(nowMs: 0)
        #expect(step10 == nil)
        let step11 = bucket.take(nowMs: 0)
        #expect(step11 == nil)
        let step12 = bucket.take(nowMs: 0)
        #expect(step12 == .milliseconds(500))
        let step13 = bucket.take(nowMs: 500)
        #expect(step13 == nil)
        let step14 = bucket.take(nowMs: 600)
        #expect(step14 == .milliseconds(400))
        let step15 = bucket.available(nowMs: 10_000)
        #expect(step15 == 3)
    }

    @Test func aSpentQuotaDrainsItUntilTheReset() {
        var bucket = TokenBucket(ratePerSecond: 5, burst: 10)
        bucket.drain(nowMs: 1_000, untilMs: 31_000)
        let step16 = bucket.available(nowMs: 1_000)
        #expect(step16 == 0)
        let step17 = bucket.take(nowMs: 20_000)
        #expect(step17 == .seconds(11))
        let step18 = bucket.take(nowMs: 31_000)
        #expect(step18 == .milliseconds(200))
        let step19 = bucket.take(nowMs: 31_200)
        #expect(step19 == nil)
    }
}

@Suite("Jitter")
struct JitterTests {
    /// The client's default source of jitter: every value in [0, 1), spread evenly (10,000 draws
    /// average within 0.05 of one half; the standard error is 0.003), and no value repeated.
    @Test func drawsAreInTheUnitIntervalAndSpreadEvenly() {
        let draws = (0..<10_000).map { _ in Jitter.next() }
        #expect(draws.allSatisfy { $0 >= 0 && $0 < 1 })
        #expect(abs(draws.reduce(0, +) / Double(draws.count) - 0.5) < 0.05)
        #expect(Set(draws).count == draws.count)
        #expect(draws.filter { $0 < 0.1 }.count > 500 && draws.filter { $0 >= 0.9 }.count > 500)
    }
}
