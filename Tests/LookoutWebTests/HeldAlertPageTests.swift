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
        let config = try ConfigLoader.parse("""
            sources: [{name: acme, url: "http://127.0.0.1:1/"}]
            alerts:
              rules: [{name: SourceDown, severity: critical, expr: up == 0}]
            """, file: "t.yml")
        let monitor = Monitor(config: config, configPath: nil, logger: Logger(label: "test"))
        monitor.start()
        let database = try LookoutDatabase(path: ":memory:")
        let alerts = AlertService(monitor: monitor, store: AlertStore(database: database), logger: Logger(label: "test"))
        let now = Timestamp.nowMs()
        try alerts.addSilence(Silence(matchers: ["source": "acme"], startsAtMs: now - 1000, endsAtMs: now + 3_600_000, comment: "vendor says 2 h"))
        monitor.registry.record(ProbeResult(source: "acme", timestampMs: now, ok: false, failure: Failure(category: .timeout, reason: "response_timeout")))
        alerts.evaluate(nowMs: now)
        let context = LookoutContext(monitor: monitor, database: database, alerts: alerts)
        let html = StatusPage(context: context).render(nowMs: now)
        #expect(html.contains("<summary>Silenced (1)</summary>"))
        #expect(html.contains("silenced: vendor says 2 h"))
        // Still an open incident (the source is down), but its alert is not listed as paging.
        #expect(html.contains("<h2>Open incidents (1)</h2>"))
        #expect(html.contains(#"<span class="tag">down</span>"#))
        let json = String(decoding: StatusAPI(context: context).statusBytes(nowMs: now), as: UTF8.self)
        #expect(json.contains(#""alerts_firing":0"#))
    }
}
