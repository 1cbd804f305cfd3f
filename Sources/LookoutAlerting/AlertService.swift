import Foundation
import Logging
import LookoutCore
import LookoutStore
import Synchronization

/// Why a firing alert is not notified now.
package struct AlertHold: Sendable, Equatable {
    /// A silence matches it: it shows as silenced, not firing.
    package var silenced: Bool
    /// For people: "silenced: deploy", "held back by SourceErrorRateCritical, which is critical".
    package var reason: String
}

/// Evaluates the alert rules every 15 seconds, stores each firing and resolved change together with
/// its outbox rows (none while silenced), and keeps firing alerts across restarts.
package final class AlertService: Sendable {

    let monitor: Monitor
    let store: AlertStore
    let logger: Logger
    private let evaluator: Mutex<AlertEvaluator>
    /// The silences in force, and ones ended a moment ago (see `holds`); added and ended in
    /// `AlertService+Silences.swift`.
    let silences = Mutex<[Silence]>([])
    /// When each firing alert (by fingerprint) was last sent to each hook (by name), for repeats
    /// and Alertmanager refreshes; a resolve forgets its alert's in one removal.
    private let lastSent = Mutex<[String: [String: Int64]]>([:])
    private let stored = Mutex<[@Sendable () -> Void]>([])
    /// Changes the database refused (disk full, read-only file), oldest first, each with the time
    /// it happened; written before any newer change once writes work again.
    private let unstored = Mutex(UnstoredChanges())
    /// Firing alerts held back from notifications at the last evaluation, with the reason.
    private let held = Mutex<[String: AlertHold]>([:])
    /// Webhook notification groups: what each hook was last told, per group.
    private let groups = Mutex(NotificationGroups())
    /// Wakes the evaluation loop early: a source went down or came back up.
    private let wake = AsyncWakeUp()
    /// At most this many changes wait in memory for the database; past it the oldest are dropped
    /// (counted in `lookout_alert_changes_dropped_total` and logged).
    package static let maxUnstoredChanges = 10_000
    /// Alertmanager forgets a firing alert at its `endsAt`; Lookout pushes it again this often.
    package static let alertmanagerRefresh: Int64 = 60_000

    package init(monitor: Monitor, store: AlertStore, logger: Logger) {
        self.monitor = monitor
        self.store = store
        self.logger = logger
        let rules = (try? AlertRule.compile(monitor.config)) ?? AlertRule.defaults
        evaluator = Mutex(AlertEvaluator(rules: rules))
        monitor.onReload { [weak self] in self?.configChanged() }
        // An outage that opens or ends is evaluated at once, not up to 15 s later.
        monitor.registry.onDownChange { [weak self] in self?.wake.signal() }
    }

    /// The annotation of an alert that fired through stretches without Lookout running: their
    /// seconds in all, e.g. "8040". Notifications and the page say "Lookout was not running for
    /// 2h 14m of it" beside how long it has lasted.
    package static let notRunningAnnotation = "lookout_not_running_seconds"

    /// How long `alert` lasted without Lookout running, as people say it ("2h 14m"), if at all.
    package static func notRunning(_ alert: Alert) -> String? {
        guard let seconds = alert.annotations[notRunningAnnotation].flatMap({ Int64($0) }), seconds > 0 else { return nil }
        return Timestamp.human(seconds.multipliedClamped(1000))
    }

    /// What follows an alert's duration: " (Lookout was not running for 2h 14m of it)", or "".
    package static func notRunningNote(_ alert: Alert) -> String {
        notRunning(alert).map { " (Lookout was not running for \($0) of it)" } ?? ""
    }

    /// Takes back the alerts firing before a restart, and the silences still in force. Those
    /// that began before `gap` (a stretch in which Lookout did not run) count it, stored.
    package func restore(nowMs: Int64 = Timestamp.nowMs(), after gap: MonitoringGap? = nil) throws {
        var firing = try store.firing()
        if let gap {
            let spanning = firing.indices.filter { firing[$0].startedAtMs < gap.fromMs }
            for index in spanning {
                let before = firing[index].annotations[AlertService.notRunningAnnotation].flatMap { Int64($0) } ?? 0
                firing[index].annotations[AlertService.notRunningAnnotation] = "\(before.addingClamped(gap.durationMs / 1000))"
            }
            // Kept in memory whatever the disk says (a full one must not lose the restore);
            // stored so that the next restart adds to it.
            do { try store.setAnnotations(spanning.map { firing[$0] }) } catch {
                logger.error("cannot store how long the firing alerts went without Lookout", metadata: ["error": "\(error)"])
            }
        }
        evaluator.withLock { $0.restore(firing: firing) }
        // Who was told before the restart: an alert stored firing whose notification was not
        // planned yet (stopped within group_wait, or killed) is planned now, not taken as told.
        let told = try store.notifiedHooks(alertIDs: firing.compactMap(\.id))
        // Announced before the restart: the next repeat is a full interval away.
        lastSent.withLock { sent in
            for alert in firing {
                for hook in monitor.config.hooks where alert.id.flatMap({ told[$0]?.contains(hook.name) }) == true {
                    sent[alert.fingerprint, default: [:]][hook.name] = nowMs
                }
            }
        }
        groups.withLock { $0.restore(firing: firing, hooks: monitor.config.hooks, nowMs: nowMs, told: told) }
        let active = try store.activeSilences(nowMs: nowMs)
        silences.withLock { $0 = active }
        // Until the first evaluation, the page and the API tell which of them are held back
        // (they would list a silenced or held-back alert as notified for 15 s).
        let holds = holds(firing: evaluator.withLock { $0.firing }, snapshot: monitor.snapshot(nowMs: nowMs), nowMs: nowMs)
        held.withLock { $0 = holds }
    }

    package var firing: [Alert] { evaluator.withLock { $0.firing } }

    /// Calls `listener` after new outbox rows were written (to wake the deliverer).
    package func onStored(_ listener: @escaping @Sendable () -> Void) {
        stored.withLock { $0.append(listener) }
    }
    package var rules: [AlertRule] { evaluator.withLock { $0.rules } }

    /// Follows the config after a reload.
    package func configChanged() {
        do throws(AlertExpressionError) {
            let rules = try AlertRule.compile(monitor.config)
            evaluator.withLock { $0.setRules(rules) }
        } catch {
            logger.error("alert rules not changed", metadata: ["error": "\(error)"])
        }
    }

    /// Alert changes waiting for the database, and how many were dropped past the bound.
    package var unstoredChanges: (pending: Int, dropped: UInt64) { unstored.withLock { ($0.batches.reduce(0) { $0 + $1.changes.count }, $0.dropped) } }

    /// One evaluation: stores the changes with their notifications (after any that are still
    /// waiting for the database, in order), then the repeats that are due; returns the changes
    /// stored now.
    @discardableResult
    package func evaluate(nowMs: Int64 = Timestamp.nowMs()) -> [AlertChange] {
        let snapshot = monitor.snapshot(nowMs: nowMs)
        let inputs = AlertEvaluator.Inputs(snapshot)
        let changes = evaluator.withLock { $0.evaluate(nowMs: nowMs, inputs) }
        let config = snapshot.config
        let router = HookRouter(hooks: config.hooks, externalURL: config.externalURL ?? "http://\(config.listen)")
        let dropped = unstored.withLock { $0.append(changes, atMs: nowMs, limit: AlertService.maxUnstoredChanges) }
        if dropped > 0 {
            logger.error("alert changes dropped: too many waiting for the database", metadata: ["dropped": "\(dropped)"])
        }
        var storedChanges: [AlertChange] = []
        let holds = self.holds(firing: evaluator.withLock { $0.firing }, snapshot: snapshot, nowMs: nowMs)
        held.withLock { $0 = holds }
        var lateFiring: [Alert] = []
        var lateResolved: [String] = []
        while let batch = unstored.withLock({ $0.batches.first }) {
            var notifiedNow: [String: Set<String>] = [:]
            // Changes that waited for the database each reach every hook, in order; live ones
            // reach webhooks as grouped notifications (see enqueueGroups).
            let late = batch.atMs != nowMs
            do {
                let written = try store.apply(batch.changes, nowMs: batch.atMs) { change, notified in
                    // Sent now: an Alertmanager payload's endsAt counts from now, not from when the
                    // change happened (startsAt and the resolved time keep the change's own times).
                    switch change {
                    case .firing(let alert):
                        guard holds[alert.fingerprint] == nil else { return [] }
                        let entries = router.notifications(change, nowMs: nowMs, webhooks: late)
                        notifiedNow[alert.fingerprint] = Set(entries.map(\.hook))
                        if late { lateFiring.append(alert) }
                        return entries
                    case .resolved(let alert):
                        // Whoever heard it fire hears it resolve, held back or not.
                        let entries = router.notifications(change, nowMs: nowMs, notified: notified, webhooks: late)
                        if late { lateResolved.append(alert.fingerprint) }
                        return entries
                    }
                }
                let waiting = unstored.withLock { unstored -> Int in
                    unstored.batches.removeFirst()
                    return unstored.batches.count
                }
                if batch.atMs != nowMs && waiting == 0 { logger.notice("alert changes stored after the database came back") }
                noteStored(written, atMs: nowMs, notified: notifiedNow)
                storedChanges += written
            } catch  where !StoreError.isTransient(error) {
                // A batch the database will never take (a damaged page, say) must not hold back
                // every later change: it is dropped, logged and counted.
                let count = unstored.withLock { unstored -> Int in
                    let count = unstored.batches.removeFirst().changes.count
                    unstored.dropped += UInt64(count)
                    return count
                }
                logger.error("alert changes dropped: the database refused them for good", metadata: ["error": "\(error)", "changes": "\(count)"])
            } catch {
                let (first, pending) = unstored.withLock { unstored -> (Bool, Int) in
                    defer { unstored.failing = true }
                    return (!unstored.failing, unstored.batches.reduce(0) { $0 + $1.changes.count })
                }
                if first {
                    logger.error(
                        "cannot store alert changes; they are kept in memory and stored in order when the database works again",
                        metadata: [
                            "error": "\(error)", "pending": "\(pending)",
                        ])
                }
                break
            }
        }
        if unstored.withLock({ $0.batches.isEmpty }) { unstored.withLock { $0.failing = false } }
        var wrote = !storedChanges.isEmpty
        let resolvedNow = Dictionary(
            storedChanges.compactMap { change -> (String, Alert)? in
                if case .resolved(let alert) = change { return (alert.fingerprint, alert) } else { return nil }
            }
        ) { _, last in last }
        // Alerts announced one by one after a full disk and still firing: their groups know.
        let stillFiring = Set(firing.map(\.fingerprint))
        let announced = lateFiring.filter { stillFiring.contains($0.fingerprint) }
        if !announced.isEmpty { groups.withLock { $0.restore(firing: announced, hooks: router.hooks, nowMs: nowMs) } }
        // Resolutions announced one by one: their groups need not announce them again.
        if !lateResolved.isEmpty { groups.withLock { $0.forget(Set(lateResolved)) } }
        if enqueueGroups(nowMs: nowMs, router: router, holds: holds, resolved: resolvedNow) { wrote = true }
        if enqueueRepeats(nowMs: nowMs, router: router, holds: holds) { wrote = true }
        if wrote { for listener in stored.withLock({ $0 }) { listener() } }
        return storedChanges
    }

    /// Why each firing alert is held back from notifications, by fingerprint: a silence, a
    /// source it depends on being down (that one pages), or a critical alert of the same source
    /// (which carries the news; its warning and info alerts would only repeat it). An alert about
    /// something other than the outage (a certificate, a domain, an SLA budget) is news of its
    /// own and is not held back by it.
    func holds(firing: [Alert], snapshot: RegistrySnapshot, nowMs: Int64) -> [String: AlertHold] {
        // A silence that ended over an hour ago leaves the list here, so the list grows only with
        // silences in force; one that ended just now stays a while, in case the wall clock
        // jumped forward and comes back (it would otherwise be gone until a restart).
        let active = silences.withLock { list in
            list.removeAll { $0.endsAtMs <= nowMs - HealthWindow.hour }
            return list.filter { $0.endsAtMs > nowMs }
        }
        var critical: [String: String] = [:]
        for alert in firing where alert.severity == "critical" {
            if let source = alert.source, critical[source] == nil { critical[source] = alert.rule }
        }
        var holds: [String: AlertHold] = [:]
        var blocked: [String: [String]] = [:]
        for index in snapshot.records.indices where !snapshot.records[index].source.dependsOn.isEmpty {
            let parents = snapshot.blockedBy(index)
            if !parents.isEmpty { blocked[snapshot.records[index].name] = parents }
        }
        for alert in firing {
            if let silence = active.first(where: { $0.matches(alert, nowMs: nowMs) }) {
                holds[alert.fingerprint] = AlertHold(silenced: true, reason: "silenced" + (silence.comment.isEmpty ? "" : ": \(silence.comment)"))
            } else if let source = alert.source, let window = snapshot.maintenance[source] {
                let note = window.note.isEmpty ? window.window : window.note
                holds[alert.fingerprint] = AlertHold(silenced: true, reason: "maintenance until \(Timestamp.rfc3339(window.endsAtMs)): \(note)")
            } else if let source = alert.source, let parents = blocked[source] {
                holds[alert.fingerprint] = AlertHold(
                    silenced: false, reason: "blocked by \(parents.joined(separator: ", ")), which \(parents.count == 1 ? "is" : "are") down")
            } else if alert.severity != "critical", alert.isAboutOutage, let source = alert.source, let rule = critical[source] {
                holds[alert.fingerprint] = AlertHold(silenced: false, reason: "held back by \(rule), which is critical")
            }
        }
        return holds
    }

    /// Firing alerts not notified now, by fingerprint, with the reason (for the page and API).
    package var heldBack: [String: AlertHold] { held.withLock { $0 } }

    private func noteStored(_ written: [AlertChange], atMs: Int64, notified: [String: Set<String>]) {
        evaluator.withLock { $0.noteStored(written.map(\.alert)) }
        for change in written {
            let alert = change.alert
            lastSent.withLock { sent in
                if alert.firing {
                    for hook in notified[alert.fingerprint] ?? [] { sent[alert.fingerprint, default: [:]][hook] = atMs }
                } else {
                    sent.removeValue(forKey: alert.fingerprint)
                }
            }
            logger.notice(
                alert.firing ? "alert firing" : "alert resolved",
                metadata: [
                    "alertname": "\(alert.rule)", "severity": "\(alert.severity)", "source": "\(alert.source ?? "")",
                ])
        }
    }

    /// Webhook notifications, one per group (see `NotificationGroups`); the groups move on only
    /// once their notifications are queued, so a refused write is planned again next time.
    private func enqueueGroups(nowMs: Int64, router: HookRouter, holds: [String: AlertHold], resolved: [String: Alert]) -> Bool {
        let (sends, next) = groups.withLock { $0.plan(hooks: router.hooks, firing: firing, held: Set(holds.keys), resolved: resolved, nowMs: nowMs) }
        var rows: [(OutboxEntry, Int64)] = []
        for send in sends {
            guard let id = send.alerts.compactMap(\.id).first else { continue }
            guard let hook = router.hooks.first(where: { $0.name == send.hook }) else { continue }
            let payload = ProviderPayloads.body(for: hook, withVendorWords(send), externalURL: router.externalURL, nowMs: nowMs)
            rows.append((OutboxEntry(hook: send.hook, payload: payload), id))
        }
        do {
            if !rows.isEmpty { try store.enqueue(rows, nowMs: nowMs) }
            groups.withLock { $0 = next }
        } catch {
            logger.error("cannot queue notifications; they are planned again at the next evaluation", metadata: ["error": "\(error)"])
            return false
        }
        return !rows.isEmpty
    }

    /// The send with what each outage's vendor says on its own page (`vendor_status`) as of
    /// now, in a `vendor` annotation: firing, whether it reports it yet; resolved, whether and
    /// how late it did.
    private func withVendorWords(_ send: NotificationGroups.Send) -> NotificationGroups.Send {
        var send = send
        let vendors = monitor.config.sources.filter { $0.vendorStatus != nil }
        guard !vendors.isEmpty else { return send }
        for index in send.alerts.indices {
            let alert = send.alerts[index]
            guard alert.isAboutOutage, let name = alert.source, let config = vendors.first(where: { $0.name == name })?.vendorStatus else { continue }
            let view = monitor.vendors.view(config, source: name)
            guard view.state != .unread else { continue }
            let since = alert.annotations["down_since"].flatMap(Timestamp.parseRFC3339)
            send.alerts[index].annotations["vendor"] =
                alert.firing
                ? view.sentence(downSinceMs: since ?? alert.startedAtMs) : since.map { view.sentence(endedOutageSince: $0) } ?? view.sentence(downSinceMs: nil)
        }
        return send
    }

    /// Firing alerts are sent to Alertmanager hooks again before their `endsAt` lapses; one a
    /// hook never heard of (held back until now, or a hook added by a reload) is sent now.
    private func enqueueRepeats(nowMs: Int64, router: HookRouter, holds: [String: AlertHold]) -> Bool {
        var wrote = false
        for alert in firing where holds[alert.fingerprint] == nil {
            guard let id = alert.id else { continue }
            var entries: [OutboxEntry] = []
            var due: [String] = []
            lastSent.withLock { sent in
                // A receiver that groups alerts itself wants each firing one again while it fires.
                for hook in router.hooks where !NotificationProviders.provider(hook).grouped && HookRouter.accepts(hook, alert) {
                    if let last = sent[alert.fingerprint]?[hook.name], nowMs - last < AlertService.alertmanagerRefresh { continue }
                    due.append(hook.name)
                    entries.append(OutboxEntry(hook: hook.name, payload: router.payload(for: hook, .firing(alert), nowMs: nowMs)))
                }
            }
            guard !entries.isEmpty else { continue }
            do {
                try store.enqueue(entries, alertID: id, nowMs: nowMs)
                // Marked sent only once stored: a repeat the database refused is tried again next time.
                lastSent.withLock { sent in for hook in due { sent[alert.fingerprint, default: [:]][hook] = nowMs } }
                wrote = true
            } catch {
                logger.error("cannot queue repeated notifications", metadata: ["error": "\(error)"])
            }
        }
        return wrote
    }

    /// Changes in the order they happened, grouped by evaluation.
    struct UnstoredChanges {
        var batches: [(atMs: Int64, changes: [AlertChange])] = []
        var dropped: UInt64 = 0
        var failing = false

        /// Adds `changes`; drops the oldest past `limit` and returns how many.
        mutating func append(_ changes: [AlertChange], atMs: Int64, limit: Int) -> Int {
            guard !changes.isEmpty else { return 0 }
            batches.append((atMs, changes))
            var excess = batches.reduce(0) { $0 + $1.changes.count } - limit
            var count = 0
            while excess > 0, !batches.isEmpty {
                let take = min(excess, batches[0].changes.count)
                batches[0].changes.removeFirst(take)
                if batches[0].changes.isEmpty { batches.removeFirst() }
                excess -= take
                count += take
            }
            dropped += UInt64(count)
            return count
        }
    }

    /// How long the loop sleeps: the evaluation interval, or less when a group comes due first
    /// (a `group_wait: 5s` waited 15 s); at least a second, so a group whose notification the
    /// database refuses is not planned again in a tight loop.
    package static func nextWait(interval: Duration, groupDueMs: Int64?, nowMs: Int64) -> Duration {
        guard let due = groupDueMs else { return interval }
        return min(interval, max(.seconds(1), .milliseconds(due.addingClamped(nowMs == .min ? .max : -nowMs))))
    }

    /// Evaluates every `alerts.evaluation_interval` (15 s), at once when a source goes down or
    /// comes back up, and when a notification group comes due, until cancelled.
    package func run() async {
        while !Task.isCancelled {
            let wait = AlertService.nextWait(
                interval: monitor.config.alertEvaluationInterval, groupDueMs: groups.withLock { $0.earliestDueMs(hooks: monitor.config.hooks) },
                nowMs: Timestamp.nowMs())
            // A stop must not wait out the interval (serve stops within 5 s).
            await withTaskCancellationHandler {
                await wake.wait(timeout: wait)
            } onCancel: {
                wake.signal()
            }
            if Task.isCancelled { return }
            evaluate()
        }
    }
}
