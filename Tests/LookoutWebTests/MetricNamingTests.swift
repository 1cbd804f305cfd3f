import Foundation
import Logging
import LookoutCore
import LookoutWeb
import Testing

/// Prometheus's naming conventions over every family `/metrics` writes in full detail: counters
/// end in `_total`, ratios are `_ratio` (the old `lookout_error_rate` is marked deprecated for
/// its one release), and a deprecated family names what replaces it.
@Suite("metric names")
struct MetricNamingTests {
    @Test func everyFamilyFollowsTheConventions() throws {
        let sources = [SourceConfig(name: "api", url: "http://127.0.0.1/ok"), SourceConfig(name: "secure", url: "https://127.0.0.1/ok")]
        var config = LookoutConfig(sources: sources)
        config.metricsDetail = .full
        let monitor = Monitor(config: config, configPath: nil, logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
        monitor.registry.apply(sources)
        let now = Timestamp.nowMs()
        for back in 0..<5 {
            for source in sources {
                var result = ProbeResult(source: source.name, timestampMs: now - Int64(back) * 30_000, ok: back != 2, httpStatus: back != 2 ? 200 : 503)
                result.attemptSeconds = 0.05
                monitor.registry.record(result)
            }
        }
        let text = MetricsExposition(context: try LookoutContext(monitor: monitor), version: "9.9.9").render()
        var types: [String: String] = [:]
        var helps: [String: String] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 3).map(String.init)
            if parts.count >= 4, parts[1] == "TYPE" { types[parts[2]] = parts[3] }
            if parts.count >= 4, parts[1] == "HELP" { helps[parts[2]] = parts[3] }
        }
        let ours = types.keys.filter { $0.hasPrefix("lookout_") }.sorted()
        #expect(ours.count >= 40, "\(ours)")
        for name in ours {
            let deprecated = helps[name]?.hasPrefix("Deprecated: use lookout_") == true
            if types[name] == "counter" { #expect(name.hasSuffix("_total"), "\(name) is a counter without _total") }
            if name.hasSuffix("_total") { #expect(types[name] == "counter", "\(name) ends in _total but is a \(types[name] ?? "?")") }
            if name.contains("_rate") && !name.contains("_rate_limiter") && !name.contains("burn_rate") {
                #expect(deprecated, "\(name): a ratio is named _ratio")
            }
            if deprecated, let help = helps[name] {
                let replacement = String(help.dropFirst("Deprecated: use ".count).prefix { $0 != " " })
                #expect(types[replacement] != nil, "\(name) points at \(replacement), which is not exported")
            }
        }
        #expect(helps["lookout_error_rate"]?.hasPrefix("Deprecated: use lookout_error_ratio") == true)
        #expect(
            helps["lookout_recovery_seconds"]?.hasPrefix("Deprecated: use lookout_last_outage_duration_seconds") == true
                || types["lookout_recovery_seconds"] == nil)
    }
}
