import Foundation
import Logging
import LookoutCore
import LookoutWeb
import ResilientHTTP
import TestSupport
import Testing

/// `deploy/lookout-rules.yml` is the default rule set as Prometheus rules, and fires as Lookout's
/// own rules do: one scenario drives Lookout's evaluator and, through the very `/metrics` text it
/// exposes at each step, `promtool test rules` with that file.
@Suite("Prometheus rules fire as Lookout's own")
struct PrometheusRulesParityTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test func theDeployFileIsTheDefaultRules() throws {
        let file = try String(contentsOf: Self.root.appendingPathComponent("deploy/lookout-rules.yml"), encoding: .utf8)
        #expect(file == PrometheusRules.yaml(AlertRule.defaults), "regenerate it: lookout rules > deploy/lookout-rules.yml")
    }

    /// Two sources probed every minute for 6 h 40 m (so every window of every rule is covered);
    /// `acme` fails for 15 minutes near the end (long enough for the firing set to hold still). Prometheus evaluates every minute on the series
    /// Lookout exposed; wherever Lookout's firing set held for one evaluation before and after,
    /// Prometheus's must be the same. (A minute, not 15 s: the same windows at a quarter of the
    /// work, which a loaded `make test` feels.)
    @Test func aScenarioFiresTheSameAlertsInBoth() async throws {
        let step: Int64 = 60_000
        let steps = 400
        // Seconds of synchronous work: on a Dispatch thread, not the cooperative pool.
        let (series, lookout) = try await offThePool { () throws -> ([String: [String]], [Set<String>]) in
            let outage = 360..<375
            let config = try ConfigLoader.parse(
                """
                database: ":memory:"
                defaults: {interval: 1m}
                sources: [{name: acme, url: "http://127.0.0.1:1/acme"}, {name: other, url: "http://127.0.0.1:1/other"}]
                """, file: "t.yml")
            let monitor = Monitor(config: config, configPath: nil, logger: Logger(label: "test"))
            monitor.start()
            let exposition = MetricsExposition(context: try LookoutContext(monitor: monitor), version: "test")
            var evaluator = AlertEvaluator(rules: AlertRule.defaults)
            let start: Int64 = 1_700_000_000_000
            var series: [String: [String]] = [:]
            var lookout: [Set<String>] = []
            for index in 0..<steps {
                let now = start + Int64(index) * step
                let failing = outage.contains(index)
                let failure = failing ? Failure(category: .serverError, reason: "http_503", httpStatus: 503) : nil
                monitor.registry.record(
                    ProbeResult(
                        source: "acme", timestampMs: now, ok: !failing, failure: failure, httpStatus: failing ? 503 : 200, durationSeconds: 0.01,
                        latencySeconds: 0.01))
                monitor.registry.record(ProbeResult(source: "other", timestampMs: now, ok: true, httpStatus: 200, durationSeconds: 0.01, latencySeconds: 0.01))
                _ = evaluator.evaluate(nowMs: now, AlertEvaluator.Inputs(monitor.snapshot(nowMs: now)))
                lookout.append(Set(evaluator.firing.map { "\($0.rule)|\($0.source ?? "")" }))
                for line in exposition.render(nowMs: now).split(separator: "\n") where line.hasPrefix("lookout_") {
                    guard let space = line.lastIndex(of: " ") else { continue }
                    let name = String(line[..<space])
                    series[name, default: Array(repeating: "_", count: steps)][index] = String(line[line.index(after: space)...])
                }
            }
            return (series, lookout)
        }
        // Lookout paged for the outage, and more than one rule took part.
        let fired = lookout.reduce(Set<String>()) { $0.union($1) }
        #expect(fired.contains("SourceDown|acme") && fired.contains("SLOBurnRateFast|acme"), "\(fired)")
        // Some of the compared evaluations fall inside the outage, with its alerts firing.
        func steady(_ index: Int) -> Bool { lookout[index - 1] == lookout[index] && lookout[index + 1] == lookout[index] }
        let steadyWhileDown = (345..<(steps - 1)).filter { steady($0) && lookout[$0].contains("SourceDown|acme") }
        #expect(!steadyWhileDown.isEmpty)

        var checks: [String] = []
        var compared = 0
        for index in stride(from: 345, to: steps - 1, by: 1) where steady(index) {
            compared += 1
            let samples = lookout[index].sorted().map { key -> String in
                let parts = key.split(separator: "|", omittingEmptySubsequences: false)
                let labels = parts[1].isEmpty ? "{alertname=\"\(parts[0])\"}" : "{alertname=\"\(parts[0])\", source=\"\(parts[1])\"}"
                return "          - labels: '\(labels)'\n            value: 1\n"
            }
            checks.append(
                """
                      - expr: count by (alertname, source) (ALERTS{alertstate="firing"})
                        eval_time: \(Int64(index) * step / 1000)s
                        exp_samples:\(samples.isEmpty ? " []\n" : "\n" + samples.joined())
                """)
        }
        #expect(compared >= 20)
        let inputs = series.sorted { $0.key < $1.key }.map { "      - series: '\($0.key)'\n        values: '\($0.value.joined(separator: " "))'\n" }
        let directory = try makeTemporaryDirectory("rules-parity")
        defer { try? FileManager.default.removeItem(at: directory) }
        let test = directory.appendingPathComponent("parity.test.yml")
        try """
        rule_files: [\(Self.root.appendingPathComponent("deploy/lookout-rules.yml").path)]
        evaluation_interval: 1m
        tests:
          - interval: 1m
            input_series:
        \(inputs.joined())    promql_expr_test:
        \(checks.joined())
        """.write(to: test, atomically: true, encoding: .utf8)
        let result = try await runTool("/usr/bin/promtool", ["test", "rules", test.path])
        #expect(result.status == 0, "\(result.output.prefix(4000))")
    }
}
