import Foundation
import LookoutCore

/// incident.io's HTTP alert source: `status` firing or resolved and a `deduplication_key` per
/// group, so a recovery resolves the alert it raised; the token is a bearer token (at delivery).
enum IncidentIOProvider: NotificationProvider {
    static let type: HookType = "incidentio"
    static let ownKeys = ["token", "token_file"]

    struct Settings: ProviderSettings {
        var token: String
    }

    static func read(_ keys: inout HookKeys, into hook: inout HookConfig) {
        if let token = keys.requiredSecret(inline: "token", file: "token_file", "an incidentio hook needs the alert source's token") {
            hook.settings = HookSettings(Settings(token: token))
        }
    }

    static func target(_ hook: HookConfig, delivery: String) -> DeliveryTarget {
        DeliveryTarget(url: hook.url, headers: [("Authorization", "Bearer \(hook.settings.get(Settings.self)?.token ?? "")")])
    }

    static func body(_ summary: ProviderPayloads.Summary, _ send: NotificationGroups.Send, hook: HookConfig, externalURL: String, nowMs: Int64) -> String {
        var metadata: [(String, JSONText)] = [
            ("source", .string(summary.source ?? "lookout")), ("alerts", .string(summary.rules)), ("severity", .string(summary.severity)),
            ("cause", .string(ProviderPayloads.clip(summary.cause, 2000))),
        ]
        if let downSince = summary.downSince { metadata.append(("down_since", .string(downSince))) }
        if let vendor = summary.vendor { metadata.append(("vendor", .string(vendor))) }
        let description = ProviderPayloads.lines(summary, escape: { $0 }, bold: { $0 }).joined(separator: "\n")
        return JSONText.ordered([
            ("title", .string(ProviderPayloads.clip(summary.headline, 255))),
            ("description", .string(ProviderPayloads.clip(description, 4000))),
            ("deduplication_key", .string(PagerDutyProvider.dedupKey(send.groupLabels))),
            ("status", .string(summary.firing ? "firing" : "resolved")),
            ("source_url", .string(summary.link)),
            ("metadata", .ordered(metadata)),
        ]).rendered
    }
}
