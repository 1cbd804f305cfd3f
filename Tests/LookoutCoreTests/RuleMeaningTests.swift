import LookoutCore
import ResilientHTTP
import Testing

/// The default rules read the registry through a manual clock: they mean what they say.
@Suite("rules that mean what they say")
struct RuleMeaningTests {
    let source = SourceConfig(name: "acme", url: "http://127.0.0.1/acme")
    let saved = PersistedBreaker(
        state: .open, consecutiveFailures: 3, consecutiveSuccesses: 0, openedAtMs: nil, nextAttemptAtMs: nil, openCount: 1, openTimeoutMs: 0)

    func rules(_ names: String...) -> AlertEvaluator {
        AlertEvaluator(rules: AlertRule.defaults.filter { names.contains($0.name) })
    }

    func transition(_ from: BreakerState, _ to: BreakerState, at ms: Int64) -> ClientEvent {
        .breakerTransition(upstream: "acme", BreakerTransition(from: from, to: to, atMs: ms, consecutiveFailures: 3, openTimeoutMs: 1000), state: saved)
    }

    @Test func aBreakerOpenForThreeSecondsBetweenEvaluationsFiresAndResolves() {
        let registry = SourceRegistry(sources: [source])
        var evaluator = rules("CircuitOpened")
        let start: Int64 = 1_000_000
        #expect(evaluator.evaluate(nowMs: start, AlertEvaluator.Inputs(registry.snapshot(nowMs: start))).isEmpty)
        // Opens and closes again between two evaluations, 15 s apart.
        registry.handle(transition(.closed, .open, at: start + 5_000))
        registry.handle(transition(.open, .halfOpen, at: start + 7_000))
        registry.handle(transition(.halfOpen, .closed, at: start + 8_000))
        var now = start + 15_000
        let fired = evaluator.evaluate(nowMs: now, AlertEvaluator.Inputs(registry.snapshot(nowMs: now)))
        #expect(fired.map(\.alert.rule) == ["CircuitOpened"])
        guard case .firing = fired.first else {
            Issue.record("did not fire")
            return
        }
        var resolved: [AlertChange] = []
        while resolved.isEmpty && now < start + 5 * 60_000 {
            now += 15_000
            resolved = evaluator.evaluate(nowMs: now, AlertEvaluator.Inputs(registry.snapshot(nowMs: now)))
        }
        guard case .resolved = resolved.first else {
            Issue.record("did not resolve")
            return
        }
        #expect(now <= start + 5_000 + 60_000 + 2 * 15_000)
    }

    @Test func threeOpeningsInFifteenMinutesAreFlapping() {
        let registry = SourceRegistry(sources: [source])
        var evaluator = rules("CircuitFlapping")
        let start: Int64 = 1_000_000
        for round in 0..<2 {
            let at = start + Int64(round) * 120_000
            registry.handle(transition(.closed, .open, at: at))
            registry.handle(transition(.halfOpen, .closed, at: at + 30_000))
        }
        // Half-open trials that fail again are the same opening, not flapping.
        registry.handle(transition(.halfOpen, .open, at: start + 300_000))
        var now = start + 301_000
        #expect(evaluator.evaluate(nowMs: now, AlertEvaluator.Inputs(registry.snapshot(nowMs: now))).isEmpty)
        registry.handle(transition(.closed, .open, at: start + 400_000))
        now = start + 401_000
        #expect(evaluator.evaluate(nowMs: now, AlertEvaluator.Inputs(registry.snapshot(nowMs: now))).map(\.alert.rule) == ["CircuitFlapping"])
    }

    @Test func aWindowedRuleWaitsUntilItsWindowIsCovered() {
        let registry = SourceRegistry(sources: [source])
        var evaluator = rules("SLOBurnRateFast", "SourceErrorRateCritical")
        let start: Int64 = 100 * HealthWindow.hour
        let failure = Failure(category: .serverError, reason: "http_503", httpStatus: 503)
        var fired: [(Int64, String)] = []
        var now = start
        while now <= start + 70 * 60_000 {
            registry.record(ProbeResult(source: "acme", timestampMs: now, ok: false, failure: failure, httpStatus: 503))
            for change in evaluator.evaluate(nowMs: now, AlertEvaluator.Inputs(registry.snapshot(nowMs: now))) {
                fired.append((now - start, change.alert.rule))
            }
            now += 15_000
        }
        // 15 s of history is not an hour: the fast burn alert waits for the hour to be covered;
        // the 2-minute error rate for its 2 minutes, then its `for` of 2 minutes.
        let critical: Int64? = fired.first { $0.1 == "SourceErrorRateCritical" }?.0
        let burn: Int64? = fired.first { $0.1 == "SLOBurnRateFast" }?.0
        #expect(critical == Int64(4 * 60_000))
        #expect(burn == Int64(60 * 60_000))
    }

    @Test func restoredHistoryCoversTheWindowAtOnce() {
        let registry = SourceRegistry(sources: [source])
        let now: Int64 = 100 * HealthWindow.hour
        registry.restore(source: "acme", atMs: now - 2 * HealthWindow.hour, counts: BucketCounts(probes: 100, failures: 100), hourly: true)
        registry.restore(source: "acme", atMs: now - 60_000, counts: BucketCounts(probes: 4, failures: 4), hourly: false)
        let lookup = AlertEvaluator.Inputs(registry.snapshot(nowMs: now)).source("acme")
        // Every probe failed: 100% errors burn a 99.9% budget 1,000 times too fast.
        #expect(abs((lookup(.burnRate, .seconds(3600)) ?? 0) - 1000) < 1e-6)
    }

    @Test func aRecoveryAfterRetriesBetweenEvaluationsIsSeen() {
        let registry = SourceRegistry(sources: [source])
        var evaluator = rules("RecoveredAfterRetries")
        let start: Int64 = 100 * HealthWindow.hour
        #expect(evaluator.evaluate(nowMs: start, AlertEvaluator.Inputs(registry.snapshot(nowMs: start))).isEmpty)
        // Recovered after two attempts, then a plain success before the next evaluation.
        registry.record(ProbeResult(source: "acme", timestampMs: start + 2_000, ok: true, attempts: 2))
        registry.record(ProbeResult(source: "acme", timestampMs: start + 7_000, ok: true))
        let fired = evaluator.evaluate(nowMs: start + 15_000, AlertEvaluator.Inputs(registry.snapshot(nowMs: start + 15_000)))
        #expect(fired.map(\.alert.rule) == ["RecoveredAfterRetries"])
    }
}
