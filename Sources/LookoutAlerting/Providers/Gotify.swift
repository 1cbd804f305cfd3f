import Foundation
import LookoutCore

/// Gotify: `POST {url}/message` with the application token in `X-Gotify-Key` (at delivery).
enum GotifyProvider: NotificationProvider {
    static let type: HookType = "gotify"
    static let ownKeys = ["token", "token_file"]

    struct Settings: ProviderSettings {
        var token: String
    }

    static func read(_ keys: inout HookKeys, into hook: inout HookConfig) {
        if let token = keys.requiredSecret(inline: "token", file: "token_file", "a gotify hook needs an application token") {
            hook.settings = HookSettings(Settings(token: token))
        }
    }

    static func target(_ hook: HookConfig, delivery: String) -> DeliveryTarget {
        let base = hook.url.trimmingSuffix("/")
        return DeliveryTarget(url: "\(base)/message", headers: [("X-Gotify-Key", hook.settings.get(Settings.self)?.token ?? "")])
    }

    /// critical 8 (Android shows it as a heads-up), warning 5, info and recoveries 2.
    static func priority(_ summary: ProviderPayloads.Summary) -> Int64 {
        guard summary.firing, !summary.isTest else { return 2 }
        return summary.severity == "critical" ? 8 : summary.severity == "warning" ? 5 : 2
    }

    static func body(_ summary: ProviderPayloads.Summary, _ send: NotificationGroups.Send, hook: HookConfig, externalURL: String, nowMs: Int64) -> String {
        // Plain text: Gotify renders Markdown only when `extras` ask for it, and they do not.
        let message = ProviderPayloads.lines(summary, escape: { $0 }, bold: { $0 }).joined(separator: "\n")
        return JSONText.ordered([
            ("title", .string(ProviderPayloads.clip("\(summary.mark) \(summary.headline)", 250))),
            ("message", .string(ProviderPayloads.clip(message, bytes: 4096))),
            ("priority", .int(priority(summary))),
            (
                "extras",
                .ordered([
                    ("client::display", .ordered([("contentType", .string("text/plain"))])),
                    ("client::notification", .ordered([("click", .ordered([("url", .string(summary.link))]))])),
                ])
            ),
        ]).rendered
    }
}
