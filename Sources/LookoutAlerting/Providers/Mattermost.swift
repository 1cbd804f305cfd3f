import Foundation
import LookoutCore

/// Mattermost incoming webhooks: a coloured attachment, Slack-compatible.
enum MattermostProvider: NotificationProvider {
    static let type: HookType = "mattermost"
    static let ownKeys = ["channel", "username"]

    struct Settings: ProviderSettings {
        var channel: String?
        var username: String?
    }

    static func read(_ keys: inout HookKeys, into hook: inout HookConfig) {
        hook.settings = HookSettings(Settings(channel: keys.string("channel"), username: keys.string("username")))
    }

    /// Text for Mattermost's Markdown: every character that marks something up is
    /// backslash-escaped, so an upstream's "**", "[x](y)" or "@channel" stays text.
    static func markdownText(_ text: String) -> String {
        var out = ""
        for character in text {
            if "\\*_~`[]()#<>|@!".contains(character) { out.append("\\") }
            out.append(character)
        }
        return out
    }

    static func body(_ summary: ProviderPayloads.Summary, _ send: NotificationGroups.Send, hook: HookConfig, externalURL: String, nowMs: Int64) -> String {
        let settings = hook.settings.get(Settings.self)
        let text = ProviderPayloads.lines(summary, escape: markdownText) { "**\($0)**" }.joined(separator: "\n")
        var fields: [(String, JSONText)] = []
        if let channel = settings?.channel { fields.append(("channel", .string(channel))) }
        if let username = settings?.username { fields.append(("username", .string(username))) }
        let headline = "\(summary.mark) \(markdownText(summary.headline))"
        fields.append(
            (
                "attachments",
                .array([
                    .ordered([
                        ("fallback", .string(ProviderPayloads.clip(summary.firing ? summary.headlineAndGist : summary.headline, 1000))),
                        ("color", .string(summary.color)),
                        ("title", .string(ProviderPayloads.clip(headline, 1000))),
                        ("title_link", .string(summary.link)),
                        ("text", .string(ProviderPayloads.clip(text, 7000))),
                    ])
                ])
            ))
        return JSONText.ordered(fields).rendered
    }
}
