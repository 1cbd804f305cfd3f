import Foundation
import LookoutCore

/// Pushover's Messages API. The application token and user key are added to the body at
/// delivery, never kept in the outbox.
enum PushoverProvider: NotificationProvider {
    static let type: HookType = "pushover"
    static let ownKeys = ["token", "token_file", "user_key", "user_key_file"]
    static let defaultURL: String? = "https://api.pushover.net/1/messages.json"

    struct Settings: ProviderSettings {
        var token: String
        var userKey: String
    }

    static func read(_ keys: inout HookKeys, into hook: inout HookConfig) {
        let token = keys.requiredSecret(inline: "token", file: "token_file", "a pushover hook needs the application's API token")
        let user = keys.requiredSecret(inline: "user_key", file: "user_key_file", "a pushover hook needs the user or group key")
        guard let token, let user else { return }
        hook.settings = HookSettings(Settings(token: token, userKey: user))
    }

    static func atDelivery(_ payload: String, _ hook: HookConfig) -> String {
        guard let settings = hook.settings.get(Settings.self), payload.hasPrefix("{") else { return payload }
        return "{\"token\":" + JSONText.string(settings.token).rendered + ",\"user\":" + JSONText.string(settings.userKey).rendered + ","
            + payload.dropFirst()
    }

    /// critical 1 (high: bypasses quiet hours), warning 0, info and recoveries -1 (quiet).
    static func priority(_ summary: ProviderPayloads.Summary) -> Int64 {
        guard summary.firing, !summary.isTest else { return -1 }
        return summary.severity == "critical" ? 1 : summary.severity == "warning" ? 0 : -1
    }

    static func body(_ summary: ProviderPayloads.Summary, _ send: NotificationGroups.Send, hook: HookConfig, externalURL: String, nowMs: Int64) -> String {
        // Plain text (no `html`): nothing an upstream says is markup.
        let message = ProviderPayloads.lines(summary, escape: { $0 }, bold: { $0 }).joined(separator: "\n")
        return JSONText.ordered([
            ("title", .string(ProviderPayloads.clip("\(summary.mark) \(summary.headline)", 250))),
            ("message", .string(ProviderPayloads.clip(message, 1024))),
            ("priority", .int(priority(summary))),
            ("url", .string(ProviderPayloads.clip(summary.link, 512))),
            ("url_title", .string("Status page")),
            ("timestamp", .int(nowMs / 1000)),
        ]).rendered
    }
}
