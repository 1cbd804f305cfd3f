import LookoutCore
import ResilientHTTP
import Testing

/// The registry keeps every per-source piece in one record, so a reload cannot leave one behind.
@Suite("SourceRegistry records")
struct SourceRegistryTests {
    let a = SourceConfig(name: "a", url: "http://127.0.0.1/a")
    let b = SourceConfig(name: "b", url: "http://127.0.0.1/b")
    let failure = Failure(category: .serverError, reason: "http_503", httpStatus: 503)

    func failed(_ source: String, at ms: Int64) -> ProbeResult {
        ProbeResult(source: source, timestampMs: ms, ok: false, failure: failure, httpStatus: 503)
    }

    @Test func aRemovedSourceTakesEveryPieceWithIt() {
        let registry = SourceRegistry(sources: [a, b])
        let now: Int64 = 10 * HealthWindow.hour
        registry.record(failed("b", at: now))
        registry.handle(.retryBudgetExhausted(upstream: "b"))
        registry.updateDownload("b", DownloadProgress())
        #expect(registry.apply([a]) == ["b"])
        #expect(registry.snapshot(nowMs: now).names == ["a"])

        // Back again: it starts empty — no counter, ring or result survived in another registry.
        registry.apply([a, b])
        let snapshot = registry.snapshot(nowMs: now, names: ["b"])
        #expect(snapshot.records[0].last == nil)
        #expect(snapshot.records[0].download == nil)
        #expect(snapshot.records[0].client == SourceRecord.ClientCounters())
        #expect(snapshot.summaries[0] == nil)
    }

    @Test func eventsAndHistoryOfUnknownSourcesAreIgnored() {
        let registry = SourceRegistry(sources: [a])
        registry.handle(.retryBudgetExhausted(upstream: "gone"))
        registry.restore(source: "gone", atMs: 0, counts: BucketRing.Counts(probes: 1), hourly: false)
        registry.record(failed("gone", at: 0))
        #expect(registry.snapshot().names == ["a"])
        #expect(registry.snapshot().summaries == [nil])
    }

    @Test func clientEventsCountOnTheSourcesRecord() {
        let registry = SourceRegistry(sources: [a, b])
        registry.handle(.retryScheduled(upstream: "a", afterAttempt: 1, category: .serverError, wait: .seconds(1)))
        registry.handle(.attemptFinished(upstream: "a", AttemptRecord(number: 1, startedAtMs: 0, failure: failure, httpStatus: 503, durationSeconds: 0.1)))
        registry.handle(.tokenRefreshed(upstream: "b", succeeded: false))
        let snapshot = registry.snapshot()
        #expect(snapshot.records[0].client.retries == [.serverError: 1])
        #expect(snapshot.records[0].client.errors == ["server_error/http_503": 1])
        #expect(snapshot.records[1].client.tokenRefreshes == 1)
        #expect(snapshot.records[1].client.tokenRefreshFailures == 1)
    }

    @Test func aSnapshotDoesNotChangeWhileProbesGoOn() {
        let registry = SourceRegistry(sources: [a])
        let now: Int64 = 10 * HealthWindow.hour
        registry.record(ProbeResult(source: "a", timestampMs: now, ok: true, httpStatus: 200))
        let before = registry.snapshot(nowMs: now)
        registry.record(failed("a", at: now))
        #expect(before.records[0].last?.ok == true)
        #expect(before.records[0].tally.failures == 0)
        #expect(before.summaries[0]?.errorRate(windowMs: HealthWindow.minute) == 0)
        let after = registry.snapshot(nowMs: now)
        #expect(after.records[0].tally.failures == 1)
        #expect(after.summaries[0]?.errorRate(windowMs: HealthWindow.minute) == 0.5)
    }

    @Test func restoredHistoryCountsInTheSummaries() {
        let registry = SourceRegistry(sources: [a])
        let now: Int64 = 100 * HealthWindow.day
        registry.restore(source: "a", atMs: now - 2 * HealthWindow.hour, counts: BucketRing.Counts(probes: 4, failures: 1), hourly: true)
        let summary = registry.snapshot(nowMs: now).summaries[0]
        #expect(summary?.availability(windowMs: HealthWindow.day) == 0.75)
        #expect(summary?.errorRate(windowMs: HealthWindow.hour) == nil)
    }

    @Test func overallStatusFollowsTheLastResults() {
        let registry = SourceRegistry(sources: [a, b])
        #expect(registry.snapshot().overall == "pending")
        registry.record(ProbeResult(source: "a", timestampMs: 1, ok: true))
        #expect(registry.snapshot().overall == "operational")
        registry.record(failed("b", at: 1))
        #expect(registry.snapshot().overall == "degraded")
        registry.record(failed("a", at: 2))
        #expect(registry.snapshot().overall == "outage")
    }
}
