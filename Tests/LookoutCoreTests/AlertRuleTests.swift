import LookoutCore
import Testing

/// The default rules driven by a manual clock: each fires after its `for`, not before, resolves
/// after two clean evaluations, and does not fire again after a restart.
@Suite("alert rules")
struct AlertRuleTests {
    /// Metric values the test sets; everything else has no data.
    final class Values {
        var perSource: [String: Double] = [:]
        var service: [String: Double] = [:]

        func inputs(offline: Bool = false, sources: [String] = ["acme"]) -> AlertEvaluator.Inputs {
            // A source is down unless the test says otherwise (`down: 0`): the paging rules
            // measure only while it is.
            AlertEvaluator.Inputs(sources: sources, offline: offline) { [self] metric, window, source in
                let key = window.map { "\(metric.rawValue)[\(ConfigValues.format($0))]" } ?? metric.rawValue
                return source == nil ? service[key] : perSource[key]
            } down: { [self] _ in
                perSource["down"].map { $0 == 1 } ?? true
            } context: { source in
                .init(message: "Error while probing \(source): the server answered 503.", recovery: "Check the upstream.")
            }
        }
    }

    static let triggers: [(rule: String, perSource: [String: Double], service: [String: Double])] = [
        ("SourceDown", ["down": 1], [:]),
        ("AllSourcesFailing", [:], ["sources_failing_ratio": 1]),
        ("SourceErrorRateCritical", ["error_rate[2m]": 0.6], [:]),
        ("AllCircuitsOpen", [:], ["circuits_open_ratio": 1]),
        ("SourceErrorRateHigh", ["error_rate[5m]": 0.3], [:]),
        ("RetrySuccessRateLow", ["retry_success_ratio[15m]": 0.2, "retries[15m]": 12], [:]),
        ("PartialFailuresHigh", [:], ["partial_failure_ratio[15m]": 0.4]),
        ("SLOBurnRateFast", ["burn_rate[1h]": 20, "burn_rate[5m]": 20], [:]),
        ("SLOBurnRateSlow", ["burn_rate[6h]": 7, "burn_rate[30m]": 7], [:]),
        ("CircuitOpened", ["breaker_open": 1, "breaker_opens[1m]": 0], [:]),
        ("CircuitFlapping", ["breaker_opens[15m]": 3], [:]),
        ("InsecureSourceBlocked", ["insecure_blocked": 1], [:]),
        ("RecoveredAfterRetries", ["recovered_after_retries": 1], [:]),
        ("NetworkOffline", [:], ["network_offline": 1]),
        ("CertificateExpiresSoon", ["cert_days_left": 9.5], [:]),
    ]

    /// A certificate about to expire is told while the source works: the rule follows no outage,
    /// says so in the alert, and takes no failure cause from the source.
    @Test func aCertificateAboutToExpireIsToldWhileTheSourceWorks() throws {
        let rule = try #require(AlertRule.defaults.first { $0.name == "CertificateExpiresSoon" })
        #expect(!rule.followsOutage && rule.severity == "warning")
        var evaluator = AlertEvaluator(rules: [rule])
        let values = Values()
        values.perSource = ["down": 0, "cert_days_left": 30]
        #expect(evaluator.evaluate(nowMs: 1_000_000, values.inputs()).isEmpty)
        values.perSource["cert_days_left"] = 13.9
        let changes = evaluator.evaluate(nowMs: 1_015_000, values.inputs())
        guard case .firing(let alert)? = changes.first else {
            Issue.record("no alert for a certificate 13.9 days from expiry: \(changes)")
            return
        }
        #expect(!alert.isAboutOutage)
        #expect(alert.annotations["description"] == nil && alert.annotations["down_since"] == nil)
        #expect(alert.summary == "acme: its TLS certificate expires in less than 14 days")
        // Prometheus's copy is not gated by the outage either.
        #expect(PrometheusRules.yaml([rule]).contains("expr: |-\n          (lookout_tls_cert_expiry_timestamp_seconds - time()) / 86400 < 14\n"))
    }

