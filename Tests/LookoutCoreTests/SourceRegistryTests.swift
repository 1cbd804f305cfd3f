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

    /// A clock set before 1970 gives negative times: the minute rounds index from them too.
    @Test func resultsBefore1970AreRecorded() {
        let registry = SourceRegistry(sources: [SourceConfig(name: "a", url: "http://127.0.0.1/a"), SourceConfig(name: "b", url: "http://127.0.0.1/b")])
        registry.record(ProbeResult(source: "a", timestampMs: -90_000, ok: false, failure: Failure(category: .serverError, reason: "http_503")))
        registry.record(ProbeResult(source: "b", timestampMs: -90_000, ok: true))
        let snapshot = registry.snapshot(nowMs: -60_000)
        #expect(snapshot.records.map(\.last?.ok) == [false, true])
        #expect(snapshot.partialFailureRatio > 0)
    }

    /// A round counts sources, not probes: one flaky source alone is not a partial failure,
    /// one failing source beside a working one is, however often each was probed.
    @Test func partialFailureRoundsCountEachSourceOnceAMinute() {
        let registry = SourceRegistry(sources: [a, b])
        let minute = HealthWindow.minute
        let start: Int64 = 100 * minute
        registry.record(failed("a", at: start + 1_000))
        registry.record(ProbeResult(source: "a", timestampMs: start + 2_000, ok: true))
        registry.record(ProbeResult(source: "a", timestampMs: start + 3_000, ok: true))
        for second: Int64 in 1...3 {
            registry.record(failed("a", at: start + minute + second * 1_000))
            registry.record(ProbeResult(source: "b", timestampMs: start + minute + second * 1_000, ok: true))
        }
        #expect(registry.snapshot(nowMs: start + 2 * minute).partialFailureRatio == 0.5)
    }

    /// A result of an earlier minute recorded after a later one (a "probe now" overlapping a
    /// scheduled probe across a minute's end) counts in no round: counted as a failure but not as
    /// probed, it made a partial round look whole.
    @Test func aLateResultOfAnEarlierMinuteCountsInNoRound() {
        let c = SourceConfig(name: "c", url: "http://127.0.0.1/c")
        let registry = SourceRegistry(sources: [a, b, c])
        let minute = HealthWindow.minute
        let start: Int64 = 100 * minute
        registry.record(ProbeResult(source: "b", timestampMs: start + 10_000, ok: true))
        registry.record(failed("c", at: start + 20_000))
        registry.record(ProbeResult(source: "a", timestampMs: start + minute + 5_000, ok: true))  // the probe now
        registry.record(failed("a", at: start + 50_000))  // the scheduled one, started earlier
        // Minute 100: b up, c down (partial); minute 101: only a, up.
        #expect(registry.snapshot(nowMs: start + 2 * minute).partialFailureRatio == 0.5)
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

    /// A reload that changes settings only (followed in place) and one that reorders the sources
    /// (rebuilt) both keep what each source measured and take its new settings, and a snapshot
    /// taken before either still shows the old ones.
    @Test func aSourceKeepsItsRecordWhenOnlyItsSettingsOrPlaceChange() {
        let registry = SourceRegistry(sources: [a, b])
        let now: Int64 = 10 * HealthWindow.hour
        registry.record(failed("a", at: now))
        registry.record(ProbeResult(source: "b", timestampMs: now, ok: true))
        let before = registry.snapshot(nowMs: now)

        var moved = a
        moved.url = "http://127.0.0.1/moved?token=abc"
        #expect(registry.apply([moved, b]).isEmpty)
        var snapshot = registry.snapshot(nowMs: now)
        #expect(snapshot.names == ["a", "b"])
        #expect(snapshot.records.map(\.last?.ok) == [false, true])
        #expect(snapshot.records[0].source.url == moved.url)
        #expect(snapshot.records[0].displayURL == "http://127.0.0.1/moved?token=REDACTED")
        #expect(before.records[0].source.url == a.url)

        #expect(registry.apply([b, moved]).isEmpty)
        snapshot = registry.snapshot(nowMs: now)
        #expect(snapshot.names == ["b", "a"])
        #expect(snapshot.records.map(\.last?.ok) == [true, false])
        #expect(snapshot.records[1].displayURL == "http://127.0.0.1/moved?token=REDACTED")
    }

    @Test func eventsAndHistoryOfUnknownSourcesAreIgnored() {
        let registry = SourceRegistry(sources: [a])
        registry.handle(.retryBudgetExhausted(upstream: "gone"))
        registry.restore(source: "gone", atMs: 0, counts: BucketCounts(probes: 1), hourly: false)
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
        registry.restore(source: "a", atMs: now - 2 * HealthWindow.hour, counts: BucketCounts(probes: 4, failures: 1), hourly: true)
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

/// An outage is one incident: it names the upstream's own failure and since when, whatever the
/// breaker does meanwhile.
@Suite("incidents")
struct IncidentTests {
    let source = SourceConfig(name: "acme", url: "http://127.0.0.1/acme")

    func result(at ms: Int64, ok: Bool, _ failure: Failure? = nil, attemptSeconds: Double? = nil, duration: Double = 0) -> ProbeResult {
        var result = ProbeResult(source: "acme", timestampMs: ms, ok: ok, failure: failure, httpStatus: failure?.httpStatus ?? 200, durationSeconds: duration)
        result.attemptSeconds = attemptSeconds
        return result
    }

    @Test func anIncidentKeepsTheUpstreamCauseWhileTheBreakerRefusesCalls() {
        let registry = SourceRegistry(sources: [source])
        let busy = Failure(category: .serverError, reason: "http_503", httpStatus: 503, serverMessage: "maintenance until 10:00")
        registry.record(result(at: 1_000, ok: true))
        registry.record(result(at: 61_000, ok: false, busy))
        registry.record(result(at: 121_000, ok: false, busy))
        for at in stride(from: 181_000 as Int64, to: 600_000, by: 60_000) {
            registry.record(result(at: at, ok: false, Failure(category: .circuitOpen, reason: "circuit_open")))
        }
        let snapshot = registry.snapshot(nowMs: 601_000)
        let record = snapshot.records[0]
        let incident = try! #require(record.incident)
        #expect(incident.downSinceMs == 61_000)
        #expect(incident.failedProbes == 2)
        #expect(incident.cause.failure?.reason == "http_503")
        #expect(incident.cause.failure?.serverMessage == "maintenance until 10:00")
        #expect(record.last?.failure?.category == .serverError)
        // Refused calls are not samples: 3 probes, 2 failed; 7 refused calls counted apart.
        #expect(record.tally.successes + record.tally.failures == 3)
        #expect(record.heldBackCalls == 7)
        #expect(snapshot.summaries[0]?.counts(windowMs: HealthWindow.fifteenMinutes)?.probes == 3)
        // The alert annotations carry the cause and since when.
        let context = AlertEvaluator.Inputs(snapshot).context("acme")
        #expect(context?.message.contains("503") == true)
        #expect(context?.message.contains("circuit") == false)
        #expect(context?.downSinceMs == 61_000)

        registry.record(result(at: 661_000, ok: true))
        #expect(registry.snapshot(nowMs: 662_000).records[0].incident == nil)
    }

    @Test func latencyQuantilesAreTheUpstreamsResponseTimeNotTheRetries() {
        let registry = SourceRegistry(sources: [source])
        // A 503 answered in 1 ms, retried with 4 s of backoff: the call took 4 s, the upstream 1 ms.
        for at in 0..<10 { registry.record(result(at: Int64(at), ok: true, attemptSeconds: 0.001, duration: 4.001)) }
        let record = registry.snapshot().records[0]
        #expect(record.recentDurations.quantile(0.95) == 0.001)
        // The whole call has its own name; latency is the attempt's.
        #expect(record.tally.callSecondsSum > 40)
        #expect(record.tally.duration.sum < 0.02)
    }

    @Test func aBreakerRestoredOpenStillCountsAsTriedForReadiness() {
        let registry = SourceRegistry(sources: [source])
        #expect(!registry.everySourceProbed)
        registry.record(result(at: 1, ok: false, Failure(category: .circuitOpen, reason: "circuit_open")))
        #expect(registry.everySourceProbed)
        #expect(registry.snapshot().records[0].last == nil)
    }

    @Test func durationsReadLikeAStatusLine() {
        #expect(Timestamp.human(45_000) == "45s")
        #expect(Timestamp.human(4 * 60_000 + 59_000) == "4m")
        #expect(Timestamp.human(2 * 3_600_000 + 5 * 60_000) == "2h 5m")
        #expect(Timestamp.human(3 * 86_400_000 + 4 * 3_600_000) == "3d 4h")
        #expect(Timestamp.human(-5) == "0s")
        #expect(Timestamp.parseRFC3339(Timestamp.rfc3339(1_795_476_278_326)) == 1_795_476_278_326)
        #expect(Timestamp.parseRFC3339("2026-11-23T19:10:14Z") == 1_795_461_014_000)
        #expect(Timestamp.parseRFC3339("2026-13-23T19:10:14Z") == nil)
        #expect(Timestamp.parseRFC3339("yesterday") == nil)
        #expect(Timestamp.parseRFC3339("2026-11-23T20:10:14.5+01:00") == 1_795_461_014_500)
        #expect(Timestamp.parseRFC3339("2026-11-23T14:10:14-05:00") == 1_795_461_014_000)
        #expect(Timestamp.parseRFC3339("2026-11-23T19:10:14.123456789Z") == 1_795_461_014_123)
        #expect(Timestamp.parseRFC3339("2026-11-23T19:10:14.Z") == nil)
        #expect(Timestamp.parseRFC3339("2026-11-23T19:10:14+0100") == nil)
    }
}
