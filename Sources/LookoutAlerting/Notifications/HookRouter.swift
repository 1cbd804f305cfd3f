// LookoutAlerting: alert notifications — which hook gets what, in which format, and the outbox
// delivery that gets them there at least once.
import LookoutCore
import LookoutStore

/// Decides which hooks hear of an alert change, and builds each hook's payload.
package struct HookRouter: Sendable {
    package let hooks: [HookConfig]
    package let externalURL: String

    package init(hooks: [HookConfig], externalURL: String) {
        self.hooks = hooks
        self.externalURL = externalURL
    }

    /// The severities a hook without `severities` takes: info alerts show on the page and
    /// notify only where a hook asks for them.
    package static let defaultSeverities = ["critical", "warning"]

    /// Whether `hook` takes alerts like `alert` (its severities and label matchers).
    package static func accepts(_ hook: HookConfig, _ alert: Alert) -> Bool {
        let severities = hook.severities.isEmpty ? HookRouter.defaultSeverities : hook.severities
        if !severities.contains(alert.severity) { return false }
        return hook.matchers.allSatisfy { alert.labels[$0.key] == $0.value }
    }

    /// The outbox rows for a change: a firing one for each hook that takes it; a resolved one
    /// only for the hooks that were told it fired (`notified`) and `send_resolved`. Webhooks get
    /// grouped notifications (see `NotificationGroups`) and are left out unless `webhooks` — for
    /// changes stored late (after a full disk), which each still reach them, in order.
    package func notifications(_ change: AlertChange, nowMs: Int64, notified: Set<String> = [], webhooks: Bool = false) -> [OutboxEntry] {
        hooks.compactMap { hook in
            guard !NotificationProviders.provider(hook).grouped || webhooks else { return nil }
            switch change {
            case .firing: guard HookRouter.accepts(hook, change.alert) else { return nil }
            case .resolved: guard hook.sendResolved, notified.contains(hook.name) else { return nil }
            }
            return OutboxEntry(hook: hook.name, payload: payload(for: hook, change, nowMs: nowMs))
        }
    }

    package func payload(for hook: HookConfig, _ change: AlertChange, nowMs: Int64) -> String {
        let alert = change.alert
        guard NotificationProviders.provider(hook).grouped else { return Payloads.alertmanager([change], externalURL: externalURL, nowMs: nowMs) }
        let send = NotificationGroups.Send(
            hook: hook.name, status: alert.firing ? "firing" : "resolved", alerts: [alert], groupLabels: NotificationGroups.labels(hook.groupBy, alert))
        return ProviderPayloads.body(for: hook, send, externalURL: externalURL, nowMs: nowMs)
    }
}
