import Foundation
import LookoutCore

/// Splunk On-Call (VictorOps) REST endpoint; the URL carries the API and routing keys.
/// `entity_id` per group, so RECOVERY resolves the incident CRITICAL opened.
enum SplunkOnCallProvider: NotificationProvider {
    static let type: HookType = "splunk_oncall"

    static func messageType(_ summary: ProviderPayloads.Summary) -> String {
        guard summary.firing else { return "RECOVERY" }
        if summary.isTest { return "INFO" }
        return summary.severity == "critical" ? "CRITICAL" : summary.severity == "warning" ? "WARNING" : "INFO"
    }

    static func body(_ summary: ProviderPayloads.Summary, _ send: NotificationGroups.Send, hook: HookConfig, externalURL: String, nowMs: Int64) -> String {
        let message = ProviderPayloads.lines(summary, escape: { $0 }, bold: { $0 }).joined(separator: "\n")
        let startedMs = summary.downSince.flatMap(Timestamp.parseRFC3339) ?? send.alerts.first?.startedAtMs ?? nowMs
        return JSONText.ordered([
            ("message_type", .string(messageType(summary))),
            ("entity_id", .string(PagerDutyProvider.dedupKey(send.groupLabels))),
            ("entity_display_name", .string(ProviderPayloads.clip("\(summary.mark) \(summary.headline)", 255))),
            ("state_message", .string(ProviderPayloads.clip(message + "\n" + summary.link, 4000))),
            ("state_start_time", .int(startedMs / 1000)),
            ("monitoring_tool", .string("Lookout")),
            ("alert_url", .string(summary.link)),
        ]).rendered
    }
}
