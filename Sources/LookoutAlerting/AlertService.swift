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
    private let rulesError = Mutex<String?>(nil)

    public init(monitor: Monitor, store: AlertStore, logger: Logger) {
        self.monitor = monitor
        self.store = store
        self.logger = logger
        let rules = (try? AlertRule.compile(monitor.config.alertRules)) ?? AlertRule.defaults
        evaluator = Mutex(AlertEvaluator(rules: rules))
        monitor.onReload { [weak self] in self?.configChanged() }
    }

    /// Takes back the alerts firing before a restart, and the silences still in force.
    public func restore(nowMs: Int64 = AlertService.now()) throws {
        let firing = try store.firing()
        evaluator.withLock { $0.restore(firing: firing) }
        let active = try store.activeSilences(nowMs: nowMs)
        silences.withLock { $0 = active }
    }

    public var firing: [Alert] { evaluator.withLock { $0.firing } }
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

    /// One evaluation: returns the changes it stored.
    @discardableResult
    public func evaluate(nowMs: Int64 = AlertService.now()) -> [AlertChange] {
        let inputs = monitor.alertInputs(nowMs: nowMs)
        let changes = evaluator.withLock { $0.evaluate(nowMs: nowMs, inputs) }
        guard !changes.isEmpty else { return [] }
        let config = monitor.config
        let router = HookRouter(hooks: config.hooks, externalURL: config.externalURL ?? "http://\(config.listen)")
        let active = silences.withLock { $0.filter { $0.endsAtMs > nowMs } }
        do {
            let stored = try store.apply(changes, nowMs: nowMs) { change in
                if active.contains(where: { $0.matches(change.alert, nowMs: nowMs) }) { return [] }
                return router.notifications(change, nowMs: nowMs)
            }
            for change in stored {
                let alert = change.alert
                logger.notice(alert.firing ? "alert firing" : "alert resolved", metadata: [
                    "alertname": "\(alert.rule)", "severity": "\(alert.severity)", "source": "\(alert.source ?? "")",
                ])
            }
            return stored
        } catch {
            logger.error("cannot store alert changes", metadata: ["error": "\(error)", "changes": "\(changes.count)"])
            return []
        }
    }

    @discardableResult
    public func addSilence(_ silence: Silence) throws -> Int64 {
        let id = try store.add(silence)
        var saved = silence
        saved.id = id
        silences.withLock { $0.append(saved) }
        return id
    }

    public func activeSilences(nowMs: Int64 = AlertService.now()) -> [Silence] {
        silences.withLock { $0.filter { $0.endsAtMs > nowMs } }
    }

    /// Evaluates every `alerts.evaluation_interval` (15 s) until cancelled.
    public func run() async {
        while !Task.isCancelled {
            do { try await Task.sleep(for: monitor.config.alertEvaluationInterval) } catch { return }
            evaluate()
        }
    }

    public static func now() -> Int64 {
        Int64(Date().timeIntervalSince1970 * 1000)
    }
}
