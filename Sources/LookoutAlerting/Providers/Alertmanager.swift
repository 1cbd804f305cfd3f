import LookoutCore

/// Alertmanager's API (`/api/v2/alerts`): each alert on its own, sent again while it fires, for
/// Alertmanager to group, silence and route.
enum AlertmanagerProvider: NotificationProvider {
    static let type: HookType = "alertmanager"
    static let grouped = false

    static func body(_ summary: ProviderPayloads.Summary, _ send: NotificationGroups.Send, hook: HookConfig, externalURL: String, nowMs: Int64) -> String {
        Payloads.webhook(status: send.status, alerts: send.alerts, groupLabels: send.groupLabels, receiver: hook.name, externalURL: externalURL, nowMs: nowMs)
    }

    static func deliveryURL(_ hook: HookConfig) -> String {
        hook.url.trimmingSuffix("/") + "/api/v2/alerts"
    }
}
