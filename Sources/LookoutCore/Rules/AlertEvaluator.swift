/// Alert rule state as a value-type state machine driven by a clock given as input:
/// inactive → pending (condition true) → firing (true for the rule's `for`) → resolved (false for
/// two evaluations in a row). Pending that turns false ends silently. Per-source rules are held
/// back while Lookout is offline; a source's paging rules (critical and warning) fire only while
/// it is down, and resolve at the evaluation that finds it up again.
package struct AlertEvaluator: Sendable {
    struct Active: Sendable, Equatable {
        var pendingSinceMs: Int64
        var alert: Alert?
        var cleanEvaluations = 0
    }

    /// What the evaluator reads: one lookup per metric, per source or service-wide.
    /// A source's cause, for the annotations of its alerts.
    package struct Context: Sendable, Equatable {
        /// The user-facing message of the upstream's last failure (never "circuit open").
        package var message: String
        package var recovery: String
        /// When the source went down; nil while it is up.
        package var downSinceMs: Int64?

        package init(message: String, recovery: String, downSinceMs: Int64? = nil) {
            self.message = message
            self.recovery = recovery
            self.downSinceMs = downSinceMs
        }
    }

    package struct Inputs {
        package typealias Lookup = (AlertMetric, Duration?) -> Double?
        package var sources: [String]
        package var offline: Bool
        /// The service-wide lookup: (metric, window) → value; nil: no data.
        package var service: Lookup
        /// The lookup for one source, fetched once per source and evaluation.
        package var source: (String) -> Lookup
        /// What a firing alert of a source says about it: the upstream's cause and since when.
        package var context: (String) -> Context?
        /// Whether a source is down (its outage policy): the paging rules of a source that is
        /// not fire nothing, and resolve at once when it comes back.
        package var down: (String) -> Bool
        /// What a source's alert texts may name beyond `{source}`: `{sla_budget}` → "…".
        package var notes: (String) -> [String: String] = { _ in [:] }

        package init(
            sources: [String], offline: Bool, down: @escaping (String) -> Bool, service: @escaping Lookup,
            source: @escaping (String) -> Lookup, context: @escaping (String) -> Context? = { _ in nil }
        ) {
            self.sources = sources
            self.offline = offline
            self.down = down
            self.service = service
            self.source = source
            self.context = context
        }

        /// One lookup for everything: (metric, window, source or nil) → value; a source is down
        /// while `down` says so (by default: while its `down` metric is 1).
        package init(
            sources: [String], offline: Bool, value: @escaping (AlertMetric, Duration?, String?) -> Double?,
            down: ((String) -> Bool)? = nil, context: @escaping (String) -> Context? = { _ in nil }
        ) {
            self.init(
                sources: sources, offline: offline, down: down ?? { value(.down, nil, $0) == 1 }, service: { value($0, $1, nil) },
                source: { source in { value($0, $1, source) } }, context: context)
        }
    }

    struct Key: Hashable, Sendable {
        var rule: String
        var source: String?
    }

    package private(set) var rules: [AlertRule]
    private var active: [Key: Active] = [:]
    /// Resolving needs the condition false this many evaluations in a row.
    package static let cleanEvaluationsToResolve = 2

    package init(rules: [AlertRule]) {
        self.rules = rules
    }

    /// The alerts now firing.
    package var firing: [Alert] { active.values.compactMap(\.alert).sorted { $0.startedAtMs < $1.startedAtMs } }

    /// Notes the stored row ids of alerts (after they were written).
    package mutating func noteStored(_ alerts: [Alert]) {
        for alert in alerts where alert.firing {
            let key = Key(rule: alert.rule, source: alert.source)
            // The same episode: a stored row of an earlier episode of this rule and source (kept
            // waiting while the database was down) must not lend its id to the current one.
            if let current = active[key]?.alert, current.fingerprint == alert.fingerprint, current.startedAtMs == alert.startedAtMs {
                active[key]?.alert?.id = alert.id
            }
        }
    }

    /// Takes back alerts that were firing before a restart, without announcing them again; a rule
    /// and source already being tracked (the database opened late) keep what they have.
    package mutating func restore(firing alerts: [Alert]) {
        for alert in alerts where alert.firing {
            let key = Key(rule: alert.rule, source: alert.source)
            if active[key] == nil { active[key] = Active(pendingSinceMs: alert.startedAtMs, alert: alert) }
        }
    }

    /// Replaces the rules (a reload); alerts of rules that are gone resolve at the next evaluation.
    package mutating func setRules(_ rules: [AlertRule]) {
        self.rules = rules
    }

    package mutating func evaluate(nowMs: Int64, _ inputs: Inputs) -> [AlertChange] {
        var changes: [AlertChange] = []
        for rule in rules where !rule.expression.perSource {
            let holds = rule.expression.verdict(inputs.service)
            if let change = step(Key(rule: rule.name, source: nil), rule: rule, holds: holds, nowMs: nowMs, inputs: inputs) {
                changes.append(change)
            }
        }
        let perSource = rules.filter { $0.expression.perSource }
        if !inputs.offline && !perSource.isEmpty {  // per-source alerts are held back while offline
            for source in inputs.sources {
                let lookup = inputs.source(source)
                let down = inputs.down(source)
                for rule in perSource {
                    // A paging rule tells of outages: a source that is up fires nothing, and its
                    // alerts resolve with the outage, whatever a backward-looking window says.
                    let key = Key(rule: rule.name, source: source)
                    if rule.followsOutage && !down {
                        if let change = endWithOutage(key, nowMs: nowMs) { changes.append(change) }
                        continue
                    }
                    let holds = rule.expression.verdict(lookup)
                    if let change = step(key, rule: rule, holds: holds, nowMs: nowMs, inputs: inputs) {
                        changes.append(change)
                    }
                }
            }
        }
        // Alerts whose rule or source is gone resolve now.
        let ruleNames = Set(rules.map(\.name))
        let sources = Set(inputs.sources)
        for (key, entry) in active where !ruleNames.contains(key.rule) || key.source.map({ !sources.contains($0) }) == true {
            active.removeValue(forKey: key)
            if var alert = entry.alert {
                alert.resolvedAtMs = nowMs
                changes.append(.resolved(alert))
            }
        }
        return changes
    }

    /// The source is up: a pending alert ends, a firing one resolves now.
    private mutating func endWithOutage(_ key: Key, nowMs: Int64) -> AlertChange? {
        guard let entry = active.removeValue(forKey: key), var alert = entry.alert else { return nil }
        alert.resolvedAtMs = nowMs
        return .resolved(alert)
    }

    /// `holds` nil: the data to decide is missing, and the alert stays as it is.
    private mutating func step(_ key: Key, rule: AlertRule, holds: Bool?, nowMs: Int64, inputs: Inputs) -> AlertChange? {
        // One lookup, then changes in place: this runs for every rule and source.
        guard let index = active.index(forKey: key) else {
            guard holds == true else { return nil }
            active[key] = Active(pendingSinceMs: nowMs)
            return promote(key, rule: rule, nowMs: nowMs, inputs: inputs)
        }
        guard let holds else { return nil }
        let firing = active.values[index].alert != nil
        if holds {
            active.values[index].cleanEvaluations = 0
            return firing ? nil : promote(key, rule: rule, nowMs: nowMs, inputs: inputs)
        }
        guard firing else {
            active.remove(at: index)  // pending that never fired
            return nil
        }
        active.values[index].cleanEvaluations += 1
        guard active.values[index].cleanEvaluations >= AlertEvaluator.cleanEvaluationsToResolve else { return nil }
        guard var alert = active.remove(at: index).value.alert else { return nil }
        alert.resolvedAtMs = nowMs
        return .resolved(alert)
    }

    private mutating func promote(_ key: Key, rule: AlertRule, nowMs: Int64, inputs: Inputs) -> AlertChange? {
        let source = key.source
        guard var entry = active[key], nowMs - entry.pendingSinceMs >= rule.forDuration.totalMilliseconds else { return nil }
        var labels = rule.labels
        labels["alertname"] = rule.name
        labels["severity"] = rule.severity
        if let source { labels["source"] = source }
        var annotations: [String: String] = [:]
        let notes = source.map(inputs.notes) ?? [:]
        for (key, template) in rule.annotations {
            var text = template.replacingOccurrences(of: "{source}", with: source ?? "")
            for (name, value) in notes where text.contains("{\(name)}") { text = text.replacingOccurrences(of: "{\(name)}", with: value) }
            annotations[key] = text
        }
        // A paging rule about something a working source can have (a certificate about to
        // expire) is no outage: it says so, and takes no cause or down time from the source.
        let outage = rule.followsOutage || rule.severity == "info"
        if !outage { annotations[Alert.notAnOutage] = "false" }
        if outage, let source, let context = inputs.context(source) {
            // The notification adds how long it has been down when it is sent (down_for).
            if let since = context.downSinceMs { annotations["down_since"] = Timestamp.rfc3339(since) }
            annotations["description"] = annotations["description"] ?? context.message
            annotations["recovery"] = annotations["recovery"] ?? context.recovery
        }
        let alert = Alert(
            fingerprint: AlertEvaluator.fingerprint(rule: rule, source: source), rule: rule.name, source: source, severity: rule.severity, labels: labels,
            annotations: annotations, startedAtMs: nowMs, resolvedAtMs: nil)
        entry.alert = alert
        active[key] = entry
        return .firing(alert)
    }

    /// A stable id of the rule and source: FNV-1a 64 in hex.
    package static func fingerprint(rule: AlertRule, source: String?) -> String {
        let text =
            rule.name + "\u{1F}" + (source ?? "") + "\u{1F}" + rule.labels.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",")
        let hash = StableHash.of(text)
        let digits = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
