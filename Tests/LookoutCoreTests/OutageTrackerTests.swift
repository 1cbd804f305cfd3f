import LookoutCore
import ResilientHTTP
import Synchronization
import Testing

/// When failed probes become an outage people are told of, and when it ends: the outage policy
/// driven probe by probe, and read from a config.
@Suite("outage policy")
struct OutageTrackerTests {
    /// Feeds `pattern` ("x" failed, "." passed) one probe every 5 s; returns the changes by probe.
    func run(_ pattern: String, _ policy: OutagePolicy, tracker: inout OutageTracker) -> [Int: OutageTracker.Change] {
        var changes: [Int: OutageTracker.Change] = [:]
        for (index, outcome) in pattern.enumerated() {
            if let change = tracker.record(ok: outcome == ".", atMs: Int64(index) * 5_000, policy: policy) { changes[index] = change }
        }
        return changes
    }

    @Test func twoFailedProbesInARowOpenItAndOneSuccessEndsIt() {
        var tracker = OutageTracker()
        let policy = OutagePolicy()
        // Single failures tell nobody.
        #expect(run(".x.x.x.", policy, tracker: &tracker).isEmpty)
        #expect(!tracker.down)
        // The second failure in a row opens it, counted from the first.
        var fresh = OutageTracker()
        #expect(run("..xxx.", policy, tracker: &fresh) == [3: .opened(sinceMs: 10_000), 5: .closed(sinceMs: 10_000, upAtMs: 25_000, failedProbes: 3)])
    }

    @Test func aThresholdOfOneOpensAtTheFirstFailure() {
        var tracker = OutageTracker()
        var policy = OutagePolicy()
        policy.failureThreshold = 1
        #expect(run(".x.", policy, tracker: &tracker) == [1: .opened(sinceMs: 5_000), 2: .closed(sinceMs: 5_000, upAtMs: 10_000, failedProbes: 1)])
    }

    @Test func aFlappingSourceOpensByItsWindowAndEndsAfterItsSuccesses() {
        var policy = OutagePolicy()
        policy.failureThreshold = 5
        policy.windowFailures = 3
        policy.windowProbes = 10
        policy.successThreshold = 3
        var tracker = OutageTracker()
        // The third failure of the last ten opens it; three successes in a row end it, two do
        // not. For an SLA it ends at the first success of those three (probe 8, at 40 s), and
        // counts the window's three failures and the one after.
        let changes = run("x.x.x..x...", policy, tracker: &tracker)
        #expect(changes == [4: .opened(sinceMs: 20_000), 10: .closed(sinceMs: 20_000, upAtMs: 40_000, failedProbes: 4)])
        // Failures spread wider than the window never open it.
        var sparse = OutageTracker()
        #expect(run("x....x.....x.....x", policy, tracker: &sparse).isEmpty)
    }

    @Test func aWindowOfSixtyFourProbesCountsAllOfThem() {
        var policy = OutagePolicy()
        policy.failureThreshold = 64
        policy.windowFailures = 64
        policy.windowProbes = 64
        var tracker = OutageTracker()
        #expect(run(String(repeating: "x", count: 63), policy, tracker: &tracker).isEmpty)
        #expect(tracker.record(ok: false, atMs: 1_000_000, policy: policy) == .opened(sinceMs: 0))
    }

    @Test func theConfigSetsItPerSourceAndInDefaults() throws {
        let config = try ConfigLoader.parse(
            """
            defaults: {outage: {failure_threshold: 3, window: {failures: 4, probes: 10}}}
            sources:
              - {name: a, url: "http://127.0.0.1:1/a"}
              - {name: b, url: "http://127.0.0.1:1/b", outage: {success_threshold: 2, window: off}, max_retry_after: 10m}
            """, file: "t.yml")
        #expect(config.sources[0].outage.failureThreshold == 3)
        #expect(config.sources[0].outage.windowFailures == 4 && config.sources[0].outage.windowProbes == 10)
        #expect(config.sources[0].maxServerWait == .seconds(3600))
        #expect(config.sources[1].outage.failureThreshold == 3 && config.sources[1].outage.successThreshold == 2)
        #expect(config.sources[1].outage.windowFailures == nil)
        #expect(config.sources[1].maxServerWait == .seconds(600))
    }

    @Test(arguments: [
        ("outage: {failure_threshold: 0}", #"sources[0].outage.failure_threshold: "0" must be a whole number from 1 to 64"#),
        ("outage: {failure_threshold: 65}", #"sources[0].outage.failure_threshold: "65" must be a whole number from 1 to 64"#),
        ("outage: {success_threshold: -1}", #"sources[0].outage.success_threshold: "-1" must be a whole number from 1 to 64"#),
        (
            "outage: {failure_threshold: 99999999999999999999999}",
            #"sources[0].outage.failure_threshold: "99999999999999999999999" must be a whole number from 1 to 64"#
        ),
        ("outage: {window: {failures: 5, probes: 3}}", #"sources[0].outage.window.failures: 5 is more than the 3 probes of the window"#),
        ("outage: {window: {failures: 5}}", #"sources[0].outage.window: needs both failures and probes, e.g. {failures: 3, probes: 10}"#),
        ("outage: {threshold: 2}", #"sources[0].outage.threshold: unknown key "threshold""#),
        ("max_retry_after: 2d", #"sources[0].max_retry_after: 2d is too long (at most 1d): an upstream could silence its own source"#),
    ])
    func badValuesAreClearErrors(text: String, expected: String) {
        let yaml = "sources:\n  -\n    {name: a, url: \"http://127.0.0.1:1/a\", \(text)}\n"
        let error = #expect(throws: ConfigError.self) { try ConfigLoader.parse(yaml, file: "t.yml") }
        // Every problem is on line 3, where the source is.
        #expect(error?.problems.map(\.line) == [3])
        #expect(error?.problems.map { "\($0.path): \($0.message)" } == [expected])
    }
}

/// The registry tells when a source goes down or comes back up (the alert service evaluates at
/// once then), and only then.
@Suite("outage changes from the registry")
struct OutageChangeListenerTests {
    @Test func theListenerHearsEachFlipOnce() {
        let registry = SourceRegistry(sources: [SourceConfig(name: "acme", url: "http://127.0.0.1:1/")])
        let flips = Locked(0)
        registry.onDownChange { flips.add() }
        let failure = Failure(category: .serverError, reason: "http_503", httpStatus: 503)
        for (index, ok) in [true, false, true, false, false, false, true, true].enumerated() {
            registry.record(ProbeResult(source: "acme", timestampMs: Int64(index) * 1000, ok: ok, failure: ok ? nil : failure))
        }
        // Down at the second failure in a row, up at the next success: two flips.
        #expect(flips.value == 2)
    }

    final class Locked: Sendable {
        private let count: Mutex<Int>
        init(_ value: Int) { count = Mutex(value) }
        func add() { count.withLock { $0 += 1 } }
        var value: Int { count.withLock { $0 } }
    }
}
