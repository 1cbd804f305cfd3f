import Foundation
import GRDB
import Logging
import LookoutCore
import LookoutStore
import ResilientHTTP
import Testing

@testable import LookoutAlerting

/// One broken source is one notification: its critical alert carries the news, its warning and
/// info alerts are held back, and the resolution goes to whoever heard it fire.
@Suite("notification holds")
struct NotificationHoldTests {
    let logger = Logger(label: "test")

    func service(hooks: String, otherDependsOnAcme: Bool = false, extra: String = "") throws -> (Monitor, AlertService, LookoutDatabase) {
        let config = try ConfigLoader.parse(
            """
            \(extra)
            defaults: {outage: {failure_threshold: 1}}
            sources:
              - {name: acme, url: "http://127.0.0.1:1/acme"}
              - {name: other, url: "http://127.0.0.1:1/other"\(otherDependsOnAcme ? ", depends_on: [acme]" : "")}
            alerts:
              rules:
                - {name: SourceDown, severity: critical, expr: up == 0}
                - {name: SourceSlow, severity: warning, expr: up == 0}
                - {name: SourceNote, severity: info, expr: up == 0}
                - {name: OtherNote, severity: info, expr: up == 1}
              hooks:
            \(hooks)
            """, file: "test.yml", hooks: NotificationProviders.hookKinds)
        let monitor = Monitor(config: config, configPath: nil, logger: logger)
        monitor.start()
        let database = try LookoutDatabase(path: ":memory:")
        return (monitor, AlertService(monitor: monitor, store: AlertStore(database: database), logger: logger), database)
    }

    func outbox(_ database: LookoutDatabase) throws -> [(hook: String, status: String, alert: String)] {
        try database.writer.read { db in
            try Row.fetchAll(db, sql: "SELECT hook, payload FROM alert_outbox ORDER BY id").map { row in
                let payload = try JSONSerialization.jsonObject(with: Data((row["payload"] as String).utf8)) as? [String: Any]
                let alerts = payload?["alerts"] as? [[String: Any]]
                let labels = alerts?.first?["labels"] as? [String: String]
                return (row["hook"], payload?["status"] as? String ?? "", labels?["alertname"] ?? "")
            }
        }
    }

    @Test func aBrokenSourcePagesOnceAndResolvesOnce() throws {
        let (monitor, alerts, database) = try service(
            hooks: """
                    - {name: oncall, type: webhook, url: "http://127.0.0.1:1/hook", send_resolved: true, group_wait: 0s}
                    - {name: feed, type: webhook, url: "http://127.0.0.1:1/feed", severities: [info], send_resolved: true, group_wait: 0s}
                """)
        let now: Int64 = 1_000_000
        let failure = Failure(category: .serverError, reason: "http_503", httpStatus: 503, serverMessage: "busy")
        monitor.registry.record(ProbeResult(source: "acme", timestampMs: now, ok: false, failure: failure, httpStatus: 503))
        monitor.registry.record(ProbeResult(source: "other", timestampMs: now, ok: true))
        let fired = alerts.evaluate(nowMs: now)
        #expect(Set(fired.map(\.alert.rule)) == ["SourceDown", "SourceSlow", "SourceNote", "OtherNote"])
        // oncall (no severities: critical and warning) hears of the critical alone; the info
        // hook hears of the info alert of the source that is fine, not of the held-back one.
        let sent = try outbox(database)
        #expect(Set(sent.map { "\($0.hook) \($0.alert)" }) == ["oncall SourceDown", "feed OtherNote"])
        #expect(sent.count == 2)
        let holds = alerts.heldBack
        #expect(
            holds.values.map(\.reason).sorted() == [
                "held back by SourceDown, which is critical", "held back by SourceDown, which is critical",
            ])
        // Repeats do not send held-back alerts either.
        alerts.evaluate(nowMs: now + 15_000)
        #expect(try outbox(database).count == 2)
        // A restart knows the holds before its first evaluation.
        let restarted = AlertService(monitor: monitor, store: AlertStore(database: database), logger: logger)
        try restarted.restore(nowMs: now + 16_000)
        #expect(restarted.heldBack == holds)

