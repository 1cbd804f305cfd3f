import LookoutCore

/// Webhook notifications grouped the way Alertmanager's routes group them. Per hook, the firing
/// alerts with the same values of its `group_by` labels (default: `source`) are one group and go
/// out as one notification: after `group_wait` for a new group, every `repeat_interval` while it
/// fires, after `group_interval` when a source not told of joins it, and once resolved when its
/// last alert resolves. Other alerts joining or leaving a group that was told of send nothing of
/// their own: a
/// source's critical alert handing over to a warning while it still fails is the same outage.
/// So one broken source is one "down" and one "recovered", however many rules it trips.
///
/// A value: `plan` returns what to send and the state to keep once it is queued, so a notification
/// the database refused is planned again at the next evaluation.
struct NotificationGroups: Sendable {
    struct Group: Sendable, Equatable {
        var hook: String
        var labels: [String: String]
        var createdAtMs: Int64
        var notifiedAtMs: Int64?
        /// The alerts the last notification named, by fingerprint.
        var notified: [String: Alert] = [:]
    }

    /// One notification to queue.
    struct Send: Sendable, Equatable {
        var hook: String
        var status: String
        var alerts: [Alert]
        var groupLabels: [String: String]
    }

    private(set) var groups: [String: Group] = [:]

    /// When the next group can come due: a new group's `group_wait` ends, or a told group's
    /// `group_interval` (or `repeat_interval`, if shorter). The evaluation loop wakes then, so a
    /// `group_wait` shorter than the evaluation interval is kept, not rounded up to it.
    func earliestDueMs(hooks: [HookConfig]) -> Int64? {
        var earliest: Int64?
        for group in groups.values {
            guard let hook = hooks.first(where: { $0.name == group.hook }) else { continue }
            let due =
                group.notifiedAtMs.map { $0.addingClamped(min(hook.groupInterval, hook.repeatInterval).totalMilliseconds) }
                ?? group.createdAtMs.addingClamped(hook.groupWait.totalMilliseconds)
            earliest = min(earliest ?? due, due)
        }
        return earliest
    }

    /// The values of `groupBy` in `alert`'s labels ("" when it has none, as for service-wide alerts).
    static func labels(_ groupBy: [String], _ alert: Alert) -> [String: String] {
        Dictionary(uniqueKeysWithValues: groupBy.map { ($0, alert.labels[$0] ?? "") })
    }

