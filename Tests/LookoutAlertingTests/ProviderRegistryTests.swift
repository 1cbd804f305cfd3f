import Foundation
import LookoutCore
import Testing

@testable import LookoutAlerting

/// Every hook type the config accepts has exactly one provider in the registry, and what the
/// providers declare (grouping, delivery, URL) is what the deliverer uses.
@Suite("notification provider registry")
struct ProviderRegistryTests {
    func hook(_ type: HookConfig.HookType) throws -> HookConfig {
        let extra = [
            HookConfig.HookType.pagerduty: #"url: "http://127.0.0.1:1/base/oncall", routing_key: "${HOME}""#,
            .email: #"url: "smtp://127.0.0.1:1", starttls: false, from: lookout@example.test, to: [oncall@example.test]"#,
        ]
        return try #require(
            try ConfigLoader.parse(
                """
                sources: [{name: acme, url: "http://127.0.0.1:1/"}]
                alerts:
                  hooks: [{name: h, type: \(type.rawValue), \(extra[type] ?? #"url: "http://127.0.0.1:1/base/oncall""#)}]
                """, file: "t.yml"
            ).hooks.first)
    }

    @Test func everyHookTypeHasOneProvider() throws {
        let types = NotificationProviders.all.map { $0.type }
        #expect(Set(types) == Set(HookConfig.HookType.allCases))
        #expect(types.count == HookConfig.HookType.allCases.count)
        for type in HookConfig.HookType.allCases {
            #expect(NotificationProviders.provider(try hook(type)).type == type)
        }
    }

    @Test func whatProvidersDeclareReachesTheRequest() throws {
        #expect(OutboxDeliverer.request(try hook(.alertmanager), payload: "[]", delivery: "1").url == "http://127.0.0.1:1/base/oncall/api/v2/alerts")
        #expect(OutboxDeliverer.request(try hook(.ntfy), payload: "{}", delivery: "1").url == "http://127.0.0.1:1/base")
        #expect(OutboxDeliverer.request(try hook(.slack), payload: "{}", delivery: "1").url == "http://127.0.0.1:1/base/oncall")
        let paged = OutboxDeliverer.request(try hook(.pagerduty), payload: #"{"event_action":"trigger"}"#, delivery: "1")
        let key = try #require(ProcessInfo.processInfo.environment["HOME"])
        #expect(String(decoding: paged.body ?? [], as: UTF8.self) == #"{"routing_key":"\#(key)","event_action":"trigger"}"#)
        let slack = OutboxDeliverer.request(try hook(.slack), payload: #"{"text":"x"}"#, delivery: "1")
        #expect(String(decoding: slack.body ?? [], as: UTF8.self) == #"{"text":"x"}"#)
        #expect(NotificationProviders.all.filter { !$0.grouped }.map { $0.type } == [.alertmanager])
        let ownDelivery = NotificationProviders.all.filter {
            if case .own = $0.delivery { true } else { false }
        }
        #expect(ownDelivery.map { $0.type } == [.email])
    }
}
