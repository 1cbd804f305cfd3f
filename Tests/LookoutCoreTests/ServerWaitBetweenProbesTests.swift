import Foundation
import LookoutCore
import ResilientHTTP
import Testing

/// A source told to wait (Retry-After, a RateLimit reset) is not probed before that time, within
/// `max_retry_after`; hostile values are clamped, never trusted or trapped on.
@Suite("server waits between probes")
struct ServerWaitBetweenProbesTests {
    /// A failed call at 1,000 s whose final answer carried `headers`.
    func result(status: Int, _ headers: [(name: String, value: String)]) -> ProbeResult {
        let failure = Failure(category: status == 429 ? .rateLimited : .serverError, reason: "http_\(status)", httpStatus: status)
        let final = TransferResult(httpStatus: status, headers: headers, totalSeconds: 0.01)
        let outcome = CallOutcome(
            upstream: "acme", url: "http://127.0.0.1/", startedAtMs: 1_000_000, final: final, failure: failure,
            attempts: [AttemptRecord(number: 1, startedAtMs: 1_000_000, failure: failure, httpStatus: status, durationSeconds: 0.01)],
            durationSeconds: 0.5, upgradedToHTTPS: false, gaveUp: nil, cancelled: false, breaker: nil)
        return ProbeResult(outcome: outcome, source: "acme")
    }

    @Test func aRetryAfterOrARateLimitResetIsKeptWithTheResult() {
        let ended: Int64 = 1_000_500
        #expect(result(status: 429, [("Retry-After", "30")]).serverWaitUntilMs.map { $0 - ended } == 30_000)
        #expect(result(status: 503, [("Retry-After", "120")]).serverWaitUntilMs.map { $0 - ended } == 120_000)
        #expect(result(status: 429, [("RateLimit", #""default";r=0;t=45"#)]).serverWaitUntilMs.map { $0 - ended } == 45_000)
        // The latency is the attempt's; the call's half second of waits is not.
        #expect(result(status: 429, []).attemptSeconds == 0.01)
        #expect(result(status: 429, []).serverWaitUntilMs == nil)
    }

    @Test(arguments: ["-5", "0", "soon", "99999999999999999999999", "1e308", "Wed, 21 Oct 2015 07:28:00 GMT", "Fri, 31 Dec 9999 23:59:59 GMT"])
    func hostileValuesNeverTrap(_ value: String) {
        let wait = result(status: 429, [("Retry-After", value)]).serverWaitUntilMs
        // Whatever was asked, the scheduler keeps it within max_retry_after of now, or drops it.
        let now: Int64 = 1_000_600
        if let wait, let kept = ProbeScheduler.serverWait(untilMs: wait, nowMs: now, atMost: .seconds(3600)) {
            #expect(kept > now && kept <= now + 3_600_000, "\(value): \(kept)")
        }
    }

    @Test func theSchedulerKeepsAWaitWithinItsCapAndDropsOneInThePast() {
        let now: Int64 = 5_000_000
        #expect(ProbeScheduler.serverWait(untilMs: now + 30_000, nowMs: now, atMost: .seconds(3600)) == now + 30_000)
        #expect(ProbeScheduler.serverWait(untilMs: now + 86_400_000, nowMs: now, atMost: .seconds(3600)) == now + 3_600_000)
        #expect(ProbeScheduler.serverWait(untilMs: .max, nowMs: now, atMost: .seconds(600)) == now + 600_000)
        #expect(ProbeScheduler.serverWait(untilMs: now - 1, nowMs: now, atMost: .seconds(3600)) == nil)
        #expect(ProbeScheduler.serverWait(untilMs: now + 10_000, nowMs: now, atMost: .zero) == nil)
    }

    @Test func aRefusedConnectionHasNoLatency() {
        let failure = Failure(category: .transient, reason: "connection_refused")
        let outcome = CallOutcome(
            upstream: "acme", url: "http://127.0.0.1:1/", startedAtMs: 0, final: TransferResult(curlCode: 7, totalSeconds: 0.0002), failure: failure,
            attempts: [AttemptRecord(number: 1, startedAtMs: 0, failure: failure, httpStatus: nil, durationSeconds: 0.0002)],
            durationSeconds: 3.2, upgradedToHTTPS: false, gaveUp: nil, cancelled: false, breaker: nil)
        #expect(ProbeResult(outcome: outcome, source: "acme").attemptSeconds == nil)
    }
}
