import Foundation
import LookoutCore

/// Slack incoming webhooks.
enum SlackProvider: NotificationProvider {
    static let type: HookType = "slack"

    static func body(_ summary: ProviderPayloads.Summary, _ send: NotificationGroups.Send, hook: HookConfig, externalURL: String, nowMs: Int64) -> String {
        slack(summary)
    }

    /// Text for Slack's mrkdwn (and a message's `text`, which Slack parses the same way): `&`, `<`
    /// and `>` are its control characters, so an upstream's "<!channel>" or "<https://x|y>" stays
    /// text instead of paging a channel or hiding a link.
    static func slackText(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
    }

    /// Slack incoming webhook: a coloured attachment (red firing, green resolved) holding Block
    /// Kit blocks; `text` is what notifications and screen readers show.
    static func slack(_ summary: ProviderPayloads.Summary) -> String {
        let emoji = summary.mark
        var lines: [String] = []
        if let since = summary.since { lines.append(slackText(since)) }
        lines.append("*\(summary.causeLabel):* \(slackText(summary.gist))")
        if let vendor = summary.vendor { lines.append("*Vendor:* \(slackText(vendor))") }
        lines.append("*Alerts:* \(slackText(summary.rules)) (\(slackText(summary.severity)))")
        let blocks: [JSONText] = [
            .ordered([
                ("type", .string("header")),
                ("text", .ordered([("type", .string("plain_text")), ("text", .string(ProviderPayloads.clip("\(emoji) \(summary.headline)", 150)))])),
            ]),
            .ordered([
                ("type", .string("section")),
                ("text", .ordered([("type", .string("mrkdwn")), ("text", .string(ProviderPayloads.clip(lines.joined(separator: "\n"), 3000)))])),
            ]),
            .ordered([
                ("type", .string("actions")),
                (
                    "elements",
                    .array([
                        .ordered([
                            ("type", .string("button")), ("text", .ordered([("type", .string("plain_text")), ("text", .string("Status page"))])),
                            ("url", .string(summary.link)),
                        ])
                    ])
                ),
            ]),
        ]
        // What a phone's notification shows: where, since when, and what the upstream said.
        let text = summary.firing ? "\(emoji) \(summary.headlineAndGist)" : "\(emoji) \(summary.headline)"
        return JSONText.ordered([
            ("text", .string(ProviderPayloads.clip(slackText(text), 3000))),
            ("attachments", .array([.ordered([("color", .string(summary.color)), ("blocks", .array(blocks))])])),
        ]).rendered
    }
}
