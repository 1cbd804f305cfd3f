import Logging
import LookoutAlerting
import LookoutCore
import LookoutStore
import LookoutWeb
import ResilientHTTP
import Testing

/// After a stretch in which Lookout did not run, the page and the JSON API say so for a day, and
/// an alert that fired before it says how much of its duration nobody was looking.
@Suite("monitoring gap on the page")
struct MonitoringGapPageTests {
    let minute: Int64 = 60_000

    /// A page whose only source went down before a gap from 04:55 to 07:09 UTC on 25 Nov 2026.
    func context() throws -> (LookoutContext, gap: MonitoringGap) {
        let config = try ConfigLoader.parse(
            """
            defaults: {outage: {failure_threshold: 1}}
            sources: [{name: acme, url: "http://127.0.0.1:1/"}]
            alerts:
              rules: [{name: SourceDown, severity: critical, expr: up == 0}]
            """, file: "t.yml")
        let database = try LookoutDatabase(path: ":memory:")
        let gap = MonitoringGap(fromMs: Timestamp.parseRFC3339("2026-11-25T04:55:00Z")!, toMs: Timestamp.parseRFC3339("2026-11-25T07:09:00Z")!)
        // Before the gap: the source fails and its alert fires.
        let before = Monitor(config: config, configPath: nil, logger: Logger(label: "test"))
        before.start()
        let failedAt = gap.fromMs - 30 * minute
        before.registry.record(ProbeResult(source: "acme", timestampMs: failedAt, ok: false, failure: Failure(category: .timeout, reason: "response_timeout")))
        AlertService(monitor: before, store: AlertStore(database: database), logger: Logger(label: "test")).evaluate(nowMs: failedAt)
        // After it: a new process takes the firing alert back, and has not probed yet.
        let monitor = Monitor(config: config, configPath: nil, logger: Logger(label: "test"))
        monitor.start()
        var context = LookoutContext(monitor: monitor, database: database)
        let alerts = context.alerts
        try alerts.restore(nowMs: gap.toMs, after: gap)
        context.monitoringGap = gap
        return (context, gap)
    }

    @Test func thePageAndTheAPISayNothingWasProbedInTheGap() throws {
        let (context, gap) = try context()
        let now = gap.toMs + 5 * minute
        let html = StatusPage(context: context).render(nowMs: now)
        #expect(html.contains("Lookout was not running for 2h 14m (from <time datetime=\"2026-11-25T04:55:00.000Z\""))
        #expect(html.contains(">04:55 UTC</time> to <time"))
        #expect(html.contains(">07:09 UTC</time>): nothing was probed then"))
        // The alert began 30 minutes before the gap: 2h 49m, 2h 14m of them unwatched.
        #expect(html.contains(">2h 49m</time> (Lookout was not running for 2h 14m of it)"))
        // Not probed since the start: the line says what failed when the alert fired.
        #expect(html.contains("When it fired: “no complete answer arrived in time.”"))
        let json = String(decoding: StatusAPI(context: context).statusBytes(nowMs: now), as: UTF8.self)
        #expect(json.contains(#""monitoring_gap":{"from":"2026-11-25T04:55:00.000Z","to":"2026-11-25T07:09:00.000Z","seconds":8040}"#))
    }

    @Test func theGapIsToldForADayAndTheAlertKeepsItsShare() throws {
        let (context, gap) = try context()
        let now = gap.toMs + LookoutContext.gapShownMs
        let html = StatusPage(context: context).render(nowMs: now)
        #expect(!html.contains("nothing was probed then"))
        #expect(html.contains(">1d 2h</time> (Lookout was not running for 2h 14m of it)"))
        let json = String(decoding: StatusAPI(context: context).statusBytes(nowMs: now), as: UTF8.self)
        #expect(json.contains(#""monitoring_gap":null"#))
    }

    @Test func twoStopsInOneAlertAddUpAndAreStored() throws {
        let (context, gap) = try context()
        let database = context.database
        // Another stop of an hour, then another start.
        let second = MonitoringGap(fromMs: gap.toMs + 10 * minute, toMs: gap.toMs + 70 * minute)
        let alerts = AlertService(monitor: context.monitor, store: AlertStore(database: database), logger: Logger(label: "test"))
        try alerts.restore(nowMs: second.toMs, after: second)
        let stored = try AlertStore(database: database).firing()
        #expect(stored.map { $0.annotations[AlertService.notRunningAnnotation] } == ["\((gap.durationMs + second.durationMs) / 1000)"])
        #expect(alerts.firing.map(AlertService.notRunning) == ["3h 14m"])
        // A quick restart adds nothing.
        try AlertService(monitor: context.monitor, store: AlertStore(database: database), logger: Logger(label: "test")).restore(nowMs: second.toMs + minute)
        #expect(try AlertStore(database: database).firing().map(AlertService.notRunning) == ["3h 14m"])
    }

    @Test func aGapOverMidnightNamesTheDays() {
        let gap = MonitoringGap(fromMs: Timestamp.parseRFC3339("2026-11-24T22:55:00Z")!, toMs: Timestamp.parseRFC3339("2026-11-25T01:10:00Z")!)
        let note = StatusPage.gapNote(gap)
        #expect(note.contains(">24 Nov 2026 22:55 UTC</time> to <time"))
        #expect(note.contains(">25 Nov 2026 01:10 UTC</time>"))
    }
}
