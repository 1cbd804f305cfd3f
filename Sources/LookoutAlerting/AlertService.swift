import Foundation
import Logging
import LookoutCore
import LookoutStore
import Synchronization

/// Evaluates the alert rules every 15 seconds, stores each firing and resolved change together with
/// its outbox rows (none while silenced), and keeps firing alerts across restarts.
public final class AlertService: Sendable {

    let monitor: Monitor
    let store: AlertStore
    let logger: Logger
    private let evaluator: Mutex<AlertEvaluator>
    private let silences = Mutex<[Silence]>([])
    /// When each (alert, hook) pair was last notified, for repeats and Alertmanager refreshes.
    private let lastSent = Mutex<[String: Int64]>([:])
    private let stored = Mutex<[@Sendable () -> Void]>([])
    /// Alertmanager forgets a firing alert at its `endsAt`; Lookout pushes it again this often.
    public static let alertmanagerRefresh: Int64 = 60_000

    public init(monitor: Monitor, store: AlertStore, logger: Logger) {
        self.monitor = monitor
        self.store = store
        self.logger = logger
        let rules = (try? AlertRule.compile(monitor.config.alertRules)) ?? AlertRule.defaults
        evaluator = Mutex(AlertEvaluator(rules: rules))
        monitor.onReload { [weak self] in self?.configChanged() }
    }

    /// Takes back the alerts firing before a restart, and the silences still in force.
    public func restore(nowMs: Int64 = Timestamp.nowMs()) throws {
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

    public var firing: [Alert] { evaluator.withLock { $0.firing } }

    /// Calls `listener` after new outbox rows were written (to wake the deliverer).
    public func onStored(_ listener: @escaping @Sendable () -> Void) {
        stored.withLock { $0.append(listener) }
    }
    public var rules: [AlertRule] { evaluator.withLock { $0.rules } }

    /// Follows the config after a reload.
    public func configChanged() {
        do throws(AlertExpressionError) {
            let rules = try AlertRule.compile(monitor.config.alertRules)
            evaluator.withLock { $0.setRules(rules) }
        } catch {
            logger.error("alert rules not changed", metadata: ["error": "\(error)"])
        }
    }

    /// One evaluation: stores the changes with their notifications, then the repeats that are
    /// due; returns the changes.
    @discardableResult
    public func evaluate(nowMs: Int64 = Timestamp.nowMs()) -> [AlertChange] {
        let inputs = monitor.alertInputs(nowMs: nowMs)
        let changes = evaluator.withLock { $0.evaluate(nowMs: nowMs, inputs) }
        let config = monitor.config
        let router = HookRouter(hooks: config.hooks, externalURL: config.externalURL ?? "http://\(config.listen)")
        let active = silences.withLock { $0.filter { $0.endsAtMs > nowMs } }
        func silenced(_ alert: Alert) -> Bool { active.contains { $0.matches(alert, nowMs: nowMs) } }
        var wrote = false
        var storedChanges: [AlertChange] = []
        if !changes.isEmpty {
            do {
                storedChanges = try store.apply(changes, nowMs: nowMs) { change in
                    silenced(change.alert) ? [] : router.notifications(change, nowMs: nowMs)
                }
                let ids = storedChanges.map(\.alert)
                evaluator.withLock { $0.noteStored(ids) }
                for change in storedChanges {
                    let alert = change.alert
                    wrote = true
                    lastSent.withLock { sent in
                        for hook in config.hooks {
                            if alert.firing { sent[AlertService.key(alert, hook)] = nowMs } else { sent.removeValue(forKey: AlertService.key(alert, hook)) }
                        }
                    }
                    logger.notice(alert.firing ? "alert firing" : "alert resolved", metadata: [
                        "alertname": "\(alert.rule)", "severity": "\(alert.severity)", "source": "\(alert.source ?? "")",
                    ])
                }
            } catch {
                logger.error("cannot store alert changes", metadata: ["error": "\(error)", "changes": "\(changes.count)"])
            }
        }
        if enqueueRepeats(nowMs: nowMs, router: router, silenced: silenced) { wrote = true }
        if wrote { for listener in stored.withLock({ $0 }) { listener() } }
        return storedChanges
    }

    /// Firing alerts are sent again: to Alertmanager before their `endsAt` lapses, to webhooks
    /// every `repeat_interval`.
    private func enqueueRepeats(nowMs: Int64, router: HookRouter, silenced: (Alert) -> Bool) -> Bool {
        var wrote = false
        for alert in firing where !silenced(alert) {
            guard let id = alert.id else { continue }
            var entries: [OutboxEntry] = []
            lastSent.withLock { sent in
                for hook in router.hooks where HookRouter.accepts(hook, alert) {
                    let key = AlertService.key(alert, hook)
                    let every = hook.type == .alertmanager ? AlertService.alertmanagerRefresh : hook.repeatInterval.totalMilliseconds
                    guard nowMs - (sent[key] ?? nowMs) >= every else {
                        if sent[key] == nil { sent[key] = nowMs }
                        continue
                    }
                    sent[key] = nowMs
                    entries.append(OutboxEntry(hook: hook.name, payload: router.payload(for: hook, .firing(alert), nowMs: nowMs)))
                }
            }
            guard !entries.isEmpty else { continue }
            do {
                try store.enqueue(entries, alertID: id, nowMs: nowMs)
                wrote = true
            } catch {
                logger.error("cannot queue repeated notifications", metadata: ["error": "\(error)"])
            }
        }
        return wrote
    }

    static func key(_ alert: Alert, _ hook: HookConfig) -> String {
        alert.fingerprint + "|" + hook.name
    }

    @discardableResult
    public func addSilence(_ silence: Silence) throws -> Int64 {
        let id = try store.add(silence)
        var saved = silence
        saved.id = id
        silences.withLock { $0.append(saved) }
        return id
    }

    public func activeSilences(nowMs: Int64 = Timestamp.nowMs()) -> [Silence] {
        silences.withLock { $0.filter { $0.endsAtMs > nowMs } }
    }

    /// Evaluates every `alerts.evaluation_interval` (15 s) until cancelled.
    public func run() async {
        while !Task.isCancelled {
            do { try await Task.sleep(for: monitor.config.alertEvaluationInterval) } catch { return }
            evaluate()
        }
    }
}
