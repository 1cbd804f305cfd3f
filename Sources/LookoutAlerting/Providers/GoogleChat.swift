import Foundation
import LookoutCore
import ResilientHTTP

/// Google Chat space webhooks: a card (cardsV2) with the fields, and a thread per source, so an
/// outage's "down" and "recovered" share a thread.
enum GoogleChatProvider: NotificationProvider {
    static let type: HookType = "googlechat"

    /// A thread key only threads with this option in the URL (it falls back to a new thread).
    static func deliveryURL(_ hook: HookConfig) -> String {
        guard var parts = URLParts(hook.url) else { return hook.url }
        let kept = parts.queryItems.filter { $0.name != "messageReplyOption" }.map { String($0.text) }
        parts.query = (kept + ["messageReplyOption=REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD"]).joined(separator: "&")
        return parts.text
    }

    static func body(_ summary: ProviderPayloads.Summary, _ send: NotificationGroups.Send, hook: HookConfig, externalURL: String, nowMs: Int64) -> String {
        let html = ProviderPayloads.htmlText
        func widget(_ label: String, _ text: String) -> JSONText {
            .ordered([("decoratedText", .ordered([("topLabel", .string(label)), ("text", .string(ProviderPayloads.clip(html(text), 4000)))]))])
        }
        var widgets = [widget(summary.causeLabel, summary.gist)]
        if let since = summary.since { widgets.append(widget("Outage", since)) }
        if let vendor = summary.vendor { widgets.append(widget("Vendor", vendor)) }
        widgets.append(widget("Alerts", "\(summary.rules) (\(summary.severity))"))
        widgets.append(
            .ordered([
                (
                    "buttonList",
                    .ordered([
                        (
                            "buttons",
                            .array([
                                .ordered([("text", .string("Status page")), ("onClick", .ordered([("openLink", .ordered([("url", .string(summary.link))]))]))])
                            ])
                        )
                    ])
                )
            ]))
        let thread = "lookout-" + (summary.source ?? send.groupLabels.sorted { $0.key < $1.key }.map(\.value).joined(separator: "-"))
        return JSONText.ordered([
            // What the notification shows: Lookout's own words only (Chat's text reads `<users/all>`
            // as a mention and `*` as bold); the upstream's are in the card, escaped.
            ("text", .string(ProviderPayloads.clip("\(summary.mark) \(summary.headline)", 4000))),
            (
                "cardsV2",
                .array([
                    .ordered([
                        ("cardId", .string("lookout")),
                        (
                            "card",
                            .ordered([
                                ("header", .ordered([("title", .string(ProviderPayloads.clip(summary.headline, 200))), ("subtitle", .string("Lookout"))])),
                                ("sections", .array([.ordered([("widgets", .array(widgets))])])),
                            ])
                        ),
                    ])
                ])
            ),
            ("thread", .ordered([("threadKey", .string(ProviderPayloads.clip(thread, 200)))])),
        ]).rendered
    }
}
