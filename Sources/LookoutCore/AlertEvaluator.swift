/// Alert rule state as a value-type state machine driven by a clock given as input:
/// inactive → pending (condition true) → firing (true for the rule's `for`) → resolved (false for
/// two evaluations in a row). Pending that turns false ends silently. Per-source rules are held
/// back while Lookout is offline.
public struct AlertEvaluator: Sendable {
    struct Active: Sendable, Equatable {
        var pendingSinceMs: Int64
        var alert: Alert?
        var cleanEvaluations = 0
    }

    /// What the evaluator reads: one lookup per metric, per source or service-wide.
    public struct Inputs {
        public var sources: [String]
        public var offline: Bool
        /// (metric, window, source) → value; nil: no data.
        public var value: (String, Duration?, String?) -> Double?
        /// A source's last user-facing message and recovery suggestion, for annotations.
        public var context: (String) -> (message: String, recovery: String)?

        public init(
            sources: [String], offline: Bool, value: @escaping (String, Duration?, String?) -> Double?,
            context: @escaping (String) -> (message: String, recovery: String)? = { _ in nil }
        ) {
            self.sources = sources
            self.offline = offline
            self.value = value
            self.context = context
        }
    }

    public private(set) var rules: [AlertRule]
    private var active: [String: Active] = [:]
    /// Resolving needs the condition false this many evaluations in a row.
    public static let cleanEvaluationsToResolve = 2

    public init(rules: [AlertRule]) {
        self.rules = rules
    }

    /// The alerts now firing.
    public var firing: [Alert] { active.values.compactMap(\.alert).sorted { $0.startedAtMs < $1.startedAtMs } }

    /// Takes back alerts that were firing before a restart, without announcing them again.
    public mutating func restore(firing alerts: [Alert]) {
        for alert in alerts where alert.firing {
            active[alert.fingerprint] = Active(pendingSinceMs: alert.startedAtMs, alert: alert)
        }
    }

    /// Replaces the rules (a reload); alerts of rules that are gone resolve at the next evaluation.
    public mutating func setRules(_ rules: [AlertRule]) {
        self.rules = rules
    }

    public mutating func evaluate(nowMs: Int64, _ inputs: Inputs) -> [AlertChange] {
        var changes: [AlertChange] = []
        var seen = Set<String>()
        for rule in rules {
            let scopes: [String?] = rule.expression.perSource ? inputs.sources.map { $0 } : [nil]
            for source in scopes {
                let fingerprint = AlertEvaluator.fingerprint(rule: rule, source: source)
                seen.insert(fingerprint)
                if source != nil && inputs.offline { continue }  // held back while offline
                let holds = rule.expression.holds { metric, window in inputs.value(metric, window, source) }
                if let change = step(fingerprint, rule: rule, source: source, holds: holds, nowMs: nowMs, inputs: inputs) {
                    changes.append(change)
                }
            }
        }
        // Alerts whose rule or source is gone resolve now.
        for (fingerprint, entry) in active where !seen.contains(fingerprint) {
            active.removeValue(forKey: fingerprint)
            if var alert = entry.alert {
                alert.resolvedAtMs = nowMs
                changes.append(.resolved(alert))
            }
        }
        return changes
    }

    private mutating func step(
        _ fingerprint: String, rule: AlertRule, source: String?, holds: Bool, nowMs: Int64, inputs: Inputs
    ) -> AlertChange? {
        guard var entry = active[fingerprint] else {
            guard holds else { return nil }
            active[fingerprint] = Active(pendingSinceMs: nowMs)
            return promote(fingerprint, rule: rule, source: source, nowMs: nowMs, inputs: inputs)
        }
        if holds {
            entry.cleanEvaluations = 0
            active[fingerprint] = entry
            return entry.alert == nil ? promote(fingerprint, rule: rule, source: source, nowMs: nowMs, inputs: inputs) : nil
        }
        guard var alert = entry.alert else {
            active.removeValue(forKey: fingerprint)  // pending that never fired
            return nil
        }
        entry.cleanEvaluations += 1
        guard entry.cleanEvaluations >= AlertEvaluator.cleanEvaluationsToResolve else {
            active[fingerprint] = entry
            return nil
        }
        active.removeValue(forKey: fingerprint)
        alert.resolvedAtMs = nowMs
        return .resolved(alert)
    }

    private mutating func promote(_ fingerprint: String, rule: AlertRule, source: String?, nowMs: Int64, inputs: Inputs) -> AlertChange? {
        guard var entry = active[fingerprint], nowMs - entry.pendingSinceMs >= rule.forDuration.totalMilliseconds else { return nil }
        var labels = rule.labels
        labels["alertname"] = rule.name
        labels["severity"] = rule.severity
        if let source { labels["source"] = source }
        var annotations: [String: String] = [:]
        for (key, template) in rule.annotations {
            annotations[key] = template.replacingOccurrences(of: "{source}", with: source ?? "")
        }
        if let source, let context = inputs.context(source) {
            annotations["description"] = annotations["description"] ?? context.message
            annotations["recovery"] = annotations["recovery"] ?? context.recovery
        }
        let alert = Alert(
            fingerprint: fingerprint, rule: rule.name, source: source, severity: rule.severity, labels: labels,
            annotations: annotations, startedAtMs: nowMs, resolvedAtMs: nil)
        entry.alert = alert
        active[fingerprint] = entry
        return .firing(alert)
    }

    /// A stable id of the rule and source: FNV-1a 64 in hex.
    public static func fingerprint(rule: AlertRule, source: String?) -> String {
        let text = rule.name + "\u{1F}" + (source ?? "") + "\u{1F}" + rule.labels.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",")
        let hash = ProbeScheduler.stableHash(text)
        let digits = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
