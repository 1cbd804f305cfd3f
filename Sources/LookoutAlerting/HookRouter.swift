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

    /// Whether `hook` takes alerts like `alert` (its severities and label matchers).
    package static func accepts(_ hook: HookConfig, _ alert: Alert) -> Bool {
        if !hook.severities.isEmpty && !hook.severities.contains(alert.severity) { return false }
        return hook.matchers.allSatisfy { alert.labels[$0.key] == $0.value }
    }

    /// The outbox rows for a change: one per hook that takes it (resolved ones only for hooks
    /// that `send_resolved`).
    package func notifications(_ change: AlertChange, nowMs: Int64) -> [OutboxEntry] {
        hooks.compactMap { hook in
            guard HookRouter.accepts(hook, change.alert) else { return nil }
            if case .resolved = change, !hook.sendResolved { return nil }
            return OutboxEntry(hook: hook.name, payload: payload(for: hook, change, nowMs: nowMs))
        }
    }

    package func payload(for hook: HookConfig, _ change: AlertChange, nowMs: Int64) -> String {
        switch hook.type {
        case .webhook: return Payloads.webhook(change, receiver: hook.name, externalURL: externalURL)
        case .alertmanager: return Payloads.alertmanager([change], externalURL: externalURL, nowMs: nowMs)
        }
    }
}
