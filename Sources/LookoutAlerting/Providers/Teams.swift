import Foundation
import LookoutCore

/// Microsoft Teams through a Workflows webhook.
enum TeamsProvider: NotificationProvider {
    static let type: HookType = "teams"

    static func body(_ summary: ProviderPayloads.Summary, _ send: NotificationGroups.Send, hook: HookConfig, externalURL: String, nowMs: Int64) -> String {
        teams(summary)
    }

    /// Teams Workflows webhook ("When a Teams webhook request is received"): a message with one
    /// Adaptive Card 1.4 attachment.
    static func teams(_ summary: ProviderPayloads.Summary) -> String {
        var facts: [JSONText] = [.ordered([("title", .string("Alerts")), ("value", .string("\(summary.rules) (\(summary.severity))"))])]
        if let vendor = summary.vendor { facts.insert(.ordered([("title", .string("Vendor")), ("value", .string(vendor))]), at: 0) }
        if let since = summary.since { facts.insert(.ordered([("title", .string("Outage")), ("value", .string(since))]), at: 0) }
        // The upstream's words in a RichTextBlock: its TextRuns are plain text, where a
        // TextBlock would render an upstream's "[x](https://…)" as a link.
        let cause: JSONText = .ordered([
            ("type", .string("RichTextBlock")),
            (
                "inlines",
                .array([
                    .ordered([("type", .string("TextRun")), ("text", .string("\(summary.causeLabel): ")), ("weight", .string("Bolder"))]),
                    .ordered([("type", .string("TextRun")), ("text", .string(summary.gist))]),
                ])
            ),
        ])
        let card: JSONText = .ordered([
            ("$schema", .string("http://adaptivecards.io/schemas/adaptive-card.json")),
            ("type", .string("AdaptiveCard")),
            ("version", .string("1.4")),
            (
                "body",
                .array([
                    .ordered([
                        ("type", .string("TextBlock")), ("text", .string(summary.headline)), ("weight", .string("Bolder")), ("size", .string("Medium")),
                        ("color", .string(summary.isTest ? "Default" : summary.firing ? "Attention" : "Good")), ("wrap", .bool(true)),
                    ]),
                    cause,
                    .ordered([("type", .string("FactSet")), ("facts", .array(facts))]),
                ])
            ),
            ("actions", .array([.ordered([("type", .string("Action.OpenUrl")), ("title", .string("Status page")), ("url", .string(summary.link))])])),
        ])
        return JSONText.ordered([
            ("type", .string("message")),
            (
                "attachments",
                .array([.ordered([("contentType", .string("application/vnd.microsoft.card.adaptive")), ("contentUrl", .null), ("content", card)])])
            ),
        ]).rendered
    }
}
