import Foundation
import LookoutCore

/// Discord webhooks.
enum DiscordProvider: NotificationProvider {
    static let type: HookType = "discord"

    static func body(_ summary: ProviderPayloads.Summary, _ send: NotificationGroups.Send, hook: HookConfig, externalURL: String, nowMs: Int64) -> String {
        discord(summary, nowMs: nowMs)
    }

    /// Text for Discord's markdown: each character that marks something up within a line is
    /// backslash-escaped (bold, italics, strikes, spoilers, code, links, mentions), so an
    /// upstream's "[Reset](https://…)" or "**" stays text; mentions are also off for the whole
    /// message (`allowed_mentions`). Line-start markup cannot occur: upstream text has no line
    /// breaks (`PrintableText`) and every line starts with Lookout's own words.
    static func discordText(_ text: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count)
        var inURL = false
        for (index, character) in zip(text.indices, text) {
            // A URL is left as it is (Discord links it, and a backslash in it would break the
            // link); it shows where it goes, so it hides nothing. It ends at a space.
            if character == " " {
                inURL = false
            } else if !inURL, character == "h", text[index...].hasPrefix("http://") || text[index...].hasPrefix("https://") {
                inURL = true
            }
            if !inURL, "\\*_~`|[]<@".contains(character) { escaped.append("\\") }
            escaped.append(character)
        }
        return escaped
    }

    /// Discord webhook: one embed, red or green; `content` is what a push notification shows.
    /// Mentions are off (`allowed_mentions`), so no upstream text can ping anyone.
    static func discord(_ summary: ProviderPayloads.Summary, nowMs: Int64) -> String {
        var fields: [JSONText] = [
            .ordered([
                ("name", .string("Alerts")), ("value", .string(ProviderPayloads.clip(discordText("\(summary.rules) (\(summary.severity))"), 1024))),
                ("inline", .bool(true)),
            ])
        ]
        if let since = summary.since {
            fields.insert(
                .ordered([("name", .string("Outage")), ("value", .string(ProviderPayloads.clip(discordText(since), 1024))), ("inline", .bool(true))]), at: 0)
        }
        if let vendor = summary.vendor {
            fields.append(
                .ordered([("name", .string("Vendor")), ("value", .string(ProviderPayloads.clip(discordText(vendor), 1024))), ("inline", .bool(false))]))
        }
        let content = summary.firing ? "\(summary.mark) \(summary.headlineAndGist)" : "\(summary.mark) \(summary.headline)"
        return JSONText.ordered([
            ("content", .string(ProviderPayloads.clip(discordText(content), 2000))),
            ("allowed_mentions", .ordered([("parse", .array([]))])),
            (
                "embeds",
                .array([
                    .ordered([
                        ("title", .string(ProviderPayloads.clip(summary.headline, 256))),
                        ("description", .string(ProviderPayloads.clip(discordText("\(summary.causeLabel): \(summary.gist)"), 4096))),
                        ("url", .string(summary.link)),
                        ("color", .int(Int64(summary.colorHex))),
                        ("fields", .array(fields)),
                        ("timestamp", .string(Timestamp.rfc3339(nowMs))),
                    ])
                ])
            ),
        ]).rendered
    }
}
