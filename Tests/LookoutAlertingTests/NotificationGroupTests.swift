import Foundation
import LookoutCore
import Testing

@testable import LookoutAlerting

/// Webhook notifications grouped like Alertmanager's routes, driven by a manual clock.
@Suite("notification groups")
struct NotificationGroupTests {
    let hooks = try! ConfigLoader.parse(
        """
        sources: [{name: acme, url: "http://127.0.0.1:1/"}]
        alerts:
          hooks:
            - {name: oncall, type: webhook, url: "http://127.0.0.1:1/hook", group_wait: 30s, group_interval: 5m, repeat_interval: 4h}
        """, file: "t.yml", hooks: NotificationProviders.hookKinds
    ).hooks

    func alert(_ rule: String, source: String = "acme", at ms: Int64, id: Int64) -> Alert {
        Alert(
            fingerprint: "\(rule)/\(source)", rule: rule, source: source, severity: "critical",
            labels: ["alertname": rule, "severity": "critical", "source": source], annotations: [:], startedAtMs: ms, resolvedAtMs: nil, id: id)
    }

    /// A group_wait shorter than the evaluation interval is kept: the loop wakes when the
    /// group comes due (a group_wait of 5 s acted as 15 s).
    @Test func theLoopWakesWhenAGroupComesDue() {
        var groups = NotificationGroups()
        #expect(groups.earliestDueMs(hooks: hooks) == nil)
        #expect(AlertService.nextWait(interval: .seconds(15), groupDueMs: nil, nowMs: 0) == .seconds(15))
        groups = groups.plan(hooks: hooks, firing: [alert("SourceDown", at: 0, id: 1)], held: [], resolved: [:], nowMs: 1_000).next
        #expect(groups.earliestDueMs(hooks: hooks) == 31_000)  // group_wait: 30s
        #expect(AlertService.nextWait(interval: .seconds(60), groupDueMs: 31_000, nowMs: 6_000) == .seconds(25))
        #expect(AlertService.nextWait(interval: .seconds(15), groupDueMs: 31_000, nowMs: 6_000) == .seconds(15))
        // Told of: its group_interval (5m) is next.
        groups = groups.plan(hooks: hooks, firing: [alert("SourceDown", at: 0, id: 1)], held: [], resolved: [:], nowMs: 31_000).next
        #expect(groups.earliestDueMs(hooks: hooks) == 331_000)
        // Past due (a notification the database refused): a second, not a tight loop.
        #expect(AlertService.nextWait(interval: .seconds(15), groupDueMs: 31_000, nowMs: 40_000) == .seconds(1))
        #expect(AlertService.nextWait(interval: .seconds(15), groupDueMs: .max, nowMs: .min) == .seconds(15))
    }

    @Test func rulesFiringTogetherAreOneNotificationAndALaterOneSendsNoSecondDown() {
        var groups = NotificationGroups()
        var firing = [alert("SourceErrorRateCritical", at: 0, id: 1)]
        func step(_ now: Int64, resolved: [String: Alert] = [:]) -> [NotificationGroups.Send] {
            let (sends, next) = groups.plan(hooks: hooks, firing: firing, held: [], resolved: resolved, nowMs: now)
            groups = next
            return sends
        }
        #expect(step(0).isEmpty)  // group_wait: more may come
        firing.append(alert("SLOBurnRateFast", at: 15_000, id: 2))
        #expect(step(15_000).isEmpty)
        let first = step(30_000)
        #expect(first.count == 1)
        #expect(first.first?.alerts.map(\.rule) == ["SourceErrorRateCritical", "SLOBurnRateFast"])
        #expect(first.first?.groupLabels == ["source": "acme"])
        // Another source is its own group.
        firing.append(alert("SourceErrorRateCritical", source: "other", at: 45_000, id: 3))
        #expect(step(45_000).isEmpty)
        #expect(step(75_000).map(\.groupLabels) == [["source": "other"]])
        // A rule joining acme's outage is not a new "down": nothing is sent for it, however
        // long; the next repeat names it.
        firing.append(alert("CircuitFlapping", at: 60_000, id: 4))
        #expect(step(90_000).isEmpty)
        #expect(step(330_000).isEmpty)
        #expect(step(600_000).isEmpty)
        let repeats = step(30_000 + 4 * 3_600_000)
        #expect(repeats.map(\.groupLabels) == [["source": "acme"]])
        #expect(repeats.first?.alerts.count == 3)
        #expect(step(75_000 + 4 * 3_600_000).map(\.groupLabels) == [["source": "other"]])
        // Resolved once, when its last alert resolves.
        let resolvedOne = firing.removeFirst()
        #expect(step(15_000_000, resolved: [resolvedOne.fingerprint: resolvedOne]).filter { $0.status == "resolved" }.isEmpty)
        firing.removeAll { $0.source == "acme" }
        let done = step(15_015_000)
        #expect(done.map(\.status) == ["resolved"])
        #expect(done.first?.alerts.allSatisfy { $0.resolvedAtMs != nil } == true)
        #expect(step(15_030_000).filter { $0.status == "resolved" }.isEmpty)
    }