    @Test(arguments: triggers)
    func firesAfterItsForResolvesAndSurvivesARestart(rule: String, perSource: [String: Double], service: [String: Double]) throws {
        let definition = try #require(AlertRule.defaults.first { $0.name == rule })
        var evaluator = AlertEvaluator(rules: [definition])
        let values = Values()
        values.perSource = perSource
        values.service = service
        let step: Int64 = 15_000
        let forMs = definition.forDuration.totalMilliseconds
        var now: Int64 = 1_000_000

        // Pending for `for`; firing at the first evaluation at or after it.
        var changes = evaluator.evaluate(nowMs: now, values.inputs())
        if forMs == 0 {
            #expect(changes.count == 1)
        } else {
            #expect(changes.isEmpty)
            while now + step < 1_000_000 + forMs {
                now += step
                #expect(evaluator.evaluate(nowMs: now, values.inputs()).isEmpty, "fired before its for")
            }
            now = 1_000_000 + forMs
            changes = evaluator.evaluate(nowMs: now, values.inputs())
            #expect(changes.count == 1)
        }
        guard case .firing(let alert) = changes.first else {
            Issue.record("no firing change")
            return
        }
        #expect(alert.rule == rule)
        #expect(alert.labels["alertname"] == rule)
        #expect(alert.labels["severity"] == definition.severity)
        #expect((alert.source != nil) == definition.expression.perSource)
        #expect(!alert.summary.isEmpty)

        // Still true: nothing new.
        now += step
        #expect(evaluator.evaluate(nowMs: now, values.inputs()).isEmpty)

        // A restart: the firing alert comes back without a new announcement.
        var restarted = AlertEvaluator(rules: [definition])
        restarted.restore(firing: evaluator.firing)
        now += step
        #expect(restarted.evaluate(nowMs: now, values.inputs()).isEmpty)

        // False once: still firing; false twice: resolved.
        // (Measured as clear: a metric without data keeps the alert as it is.)
        // Clear is 0 for every measure but a certificate's days left, where it is a year.
        values.perSource = Dictionary(uniqueKeysWithValues: perSource.map { key, _ in (key, key == "cert_days_left" ? 365 : 0) })
        values.service = service.mapValues { _ in 0 }
        now += step
        // The outage's end resolves its alert at once; a measurement needs two clean evaluations.
        if perSource["down"] == nil {
            #expect(restarted.evaluate(nowMs: now, values.inputs()).isEmpty)
            now += step
        }
        let resolved = restarted.evaluate(nowMs: now, values.inputs())
        guard case .resolved(let ended) = resolved.first else {
            Issue.record("not resolved: \(resolved)")
            return
        }
        #expect(ended.fingerprint == alert.fingerprint)
        #expect(ended.resolvedAtMs == now)
        #expect(restarted.firing.isEmpty)
    }

    @Test func aConditionThatClearsWhilePendingNeverFires() throws {
        let rule = try #require(AlertRule.defaults.first { $0.name == "SourceErrorRateHigh" })
        var evaluator = AlertEvaluator(rules: [rule])
        let values = Values()
        values.perSource = ["error_rate[5m]": 0.5]
        #expect(evaluator.evaluate(nowMs: 0, values.inputs()).isEmpty)
        values.perSource = ["error_rate[5m]": 0]
        #expect(evaluator.evaluate(nowMs: 15_000, values.inputs()).isEmpty)
        values.perSource = ["error_rate[5m]": 0.5]
        #expect(evaluator.evaluate(nowMs: 300_000, values.inputs()).isEmpty)  // pending started again at 300 s
        #expect(evaluator.evaluate(nowMs: 600_000, values.inputs()).count == 1)
    }

