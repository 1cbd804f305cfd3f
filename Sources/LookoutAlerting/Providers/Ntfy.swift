import Foundation
import LookoutCore
import ResilientHTTP

/// ntfy: JSON published to the server's root, the topic taken from the hook URL.
enum NtfyProvider: NotificationProvider {
    static let type: HookType = "ntfy"

    /// ntfy takes JSON at the server's root, the topic inside it.
    static func deliveryURL(_ hook: HookConfig) -> String {
        guard var parts = URLParts(hook.url) else { return hook.url }
        parts.path = "/" + parts.path.split(separator: "/").dropLast().joined(separator: "/")
        return parts.text
    }

    static func body(_ summary: ProviderPayloads.Summary, _ send: NotificationGroups.Send, hook: HookConfig, externalURL: String, nowMs: Int64) -> String {
        ntfy(summary, topic: topic(of: hook.url))
    }

    /// ntfy's JSON publishing, sent to the server's root URL; the topic is the hook URL's last
    /// path component (`https://ntfy.sh/oncall` → `oncall`).
    static func ntfy(_ summary: ProviderPayloads.Summary, topic: String) -> String {
        let priority = summary.firing && !summary.isTest ? (summary.severity == "critical" ? 5 : summary.severity == "warning" ? 4 : 3) : 3
        // The title and the body's first lines are what a lock screen shows: where and since
        // when, then what the upstream said.
        var message = "\(summary.causeLabel): \(summary.gist)"
        if let since = summary.since { message += "\n\(since)" }
        if let vendor = summary.vendor { message += "\nVendor: \(vendor)" }
        return JSONText.ordered([
            ("topic", .string(topic)),
            ("title", .string(summary.headline)),
            ("message", .string(ProviderPayloads.clip(message, bytes: 4096))),
            ("priority", .int(Int64(priority))),
            ("tags", .array([.string(summary.isTest ? "test_tube" : summary.firing ? "rotating_light" : "white_check_mark")])),
            ("click", .string(summary.link)),
        ]).rendered
    }

    static func topic(of url: String) -> String {
        URLParts(url)?.decodedPath.split(separator: "/").last.map(String.init) ?? "lookout"
    }
}