    @Test func aCriticalHandingOverToAWarningIsOneStory() {
        var groups = NotificationGroups()
        let critical = alert("SourceErrorRateCritical", at: 0, id: 1)
        var warning = alert("SourceErrorRateHigh", at: 100_000, id: 2)
        warning.severity = "warning"
        var firing = [critical]
        func step(_ now: Int64, resolved: [String: Alert] = [:]) -> [NotificationGroups.Send] {
            let (sends, next) = groups.plan(hooks: hooks, firing: firing, held: [], resolved: resolved, nowMs: now)
            groups = next
            return sends
        }
        _ = step(0)
        #expect(step(30_000).map(\.status) == ["firing"])
        // The critical alert resolves while the warning fires: no resolution of its own, no
        // second "down", at any time up to the repeat.
        firing = [warning]
        for now in stride(from: 120_000 as Int64, through: 3_600_000, by: 15_000) {
            #expect(step(now, resolved: now == 120_000 ? [critical.fingerprint: critical] : [:]).isEmpty)
        }
        // The outage ends: one resolution naming both.
        firing = []
        let done = step(3_615_000, resolved: [warning.fingerprint: warning])
        #expect(done.map(\.status) == ["resolved"])
        #expect(Set(done.first?.alerts.map(\.rule) ?? []) == ["SourceErrorRateCritical", "SourceErrorRateHigh"])
        #expect(step(3_630_000).isEmpty)
    }

    /// A budget spent while the source is down is news of its own (told after group_wait, not at
    /// the repeat), and the outage's recovery is still told while the budget alert fires on.
    @Test func anAlertAboutSomethingElseIsAStoryOfItsOwn() {
        var groups = NotificationGroups()
        let down = alert("SourceDown", at: 0, id: 1)
        var budget = alert("SLABudgetExhausted", at: 60_000, id: 2)
        budget.severity = "warning"
        budget.annotations[Alert.notAnOutage] = "false"
        var firing = [down]
        func step(_ now: Int64, resolved: [String: Alert] = [:]) -> [NotificationGroups.Send] {
            let (sends, next) = groups.plan(hooks: hooks, firing: firing, held: [], resolved: resolved, nowMs: now)
            groups = next
            return sends
        }
        _ = step(0)
        #expect(step(30_000).map(\.status) == ["firing"])
        firing = [down, budget]
        #expect(step(60_000).isEmpty)
        let told = step(90_000)
        #expect(told.map(\.status) == ["firing"] && told.first?.alerts.map(\.rule) == ["SLABudgetExhausted"])
        firing = [budget]
        let recovered = step(120_000, resolved: [down.fingerprint: down])
        #expect(recovered.map(\.status) == ["resolved"] && recovered.first?.alerts.map(\.rule) == ["SourceDown"])
        #expect(step(135_000).isEmpty)
    }

    @Test func aGroupOnlyHeldBackEndsQuietlyAndComesBackWhenTheHoldEnds() {
        var groups = NotificationGroups()
        let firing = [alert("SourceDown", at: 0, id: 1)]
        var (sends, next) = groups.plan(hooks: hooks, firing: firing, held: [], resolved: [:], nowMs: 0)
        groups = next
        (sends, next) = groups.plan(hooks: hooks, firing: firing, held: [], resolved: [:], nowMs: 30_000)
        groups = next
        #expect(sends.count == 1)
        (sends, next) = groups.plan(hooks: hooks, firing: firing, held: ["SourceDown/acme"], resolved: [:], nowMs: 45_000)
        groups = next
        #expect(sends.isEmpty)  // silenced: no "resolved" for an alert still firing
        (sends, next) = groups.plan(hooks: hooks, firing: firing, held: [], resolved: [:], nowMs: 60_000)
        groups = next
        #expect(sends.isEmpty)  // a new group waits group_wait again
        (sends, _) = groups.plan(hooks: hooks, firing: firing, held: [], resolved: [:], nowMs: 90_000)
        #expect(sends.map(\.status) == ["firing"])
    }

    @Test func unstoredAlertsWaitForTheirRow() {
        var unstored = alert("SourceDown", at: 0, id: 1)
        unstored.id = nil
        let (sends, next) = NotificationGroups().plan(hooks: hooks, firing: [unstored], held: [], resolved: [:], nowMs: 60_000)
        #expect(sends.isEmpty)
        #expect(next.groups.isEmpty)
    }

