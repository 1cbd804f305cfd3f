/// A compiled alert rule: its condition, how long it must hold, and what the alert says.
package struct AlertRule: Sendable, Equatable {
    package var name: String
    package var severity: String
    package var expression: AlertExpression
    package var forDuration: Duration
    package var labels: [String: String]
    /// `{source}` and `{value}` are replaced when the alert fires.
    package var annotations: [String: String]

    /// A per-source rule that pages (critical or warning) tells of the source's outage: it fires
    /// only while the source is down and resolves when it is up again. Info rules (a recovery
    /// after retries, a breaker that opened) report events of a source that may be up, and so
    /// does a rule on what a working source can have (a certificate about to expire).
    package var followsOutage: Bool {
        severity != "info" && expression.metrics.allSatisfy(\.followsOutage)
    }

    /// The same condition over `/metrics` in PromQL, for `deploy/lookout-rules.yml` (the
    /// defaults have one; `PrometheusRules` adds the outage gate of a paging per-source rule).
    package var promQL: String?

    package init(
        name: String, severity: String, expression: AlertExpression, forDuration: Duration = .zero, labels: [String: String] = [:],
        annotations: [String: String] = [:]
    ) {
        self.name = name
        self.severity = severity
        self.expression = expression
        self.forDuration = forDuration
        self.labels = labels
        self.annotations = annotations
    }

    /// The default rules, each evaluated every 15 s. `SourceDown` tells of an outage as soon as
    /// the source's outage policy opens one (two failed probes in a row by default); the others
    /// add what they measure to it while it lasts (notifications group them by source, and a
    /// critical alert holds back the same source's warnings). Service-wide signals that name no
    /// source are info (shown on the page, sent to hooks that ask for info), but for
    /// `AllSourcesFailing`, which names every source, and `NetworkOffline`, which is Lookout's own.
    package static let defaults: [AlertRule] = [
        rule(
            "SourceDown", "critical", "down == 1", .zero, "{source} is down",
            "lookout_source_down == 1"),
        rule(
            "AllSourcesFailing", "critical", "sources_failing_ratio >= 1", .seconds(300), "Every source is failing",
            "count(lookout_probe_success == 0) == count(lookout_probe_success) and count(lookout_probe_success) > 0"),
        rule(
            "SourceErrorRateCritical", "critical", "error_rate[2m] > 0.5", .seconds(120), "{source}: more than half of the probes failed in the last 2 minutes",
            "(sum by (source) (increase(lookout_probes_total{result=\"failure\"}[2m])) / sum by (source) (increase(lookout_probes_total[2m]))) > 0.5"),
        rule(
            "AllCircuitsOpen", "info", "circuits_open_ratio >= 1", .zero, "Every circuit breaker is open",
            #"count(lookout_circuit_breaker_state{state=~"open|half_open|forced_open"} == 1) == count(lookout_circuit_breaker_state == 1)"#),
        rule(
            "SourceErrorRateHigh", "warning", "error_rate[5m] > 0.2", .seconds(300), "{source}: more than 20% of the probes failed in the last 5 minutes",
            #"lookout_error_ratio{window="5m"} > 0.2"#),
        rule(
            "RetrySuccessRateLow", "warning", "retry_success_ratio[15m] < 0.5 and retries[15m] >= 10", .zero, "{source}: most retries do not help",
            "lookout_retry_success_ratio < 0.5 and on(source) sum by (source) (increase(lookout_retries_total[15m])) >= 10"),
        rule(
            "PartialFailuresHigh", "info", "partial_failure_ratio[15m] > 0.3", .zero,
            "Some sources fail while others work, in more than 30% of the last rounds",
            "lookout_partial_failure_ratio > 0.3"),
        rule(
            "SLOBurnRateFast", "critical", "burn_rate[1h] > 14.4 and burn_rate[5m] > 14.4", .zero,
            "{source}: the error budget burns more than 14.4 times too fast",
            "(sum by (source) (increase(lookout_probes_total{result=\"failure\"}[1h])) / sum by (source) (increase(lookout_probes_total[1h]))) > (14.4 * 0.001) and (sum by (source) (increase(lookout_probes_total{result=\"failure\"}[5m])) / sum by (source) (increase(lookout_probes_total[5m]))) > (14.4 * 0.001)"
        ),
        rule(
            "SLOBurnRateSlow", "warning", "burn_rate[6h] > 6 and burn_rate[30m] > 6", .zero, "{source}: the error budget burns more than 6 times too fast",
            "(sum by (source) (increase(lookout_probes_total{result=\"failure\"}[6h])) / sum by (source) (increase(lookout_probes_total[6h]))) > (6 * 0.001) and (sum by (source) (increase(lookout_probes_total{result=\"failure\"}[30m])) / sum by (source) (increase(lookout_probes_total[30m]))) > (6 * 0.001)"
        ),
        rule(
            "CircuitOpened", "info", "breaker_open == 1 or breaker_opens[1m] > 0", .zero, "{source}: the circuit breaker opened; calls are paused",
            #"increase(lookout_circuit_breaker_opens_total[1m]) > 0 or lookout_circuit_breaker_state{state=~"open|half_open|forced_open"} == 1"#),
        rule(
            "CircuitFlapping", "info", "breaker_opens[15m] >= 3", .zero, "{source}: the circuit breaker opened 3 or more times in 15 minutes",
            "increase(lookout_circuit_breaker_opens_total[15m]) >= 3"),
        rule(
            "InsecureSourceBlocked", "info", "insecure_blocked == 1", .zero, "{source}: a plain-http URL was refused",
            #"increase(lookout_errors_total{category="insecure_blocked"}[5m]) > 0"#),
        rule(
            "CertificateExpiresSoon", "warning", "cert_days_left < 14", .zero, "{source}: its TLS certificate expires in less than 14 days",
            "(lookout_tls_cert_expiry_timestamp_seconds - time()) / 86400 < 14"),
        rule(
            "DomainExpiresSoon", "warning", "domain_days_left < 30", .zero, "{source}: its domain's registration expires in less than 30 days",
            "(lookout_domain_expiry_timestamp_seconds - time()) / 86400 < 30"),
        rule(
            "SLABudgetExhausted", "warning", "sla_budget_left <= 0", .zero, "{sla_budget}",
            "lookout_sla_budget_remaining_ratio <= 0", description: "The SLA report and its evidence: {sla_report}"),
        rule(
            "SLAPeriodMissed", "warning", "sla_previous_missed == 1", .zero, "{sla_missed}",
            #"lookout_sla_uptime_ratio{period="previous"} < ignoring(period) lookout_sla_target_ratio"#,
            description: "The SLA report to file the claim with: {sla_report}. The alert resolves when the claim window closes."),
        rule(
            "RecoveredAfterRetries", "info", "recovered_after_retries == 1", .zero, "{source}: succeeded only after retries",
            "increase(lookout_retries_total[5m]) > 0 and on(source) lookout_probe_success == 1"),
        rule(
            "NetworkOffline", "critical", "network_offline == 1", .zero, "Lookout itself is offline; per-source alerts are held back",
            "lookout_network_online == 0"),
    ]

    /// The default rules as `changes` leave them (`alerts.defaults`): a rule turned off is gone,
    /// a changed one keeps every field not given.
    package static func defaults(changing changes: [String: DefaultRuleChange]) throws(AlertExpressionError) -> [AlertRule] {
        var rules: [AlertRule] = []
        for var rule in defaults {
            switch changes[rule.name] {
            case nil: break
            case .off: continue
            case .change(let severity, let expr, let forDuration, let labels, let annotations):
                if let severity { rule.severity = severity }
                if let expr { rule.expression = try AlertExpressionParser.parse(expr) }
                if let forDuration { rule.forDuration = forDuration }
                rule.labels.merge(labels) { _, new in new }
                rule.annotations.merge(annotations) { _, new in new }
            }
            rules.append(rule)
        }
        return rules
    }

    private static func rule(
        _ name: String, _ severity: String, _ expression: String, _ forDuration: Duration, _ summary: String, _ promQL: String, description: String? = nil
    ) -> AlertRule {
        // The default expressions are fixed text, checked by the tests.
        let parsed = (try? AlertExpressionParser.parse(expression)) ?? .number(0)
        var annotations = ["summary": summary]
        annotations["description"] = description
        var rule = AlertRule(name: name, severity: severity, expression: parsed, forDuration: forDuration, annotations: annotations)
        rule.promQL = promQL
        return rule
    }

    /// The rules of a config: the defaults as `alerts.defaults` changes them, then its own
    /// rules; one of its own named like a default replaces it. `keepDefaults` nil keeps the
    /// defaults only when there are no rules of its own (`alerts.rules` alone replaces them).
    package static func compile(_ configured: [AlertRuleConfig], defaults changes: [String: DefaultRuleChange] = [:], keepDefaults: Bool? = nil)
        throws(AlertExpressionError) -> [AlertRule]
    {
        var own: [AlertRule] = []
        for rule in configured {
            own.append(
                AlertRule(
                    name: rule.name, severity: rule.severity, expression: try AlertExpressionParser.parse(rule.expr),
                    forDuration: rule.forDuration, labels: rule.labels, annotations: rule.annotations))
        }
        let names = Set(own.map(\.name))
        let base = keepDefaults ?? configured.isEmpty ? try defaults(changing: changes).filter { !names.contains($0.name) } : []
        return base + own
    }

    /// The rules of `config`.
    package static func compile(_ config: LookoutConfig) throws(AlertExpressionError) -> [AlertRule] {
        try compile(config.alertRules, defaults: config.alertDefaults, keepDefaults: config.alertDefaultsKept)
    }
}

/// One alert episode: firing, then resolved.
package struct Alert: Sendable, Equatable {
    package var fingerprint: String
    package var rule: String
    package var source: String?
    package var severity: String
    /// alertname, severity, source (when per source) and the rule's labels.
    package var labels: [String: String]
    package var annotations: [String: String]
    package var startedAtMs: Int64
    package var resolvedAtMs: Int64?
    /// The stored episode's row id, once written.
    package var id: Int64?

    package init(
        fingerprint: String, rule: String, source: String?, severity: String, labels: [String: String],
        annotations: [String: String], startedAtMs: Int64, resolvedAtMs: Int64?, id: Int64? = nil
    ) {
        self.fingerprint = fingerprint
        self.rule = rule
        self.source = source
        self.severity = severity
        self.labels = labels
        self.annotations = annotations
        self.startedAtMs = startedAtMs
        self.resolvedAtMs = resolvedAtMs
        self.id = id
    }

    package var firing: Bool { resolvedAtMs == nil }
    package var summary: String { annotations["summary"] ?? rule }
    /// The annotation (`outage: "false"`) of an alert that tells of no outage: a certificate
    /// about to expire on a source that works. Notifications then say what it is, not "is down".
    package static let notAnOutage = "outage"
    package var isAboutOutage: Bool { annotations[Alert.notAnOutage] != "false" }
}

/// A change the evaluator reports: an alert began firing or resolved.
package enum AlertChange: Sendable, Equatable {
    case firing(Alert)
    case resolved(Alert)

    package var alert: Alert {
        switch self {
        case .firing(let alert), .resolved(let alert): return alert
        }
    }
}
