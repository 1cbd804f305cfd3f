import Foundation
import LookoutCore

/// PagerDuty's Events API v2; the routing key is added at delivery, never kept in the outbox.
enum PagerDutyProvider: NotificationProvider {
    static let type: HookType = "pagerduty"
    static let ownKeys = ["routing_key", "routing_key_file"]
    /// Events API v2, where a hook without `url` sends.
    static let defaultURL: String? = "https://events.pagerduty.com/v2/enqueue"

    /// The integration's routing key (from `routing_key_file` or `${ENV}`): put in the request
    /// at delivery, never stored in the outbox.
    struct Settings: ProviderSettings {
        var routingKey: String
    }

    static func read(_ keys: inout HookKeys, into hook: inout HookConfig) {
        if let key = keys.requiredSecret(inline: "routing_key", file: "routing_key_file", "a pagerduty hook needs the integration's routing key") {
            hook.settings = HookSettings(Settings(routingKey: key))
        }
    }

    static func atDelivery(_ payload: String, _ hook: HookConfig) -> String {
        hook.settings.get(Settings.self).map { withRoutingKey(payload, $0.routingKey) } ?? payload
    }

    static func body(_ summary: ProviderPayloads.Summary, _ send: NotificationGroups.Send, hook: HookConfig, externalURL: String, nowMs: Int64) -> String {
        pagerDuty(summary, send, nowMs: nowMs)
    }

    /// The stable id of a group across replicas and restarts: PagerDuty's `dedup_key`, so two
    /// Lookout replicas raise one incident.
    package static func dedupKey(_ groupLabels: [String: String]) -> String {
        let text = groupLabels.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "\u{1F}")
        let digits = String(StableHash.of(text), radix: 16)
        return "lookout-" + String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// PagerDuty Events API v2: `trigger` or `resolve`, one PagerDuty incident per group.
    static func pagerDuty(_ summary: ProviderPayloads.Summary, _ send: NotificationGroups.Send, nowMs: Int64) -> String {
        let key = dedupKey(send.groupLabels)
        guard summary.firing else {
            return JSONText.ordered([("event_action", .string("resolve")), ("dedup_key", .string(key))]).rendered
        }
        let severity = ["critical": "critical", "warning": "warning", "info": "info"][summary.severity] ?? "error"
        var details: [(String, JSONText)] = [("cause", .string(summary.cause)), ("alerts", .string(summary.rules))]
        if let downSince = summary.downSince { details.append(("down_since", .string(downSince))) }
        return JSONText.ordered([
            ("event_action", .string("trigger")),
            ("dedup_key", .string(key)),
            (
                "payload",
                .ordered([
                    ("summary", .string(ProviderPayloads.clip(summary.headlineAndGist, 1024))),
                    ("source", .string(summary.source ?? "lookout")),
                    ("severity", .string(severity)),
                    // When the outage began, not when a rule's `for` let the alert fire.
                    // (A rule's own down_since annotation may hold anything: only a time passes.)
                    ("timestamp", .string(Timestamp.rfc3339(summary.downSince.flatMap(Timestamp.parseRFC3339) ?? send.alerts.first?.startedAtMs ?? nowMs))),
                    ("component", .string(summary.source ?? "lookout")),
                    ("class", .string(summary.rules)),
                    ("custom_details", .ordered(details)),
                ])
            ),
            ("links", .array([.ordered([("href", .string(summary.link)), ("text", .string("Lookout status page"))])])),
            ("client", .string("Lookout")),
            ("client_url", .string(summary.link)),
        ]).rendered
    }

    /// The body with PagerDuty's routing key first, added at delivery.
    package static func withRoutingKey(_ body: String, _ key: String) -> String {
        guard body.hasPrefix("{") else { return body }
        return "{\"routing_key\":" + JSONText.string(key).rendered + "," + body.dropFirst()
    }
}
