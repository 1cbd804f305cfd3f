import Logging
import LookoutAlerting
import LookoutCore
import LookoutStore
import LookoutWeb
import ResilientHTTP
import Testing

/// The page says why an alert is not notified: a silenced one is listed as silenced, not firing.
@Suite("held alerts on the page")
struct HeldAlertPageTests {
    @Test func aSilencedAlertShowsAsSilencedWithItsComment() throws {
        let config = try ConfigLoader.parse(
            """
            defaults: {outage: {failure_threshold: 1}}
            sources: [{name: acme, url: "http://127.0.0.1:1/"}]
            alerts:
              rules: [{name: SourceDown, severity: critical, expr: up == 0}]
            """, file: "t.yml")
        let monitor = Monitor(config: config, configPath: nil, logger: Logger(label: "test"))
        monitor.start()
        let database = try LookoutDatabase(path: ":memory:")
        let context = LookoutContext(monitor: monitor, database: database)
        let alerts = context.alerts
        let now = Timestamp.nowMs()
        try alerts.addSilence(Silence(matchers: ["source": "acme"], startsAtMs: now - 1000, endsAtMs: now + 3_600_000, comment: "vendor says 2 h"))
        monitor.registry.record(ProbeResult(source: "acme", timestampMs: now, ok: false, failure: Failure(category: .timeout, reason: "response_timeout")))
        alerts.evaluate(nowMs: now)
        let html = StatusPage(context: context).render(nowMs: now)
        #expect(html.contains("<summary>Silenced (1)</summary>"))
        #expect(html.contains("silenced: vendor says 2 h"))
        // Still an open incident (the source is down), but its alert is not listed as paging.
        #expect(html.contains("<h2>Open incidents (1)</h2>"))
        #expect(html.contains(#"<span class="tag">down</span>"#))
        let json = String(decoding: StatusAPI(context: context).statusBytes(nowMs: now), as: UTF8.self)
        #expect(json.contains(#""alerts_firing":0"#))
    }

    /// A down source whose only alert is informational (its breaker opened; the error-rate rules
    /// wait minutes) is an open incident, not folded away among the info alerts.
    @Test func aDownSourceWithOnlyAnInfoAlertIsAnOpenIncident() throws {
        let config = try ConfigLoader.parse(
            """
            sources: [{name: acme, url: "http://127.0.0.1:1/"}, {name: other, url: "http://127.0.0.1:1/"}]
            alerts:
              rules: [{name: Note, severity: info, expr: up == 0}, {name: AlwaysNote, severity: info, expr: up == 1}]
            """, file: "t.yml")
        let monitor = Monitor(config: config, configPath: nil, logger: Logger(label: "test"))
        monitor.start()
        let database = try LookoutDatabase(path: ":memory:")
        let context = LookoutContext(monitor: monitor, database: database)
        let alerts = context.alerts
        let now = Timestamp.nowMs()
        monitor.registry.record(ProbeResult(source: "acme", timestampMs: now, ok: false, failure: Failure(category: .timeout, reason: "response_timeout")))
        monitor.registry.record(ProbeResult(source: "other", timestampMs: now, ok: true))
        alerts.evaluate(nowMs: now)
        let html = StatusPage(context: context).render(nowMs: now)
        #expect(html.contains("<h2>Open incidents (1)</h2>"))
        #expect(html.contains(#"<li class="incident sev-down" data-source="acme">"#))
        #expect(html.contains(#"<span class="tag">down</span>"#))
        // A source that works and has only an info alert stays folded away.
        #expect(html.contains("<summary>1 working source with alerts</summary>"))
        #expect(html.contains(#"<li class="incident sev-info" data-source="other">"#))
    }
}
