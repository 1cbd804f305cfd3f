import Foundation
import LookoutCore
import Testing

@testable import LookoutAlerting

/// A hook template over its budget costs the notification nothing: the hook gets Alertmanager's
/// webhook payload instead.
@Suite("template budget")
struct TemplateBudgetTests {
    @Test func anOverBudgetTemplateFallsBackToThePlainPayload() throws {
        let deep = String(repeating: "{{#alerts}}", count: 8) + "{{rule}}" + String(repeating: "{{/alerts}}", count: 8)
        let hook = try #require(
            try ConfigLoader.parse(
                """
                sources: [{name: acme, url: "http://127.0.0.1:1/"}]
                alerts: {hooks: [{name: h, type: webhook, url: "http://127.0.0.1:1/", template: "\(deep)"}]}
                """, file: "t.yml", hooks: NotificationProviders.hookKinds
            ).hooks.first)
        let alerts = (0..<5).map { index in
            Alert(
                fingerprint: "R\(index)/acme", rule: "R\(index)", source: "acme", severity: "critical",
                labels: ["alertname": "R\(index)", "severity": "critical", "source": "acme"], annotations: [:], startedAtMs: 0, resolvedAtMs: nil,
                id: Int64(index + 1))
        }
        let send = NotificationGroups.Send(hook: "h", status: "firing", alerts: alerts, groupLabels: ["source": "acme"])
        let body = ProviderPayloads.body(for: hook, send, externalURL: "http://127.0.0.1:9464", nowMs: 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])
        #expect(object["version"] as? String == "4")
        #expect((object["alerts"] as? [Any])?.count == 5)
    }
}