    @Test func aTemplatedWebhookRendersItsBodyAndHeaders() throws {
        let hook = try #require(
            try ConfigLoader.parse(
                #"""
                sources: [{name: acme, url: "http://127.0.0.1:1/"}]
                alerts:
                  hooks:
                    - name: custom
                      url: "http://127.0.0.1:1/hook"
                      template: '{"msg": {{{title_json}}}, "cause": {{{cause_json}}}, "rules": {{{rules_json}}}, "firstRule": "{{#alerts}}{{rule}} {{/alerts}}"}'
                      headers: {X-Incident: "{{title}} ({{severity}})", Content-Type: text/plain}
                """#, file: "t.yml", hooks: NotificationProviders.hookKinds
            ).hooks.first)
        var down = alert("SourceDown", at: 0, id: 1)
        down.annotations = [
            "description": "Error while probing acme: the server answered 503. The server said: \"busy\"", "down_since": "1970-01-01T00:00:00.000Z",
        ]
        let send = NotificationGroups.Send(
            hook: "custom", status: "firing", alerts: [down, alert("SLOBurnRateFast", at: 0, id: 2)], groupLabels: ["source": "acme"])
        let payload = ProviderPayloads.body(for: hook, send, externalURL: "https://status.test", nowMs: 240_000)
        let (headers, body) = WebhookProvider.split(payload)
        #expect(headers.map { "\($0.name): \($0.value)" } == ["Content-Type: text/plain", "X-Incident: acme is down (critical)"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])
        #expect(object["msg"] as? String == "acme is down")
        #expect((object["cause"] as? String)?.hasSuffix(#"The server said: "busy""#) == true)
        #expect(object["rules"] as? String == "SourceDown, SLOBurnRateFast")
        #expect(object["firstRule"] as? String == "SourceDown SLOBurnRateFast ")
        let request = OutboxDeliverer.request(hook, payload: payload, delivery: "7")
        #expect(request.headers.contains { $0.name == "Content-Type" && $0.value == "text/plain" })
        #expect(!request.headers.contains { $0.name == "Content-Type" && $0.value == "application/json" })
        #expect(String(decoding: request.body ?? [], as: UTF8.self) == body)
    }

    /// A lock screen shows the time of day an outage began, with its date only when it began
    /// on another day; the machine-readable time stays in `down_since`.
    @Test func aNotificationSaysWhenTheOutageBeganAsPeopleReadIt() throws {
        let hook = try #require(
            try ConfigLoader.parse(
                """
                sources: [{name: acme, url: "http://127.0.0.1:1/"}]
                alerts:
                  hooks: [{name: phone, type: ntfy, url: "http://127.0.0.1:1/oncall"}]
                """, file: "t.yml", hooks: NotificationProviders.hookKinds
            ).hooks.first)
        let began = try #require(Timestamp.parseRFC3339("2026-11-23T19:10:14.135Z"))
        var down = alert("SourceDown", at: began, id: 1)
        down.annotations = ["description": "Error while probing acme: the server answered 503.", "down_since": "2026-11-23T19:10:14.135Z"]
        let send = NotificationGroups.Send(hook: "phone", status: "firing", alerts: [down], groupLabels: ["source": "acme"])
        let sameDay = ProviderPayloads.body(for: hook, send, externalURL: "https://status.test", nowMs: began + 4 * 60_000)
        #expect(sameDay.contains("Down for 4m, since 19:10 UTC"))
        let nextDay = ProviderPayloads.body(for: hook, send, externalURL: "https://status.test", nowMs: began + 26 * 3_600_000)
        #expect(nextDay.contains("Down for 1d 2h, since 23 Nov 2026 19:10 UTC"))
    }

    @Test func aNotificationSaysHowMuchOfAnOutageLookoutWasNotRunning() throws {
        let hook = try #require(
            try ConfigLoader.parse(
                """
                sources: [{name: acme, url: "http://127.0.0.1:1/"}]
                alerts:
                  hooks: [{name: chat, type: slack, url: "http://127.0.0.1:1/hook"}]
                """, file: "t.yml", hooks: NotificationProviders.hookKinds
            ).hooks.first)
        var down = alert("SourceDown", at: 0, id: 1)
        down.annotations = ["description": "Error while probing acme: the server answered 503.", "down_since": "1970-01-01T00:00:00.000Z"]
        down.resolvedAtMs = 4 * 3_600_000
        let plain = ProviderPayloads.body(
            for: hook, NotificationGroups.Send(hook: "chat", status: "resolved", alerts: [down], groupLabels: [:]), externalURL: "https://status.test",
            nowMs: 4 * 3_600_000)
        #expect(plain.contains("Was down for 4h\\n"))
        down.annotations[AlertService.notRunningAnnotation] = "8040"
        let told = ProviderPayloads.body(
            for: hook, NotificationGroups.Send(hook: "chat", status: "resolved", alerts: [down], groupLabels: [:]), externalURL: "https://status.test",
            nowMs: 4 * 3_600_000)
        #expect(told.contains("Was down for 4h (Lookout was not running for 2h 14m of it)\\n"))
    }
}