    static func key(_ hook: String, _ labels: [String: String]) -> String {
        hook + "\u{1F}" + labels.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "\u{1F}")
    }

    /// Alerts that fired before a restart: a group one of whose alerts has a notification stored
    /// for the hook (`told`: alert id → hooks) was announced then and counts as notified now; a
    /// group none of whose alerts has (Lookout stopped within its group_wait) is planned as new,
    /// from when its first alert fired, so it goes out at once. `told` nil: all were announced.
    mutating func restore(firing: [Alert], hooks: [HookConfig], nowMs: Int64, told: [Int64: Set<String>]? = nil) {
        for hook in hooks where NotificationProviders.provider(hook).grouped {
            var members: [String: (labels: [String: String], alerts: [Alert])] = [:]
            for alert in firing where HookRouter.accepts(hook, alert) {
                let labels = NotificationGroups.labels(hook.groupBy, alert)
                members[NotificationGroups.key(hook.name, labels), default: (labels, [])].alerts.append(alert)
            }
            for (key, member) in members {
                let announced = told.map { told in member.alerts.contains { $0.id.flatMap { told[$0]?.contains(hook.name) } == true } } ?? true
                if var group = groups[key] {
                    for alert in member.alerts { group.notified[alert.fingerprint] = alert }
                    groups[key] = group
                } else if announced {
                    var group = Group(hook: hook.name, labels: member.labels, createdAtMs: nowMs, notifiedAtMs: nowMs)
                    for alert in member.alerts { group.notified[alert.fingerprint] = alert }
                    groups[key] = group
                } else {
                    groups[key] = Group(hook: hook.name, labels: member.labels, createdAtMs: member.alerts.map(\.startedAtMs).min() ?? nowMs)
                }
            }
        }
    }

    /// Alerts whose resolution was announced on its own (stored late, after a full disk): no
    /// group announces them again; a group left with nothing to tell of ends.
    mutating func forget(_ fingerprints: Set<String>) {
        for (key, group) in groups where group.notified.keys.contains(where: fingerprints.contains) {
            let remaining = group.notified.filter { !fingerprints.contains($0.key) }
            if remaining.isEmpty { groups.removeValue(forKey: key) } else { groups[key]?.notified = remaining }
        }
    }

    /// What to send at `nowMs` for the firing alerts (stored ones only: a notification needs an
    /// alert row), leaving out those `held` back; `resolved` holds this evaluation's resolved
    /// alerts, by fingerprint. Returns the notifications and the state once they are queued.
    func plan(
        hooks: [HookConfig], firing: [Alert], held: Set<String>, resolved: [String: Alert], nowMs: Int64
    ) -> (sends: [Send], next: NotificationGroups) {
        var current: [String: (hook: HookConfig, labels: [String: String], alerts: [Alert])] = [:]
        for hook in hooks where NotificationProviders.provider(hook).grouped {
            for alert in firing where alert.id != nil && !held.contains(alert.fingerprint) && HookRouter.accepts(hook, alert) {
                let labels = NotificationGroups.labels(hook.groupBy, alert)
                // An alert about something other than the outage (a certificate, a domain, an SLA
                // budget) is a story of its own: grouped apart, so it is told when it fires and the
                // outage's recovery is told when it comes, whichever lasts longer.
                let key = NotificationGroups.key(hook.name, labels) + (alert.isAboutOutage ? "" : "\u{1F}apart")
                current[key, default: (hook, labels, [])].alerts.append(alert)
            }
        }
        let stillFiring = Set(firing.map(\.fingerprint))
        var next = self
        var sends: [Send] = []
        // Groups with nothing left to tell of: resolved once, if they were told of at all and
        // every alert they named has resolved (a group whose alerts are only held back — a
        // silence, a parent down — ends quietly).
        for (key, group) in groups where current[key] == nil {
            next.groups.removeValue(forKey: key)
            guard group.notifiedAtMs != nil, !group.notified.keys.contains(where: stillFiring.contains),
                let hook = hooks.first(where: { $0.name == group.hook }), hook.sendResolved
            else { continue }
            let alerts = group.notified.values.sorted { $0.startedAtMs < $1.startedAtMs }.map { alert in
                var done = resolved[alert.fingerprint] ?? alert
                if done.resolvedAtMs == nil { done.resolvedAtMs = nowMs }
                return done
            }
            sends.append(Send(hook: group.hook, status: "resolved", alerts: alerts, groupLabels: group.labels))
        }
        for (key, entry) in current.sorted(by: { $0.key < $1.key }) {
            let alerts = entry.alerts.sorted { $0.startedAtMs < $1.startedAtMs }
            var group = next.groups[key] ?? Group(hook: entry.hook.name, labels: entry.labels, createdAtMs: nowMs)
            let due: Bool
            if let notifiedAt = group.notifiedAtMs {
                // The group's story is told: an alert that joins or leaves it while it fires (a
                // critical one handing over to a warning) is not a new "down". It is named in the
                // next repeat, and its resolution in the group's. A source not told of yet (a
                // group of several sources) is news, after `group_interval`.
                let toldSources = Set(group.notified.values.map(\.source))
                let news = alerts.contains { !toldSources.contains($0.source) }
                let wait = news ? entry.hook.groupInterval : entry.hook.repeatInterval
                due = nowMs - notifiedAt >= wait.totalMilliseconds
                if !due {
                    for alert in alerts where group.notified[alert.fingerprint] == nil && toldSources.contains(alert.source) {
                        group.notified[alert.fingerprint] = alert
                    }
                }
            } else {
                due = nowMs - group.createdAtMs >= entry.hook.groupWait.totalMilliseconds
            }
            if due {
                sends.append(Send(hook: entry.hook.name, status: "firing", alerts: alerts, groupLabels: entry.labels))
                group.notifiedAtMs = nowMs
                // Alerts told earlier that resolved within the group stay until the group ends:
                // its resolution names them.
                let told = group.notified.filter { !stillFiring.contains($0.key) }
                group.notified = Dictionary(alerts.map { ($0.fingerprint, $0) }) { first, _ in first }.merging(told) { current, _ in current }
            }
            next.groups[key] = group
        }
        return (sends, next)
    }
}
