import LookoutCore
import Testing

/// `alerts.defaults`: one default rule changed or turned off without copying the rest, and
/// `for: 0s` accepted as Prometheus accepts it.
@Suite("default rule changes")
struct DefaultRuleChangeTests {
    func rules(_ alerts: String) throws -> [AlertRule] {
        let config = try ConfigLoader.parse("sources: [{name: a, url: \"http://127.0.0.1:1/\"}]\nalerts:\n\(alerts)\n", file: "t.yml")
        return try AlertRule.compile(config)
    }

    @Test func oneDefaultChangesAndOneGoesTheRestStay() throws {
        let compiled = try rules(
            """
              defaults:
                PartialFailuresHigh: off
                SourceErrorRateHigh: {for: 10m, labels: {team: payments}}
            """)
        #expect(compiled.count == AlertRule.defaults.count - 1)
        #expect(!compiled.contains { $0.name == "PartialFailuresHigh" })
        let high = try #require(compiled.first { $0.name == "SourceErrorRateHigh" })
        #expect(high.forDuration == .seconds(600))
        #expect(high.labels == ["team": "payments"])
        #expect(high.severity == "warning" && high.annotations["summary"]?.contains("20%") == true)
    }

    @Test func ownRulesAddToTheDefaultsWhenDefaultsAreOnAndReplaceThemOtherwise() throws {
        let own = "  rules: [{name: Slow, severity: warning, expr: \"error_rate > 0.1\", for: 0s}]"
        let alone = try rules(own)
        #expect(alone.map(\.name) == ["Slow"])
        #expect(alone.first?.forDuration == .zero)
        let beside = try rules(own + "\n  defaults: on")
        #expect(beside.count == AlertRule.defaults.count + 1)
        // A rule of its own named like a default replaces that default.
        let replacing = try rules("  defaults: on\n  rules: [{name: SourceDown, severity: warning, expr: \"down == 1\", for: 1m}]")
        #expect(replacing.filter { $0.name == "SourceDown" }.map(\.severity) == ["warning"])
        #expect(try rules("  defaults: off").isEmpty)
    }

    @Test(arguments: [
        ("  defaults: {NoSuchRule: off}", #"unknown key "NoSuchRule""#),
        ("  defaults: {SourceDown: maybe}", #""maybe" is not on, off or a map of changes"#),
        ("  defaults: {SourceDown: {severity: page}}", #""page" is not a severity"#),
        ("  defaults: {SourceDown: {for: -1s}}", #""-1s" is not a duration"#),
        ("  defaults: {SourceDown: {expr: \"down ==\"}}", "the expression ends too early"),
        ("  defaults: sometimes", #""sometimes" is not on, off or a map of default rules"#),
    ])
    func badChangesAreClearErrors(text: String, message: String) {
        let error = #expect(throws: ConfigError.self) { _ = try rules(text) }
        #expect(error?.problems.count == 1)
        #expect(error?.problems.first?.description.contains(message) == true, "\(error?.problems.first?.description ?? "")")
    }
}