    @Test func aPagingRuleTellsOfTheOutageAndEndsWithIt() throws {
        let high = try #require(AlertRule.defaults.first { $0.name == "SourceErrorRateHigh" })
        let retried = try #require(AlertRule.defaults.first { $0.name == "RecoveredAfterRetries" })
        var evaluator = AlertEvaluator(rules: [high, retried])
        let values = Values()
        // A flapping source whose probes never fail twice in a row: the window is over 20 %,
        // but no outage: the warning never fires, the info rule (an event of a working source) does.
        values.perSource = ["error_rate[5m]": 0.4, "recovered_after_retries": 1, "down": 0]
        for round in 0...30 {
            let changes = evaluator.evaluate(nowMs: Int64(round) * 15_000, values.inputs())
            #expect(!changes.contains { $0.alert.rule == "SourceErrorRateHigh" })
        }
        #expect(evaluator.firing.map(\.rule) == ["RecoveredAfterRetries"])
        // Down: pending from now, firing after its for.
        values.perSource["down"] = 1
        #expect(evaluator.evaluate(nowMs: 465_000, values.inputs()).isEmpty)
        #expect(evaluator.evaluate(nowMs: 765_000, values.inputs()).map(\.alert.rule) == ["SourceErrorRateHigh"])
        // Up again: resolved at this evaluation, though the window still holds the failures, and
        // nothing fires for it while it stays up.
        values.perSource["down"] = 0
        let ended = evaluator.evaluate(nowMs: 780_000, values.inputs())
        #expect(ended.count == 1)
        guard case .resolved(let alert) = ended.first else {
            Issue.record("not resolved: \(ended)")
            return
        }
        #expect(alert.rule == "SourceErrorRateHigh" && alert.resolvedAtMs == 780_000)
        for round in 1...40 { #expect(evaluator.evaluate(nowMs: 780_000 + Int64(round) * 15_000, values.inputs()).isEmpty) }
    }

    @Test func noDataIsNotHealth() throws {
        // A source whose breaker holds calls back has no samples: its alert keeps firing.
        let rule = try #require(AlertRule.defaults.first { $0.name == "SourceErrorRateCritical" })
        var evaluator = AlertEvaluator(rules: [rule])
        let values = Values()
        values.perSource = ["error_rate[2m]": 0.9]
        #expect(evaluator.evaluate(nowMs: 0, values.inputs()).isEmpty)
        #expect(evaluator.evaluate(nowMs: 120_000, values.inputs()).count == 1)
        values.perSource = [:]
        for round in 1...20 { #expect(evaluator.evaluate(nowMs: 120_000 + Int64(round) * 15_000, values.inputs()).isEmpty) }
        #expect(evaluator.firing.count == 1)
        values.perSource = ["error_rate[2m]": 0]
        #expect(evaluator.evaluate(nowMs: 500_000, values.inputs()).isEmpty)
        #expect(evaluator.evaluate(nowMs: 515_000, values.inputs()).count == 1)
        // Three-valued logic: false and unknown is false; true or unknown is true.
        let lookup: (AlertMetric, Duration?) -> Double? = { metric, _ in metric == .up ? 0 : nil }
        #expect(try AlertExpressionParser.parse("up == 1 and error_rate > 0.5").verdict(lookup) == false)
        #expect(try AlertExpressionParser.parse("up == 0 or error_rate > 0.5").verdict(lookup) == true)
        #expect(try AlertExpressionParser.parse("up == 0 and error_rate > 0.5").verdict(lookup) == nil)
        #expect(try AlertExpressionParser.parse("not error_rate > 0.5").verdict(lookup) == nil)
    }

    @Test func perSourceAlertsAreHeldBackWhileOffline() throws {
        let rule = try #require(AlertRule.defaults.first { $0.name == "CircuitOpened" })
        var evaluator = AlertEvaluator(rules: [rule])
        let values = Values()
        values.perSource = ["breaker_open": 1]
        #expect(evaluator.evaluate(nowMs: 0, values.inputs(offline: true)).isEmpty)
        #expect(evaluator.evaluate(nowMs: 15_000, values.inputs(offline: false)).count == 1)
    }

    @Test func oneAlertPerSource() throws {
        let rule = try #require(AlertRule.defaults.first { $0.name == "CircuitOpened" })
        var evaluator = AlertEvaluator(rules: [rule])
        let values = Values()
        values.perSource = ["breaker_open": 1]
        let changes = evaluator.evaluate(nowMs: 0, values.inputs(sources: ["a", "b"]))
        #expect(Set(changes.map { $0.alert.source }) == ["a", "b"])
        #expect(Set(changes.map { $0.alert.fingerprint }).count == 2)
        #expect(changes.first?.alert.annotations["description"]?.contains("503") == true)
        // A source that leaves the config resolves its alert.
        let gone = evaluator.evaluate(nowMs: 15_000, values.inputs(sources: ["a"]))
        #expect(gone.map { $0.alert.source } == ["b"])
    }

    @Test func parsesTheExpressionLanguage() throws {
        let expression = try AlertExpressionParser.parse("(error_rate[2m] > 0.5 or not up) and retries[15m] >= 10")
        #expect(expression.perSource)
        #expect(!(try AlertExpressionParser.parse("network_offline == 1")).perSource)
        #expect(expression.holds { metric, _ in [.errorRate: 0.1, .up: 0, .retries: 10][metric] })
        #expect(!expression.holds { metric, _ in [.errorRate: 0.1, .up: 1, .retries: 10][metric] })
        #expect(try AlertExpressionParser.parse("burn_rate[1h] > 14.4") == .compare(.metric(.burnRate, window: .seconds(3600)), .greater, .number(14.4)))
        #expect(!expression.holds { _, _ in nil })
        for rule in AlertRule.defaults {
            #expect(rule.expression != .number(0), "\(rule.name) did not parse")
        }
    }

    @Test(arguments: [
        ("eror_rate > 1", #"at character 1: unknown metric "eror_rate"; did you mean "error_rate"?"#),
        ("error_rate[5x] > 1", #"at character 12: "5x" is not a duration (use 5m, 1h)"#),
        ("error_rate >", "at character 13: the expression ends too early"),
        ("(up == 1", #"at character 9: expected ")""#),
        ("up = 1", #"at character 4: "= " is not a comparison (use > >= < <= == !=)"#),
    ])
    func reportsWhereAnExpressionIsWrong(text: String, message: String) {
        #expect(throws: AlertExpressionError.self) { try AlertExpressionParser.parse(text) }
        do { _ = try AlertExpressionParser.parse(text) } catch { #expect(error.description == message) }
    }
}