        // Recovered: one resolved notification, to the hook that heard it fire.
        monitor.registry.record(ProbeResult(source: "acme", timestampMs: now + 20_000, ok: true))
        // The outage's end resolves its paging alerts at once; the info rule, a measurement,
        // after two clean evaluations.
        func resolvedRules(_ changes: [AlertChange]) -> Set<String> {
            Set(changes.compactMap { if case .resolved(let alert) = $0 { alert.rule } else { nil } })
        }
        #expect(resolvedRules(alerts.evaluate(nowMs: now + 30_000)) == ["SourceDown", "SourceSlow"])
        #expect(resolvedRules(alerts.evaluate(nowMs: now + 45_000)) == ["SourceNote"])
        let oncall = try outbox(database).filter { $0.hook == "oncall" }
        #expect(oncall.map(\.status) == ["firing", "resolved"])
        #expect(oncall.map(\.alert) == ["SourceDown", "SourceDown"])
        // The info hook never heard of acme's held-back info alert, so no resolution either
        // (it did hear of acme's own OtherNote, which fired once acme was up).
        #expect(try outbox(database).filter { $0.hook == "feed" && $0.status == "resolved" }.isEmpty)
    }

    @Test func aHeldAlertIsNotifiedOnceItsHoldEnds() throws {
        let (monitor, alerts, database) = try service(
            hooks: """
                    - {name: oncall, type: webhook, url: "http://127.0.0.1:1/hook", group_wait: 0s}
                """)
        let now: Int64 = 1_000_000
        try alerts.addSilence(Silence(matchers: ["alertname": "SourceDown"], startsAtMs: 0, endsAtMs: now + 20_000, comment: "deploy"))
        monitor.registry.record(ProbeResult(source: "acme", timestampMs: now, ok: false, failure: Failure(category: .timeout, reason: "response_timeout")))
        alerts.evaluate(nowMs: now)
        // Silenced: nothing sent; the warning is held back by the (silenced) critical alert.
        #expect(try outbox(database).isEmpty)
        #expect(alerts.heldBack.values.contains { $0.silenced && $0.reason == "silenced: deploy" })
        // The silence ends: the critical alert goes out at the next evaluation, once.
        #expect(alerts.keptSilences == 1)
        alerts.evaluate(nowMs: now + 30_000)
        alerts.evaluate(nowMs: now + 45_000)
        #expect(try outbox(database).map(\.alert) == ["SourceDown"])
        // The ended silence is let go an hour after its end, not filtered out again at every
        // evaluation until a restart.
        #expect(alerts.keptSilences == 1)
        alerts.evaluate(nowMs: now + 20_000 + HealthWindow.hour)
        #expect(alerts.keptSilences == 0)
    }

    /// A wall clock that jumps forward past a silence's end (by less than the hour an ended
    /// silence is kept) and comes back finds the silence still in force.
    @Test func aSilenceOutlivesAClockThatJumpsForwardAndBack() throws {
        let (monitor, alerts, database) = try service(
            hooks: """
                    - {name: oncall, type: webhook, url: "http://127.0.0.1:1/hook", group_wait: 0s}
                """)
        let now: Int64 = 1_000_000
        try alerts.addSilence(Silence(matchers: ["alertname": "SourceDown"], startsAtMs: 0, endsAtMs: now + 2 * HealthWindow.hour, comment: "deploy"))
        monitor.registry.record(ProbeResult(source: "acme", timestampMs: now, ok: false, failure: Failure(category: .timeout, reason: "response_timeout")))
        alerts.evaluate(nowMs: now)
        #expect(alerts.heldBack.values.contains { $0.silenced })
        // Past the silence's end the alert goes out (it fires, nothing holds it)...
        alerts.evaluate(nowMs: now + 2 * HealthWindow.hour + 30 * 60_000)
        #expect(!alerts.heldBack.values.contains { $0.silenced })
        #expect(try outbox(database).map(\.alert) == ["SourceDown"])
        // ...and once the clock is back, the silence holds it again.
        alerts.evaluate(nowMs: now + 10_000)
        #expect(alerts.heldBack.values.contains { $0.silenced && $0.reason == "silenced: deploy" })
        #expect(alerts.keptSilences == 1)
    }

    @Test func aSourceWhoseParentIsDownWaits() throws {
        let (monitor, alerts, database) = try service(
            hooks: """
                    - {name: oncall, type: webhook, url: "http://127.0.0.1:1/hook", send_resolved: true, group_wait: 0s}
                """, otherDependsOnAcme: true)
        let now: Int64 = 1_000_000
        let refused = Failure(category: .transient, reason: "connection_refused")
        for source in ["acme", "other"] {
            monitor.registry.record(ProbeResult(source: source, timestampMs: now, ok: false, failure: refused))
        }
        alerts.evaluate(nowMs: now)
        // acme pages; other's failure is acme's, so it waits, and the page says why.
        let sent = try outbox(database)
        #expect(sent.count == 1)
        #expect(alerts.firing.filter { $0.rule == "SourceDown" }.count == 2)
        #expect(alerts.heldBack.values.contains { $0.reason == "blocked by acme, which is down" })
        let snapshot = monitor.snapshot(nowMs: now)
        #expect(snapshot.blockedBy(1) == ["acme"])
        #expect(snapshot.blockedBy(0) == [])

        // acme comes back while other stays down: other's own alert is notified now.
        monitor.registry.record(ProbeResult(source: "acme", timestampMs: now + 10_000, ok: true))
        alerts.evaluate(nowMs: now + 15_000)
        let after = try outbox(database).filter { $0.status == "firing" && $0.alert == "SourceDown" }
        #expect(after.count == 2)
    }

    @Test func maintenanceHoldsBackItsSourcesUntilItEnds() throws {
        let (monitor, alerts, database) = try service(
            hooks: """
                    - {name: oncall, type: webhook, url: "http://127.0.0.1:1/hook", group_wait: 0s}
                """,
            extra: """
                maintenance:
                  - {name: upgrade, sources: [acme], start: "1970-01-01T00:00:00Z", end: "1970-01-01T01:00:00Z", note: "vendor upgrade"}
                """)
        let now: Int64 = 1_000_000
        monitor.registry.record(ProbeResult(source: "acme", timestampMs: now, ok: false, failure: Failure(category: .serverError, reason: "http_503")))
        alerts.evaluate(nowMs: now)
        #expect(try outbox(database).isEmpty)
        #expect(alerts.heldBack.values.contains { $0.reason == "maintenance until 1970-01-01T01:00:00.000Z: vendor upgrade" })
        #expect(monitor.snapshot(nowMs: now).maintenance["acme"]?.note == "vendor upgrade")
        // Past its end, the alert that is still firing is notified.
        alerts.evaluate(nowMs: 3_600_000)
        #expect(try outbox(database).map(\.alert) == ["SourceDown"])
    }
}
