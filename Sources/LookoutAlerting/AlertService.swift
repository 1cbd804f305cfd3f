import Foundation
import Logging
import LookoutCore
import LookoutStore
import Synchronization

/// Evaluates the alert rules every 15 seconds, stores each firing and resolved change together with
/// its outbox rows (none while silenced), and keeps firing alerts across restarts.
package final class AlertService: Sendable {

    let monitor: Monitor
    let store: AlertStore
    let logger: Logger
    private let evaluator: Mutex<AlertEvaluator>
    private let silences = Mutex<[Silence]>([])
    /// When each (alert, hook) pair was last notified, for repeats and Alertmanager refreshes.
    private let lastSent = Mutex<[String: Int64]>([:])
    private let stored = Mutex<[@Sendable () -> Void]>([])
    /// Changes the database refused (disk full, read-only file), oldest first, each with the time
    /// it happened; written before any newer change once writes work again.
    private let unstored = Mutex(UnstoredChanges())
    /// At most this many changes wait in memory for the database; past it the oldest are dropped
    /// (counted in `lookout_alert_changes_dropped_total` and logged).
    package static let maxUnstoredChanges = 10_000
    /// Alertmanager forgets a firing alert at its `endsAt`; Lookout pushes it again this often.
    package static let alertmanagerRefresh: Int64 = 60_000

    package init(monitor: Monitor, store: AlertStore, logger: Logger) {
        self.monitor = monitor
        self.store = store
        self.logger = logger
        let rules = (try? AlertRule.compile(monitor.config.alertRules)) ?? AlertRule.defaults
        evaluator = Mutex(AlertEvaluator(rules: rules))
        monitor.onReload { [weak self] in self?.configChanged() }
    }

    /// Takes back the alerts firing before a restart, and the silences still in force.
    package func restore(nowMs: Int64 = Timestamp.nowMs()) throws {
        let firing = try store.firing()
        evaluator.withLock { $0.restore(firing: firing) }
        // Announced before the restart: the next repeat is a full interval away.
        lastSent.withLock { sent in
            for alert in firing {
                for hook in monitor.config.hooks { sent[AlertService.key(alert, hook)] = nowMs }
            }
        }
        let active = try store.activeSilences(nowMs: nowMs)
        silences.withLock { $0 = active }
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
            let rules = try AlertRule.compile(monitor.config.alertRules)
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
        while let batch = unstored.withLock({ $0.batches.first }) {
            let active = silences.withLock { $0.filter { $0.endsAtMs > batch.atMs } }
            func silenced(_ alert: Alert) -> Bool { active.contains { $0.matches(alert, nowMs: batch.atMs) } }
            do {
                let written = try store.apply(batch.changes, nowMs: batch.atMs) { change in
                    // Sent now: an Alertmanager payload's endsAt counts from now, not from when the
                    // change happened (startsAt and the resolved time keep the change's own times).
                    silenced(change.alert) ? [] : router.notifications(change, nowMs: nowMs)
                }
                let waiting = unstored.withLock { unstored -> Int in
                    unstored.batches.removeFirst()
                    return unstored.batches.count
                }
                if batch.atMs != nowMs && waiting == 0 { logger.notice("alert changes stored after the database came back") }
                noteStored(written, atMs: nowMs, hooks: config.hooks)
                storedChanges += written
            } catch where !StoreError.isTransient(error) {
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
                    logger.error("cannot store alert changes; they are kept in memory and stored in order when the database works again", metadata: [
                        "error": "\(error)", "pending": "\(pending)",
                    ])
                }
                break
            }
        }
        if unstored.withLock({ $0.batches.isEmpty }) { unstored.withLock { $0.failing = false } }
        var wrote = !storedChanges.isEmpty
        let active = silences.withLock { $0.filter { $0.endsAtMs > nowMs } }
        func silenced(_ alert: Alert) -> Bool { active.contains { $0.matches(alert, nowMs: nowMs) } }
        if enqueueRepeats(nowMs: nowMs, router: router, silenced: silenced) { wrote = true }
        if wrote { for listener in stored.withLock({ $0 }) { listener() } }
        return storedChanges
    }

    private func noteStored(_ written: [AlertChange], atMs: Int64, hooks: [HookConfig]) {
        evaluator.withLock { $0.noteStored(written.map(\.alert)) }
        for change in written {
            let alert = change.alert
            lastSent.withLock { sent in
                for hook in hooks {
                    if alert.firing { sent[AlertService.key(alert, hook)] = atMs } else { sent.removeValue(forKey: AlertService.key(alert, hook)) }
                }
            }
            logger.notice(alert.firing ? "alert firing" : "alert resolved", metadata: [
                "alertname": "\(alert.rule)", "severity": "\(alert.severity)", "source": "\(alert.source ?? "")",
            ])
        }
    }

    /// Firing alerts are sent again: to Alertmanager before their `endsAt` lapses, to webhooks
    /// every `repeat_interval`.
    private func enqueueRepeats(nowMs: Int64, router: HookRouter, silenced: (Alert) -> Bool) -> Bool {
        var wrote = false
        for alert in firing where !silenced(alert) {
            guard let id = alert.id else { continue }
            var entries: [OutboxEntry] = []
            var due: [String] = []
            lastSent.withLock { sent in
                for hook in router.hooks where HookRouter.accepts(hook, alert) {
                    let key = AlertService.key(alert, hook)
                    let every = hook.type == .alertmanager ? AlertService.alertmanagerRefresh : hook.repeatInterval.totalMilliseconds
                    guard nowMs - (sent[key] ?? nowMs) >= every else {
                        if sent[key] == nil { sent[key] = nowMs }
                        continue
                    }
                    due.append(key)
                    entries.append(OutboxEntry(hook: hook.name, payload: router.payload(for: hook, .firing(alert), nowMs: nowMs)))
                }
            }
            guard !entries.isEmpty else { continue }
            do {
                try store.enqueue(entries, alertID: id, nowMs: nowMs)
                // Marked sent only once stored: a repeat the database refused is tried again next time.
                lastSent.withLock { sent in for key in due { sent[key] = nowMs } }
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

    static func key(_ alert: Alert, _ hook: HookConfig) -> String {
        alert.fingerprint + "|" + hook.name
    }

    @discardableResult
    package func addSilence(_ silence: Silence) throws -> Int64 {
        let id = try store.add(silence)
        var saved = silence
        saved.id = id
        silences.withLock { $0.append(saved) }
        return id
    }

    package func activeSilences(nowMs: Int64 = Timestamp.nowMs()) -> [Silence] {
        silences.withLock { $0.filter { $0.endsAtMs > nowMs } }
    }

    /// Evaluates every `alerts.evaluation_interval` (15 s) until cancelled.
    package func run() async {
        while !Task.isCancelled {
            do { try await Task.sleep(for: monitor.config.alertEvaluationInterval) } catch { return }
            evaluate()
        }
    }
}
