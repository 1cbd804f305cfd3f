import Foundation
import Logging
import LookoutCore
import LookoutWeb
import ResilientHTTP
import Testing

@Suite("ExpositionWriter")
struct ExpositionWriterTests {
    @Test func escapesLabelValues() {
        let writer = ExpositionWriter()
        writer.family("m", type: .gauge, help: "help with \\ and\nnewline")
        writer.sample("m", labels: [("source", "a\"b\\c\nd")], value: 1.5)
        #expect(writer.text == "# HELP m help with \\\\ and\\nnewline\n# TYPE m gauge\nm{source=\"a\\\"b\\\\c\\nd\"} 1.5\n")
        // Text with nothing to escape, past ASCII too, is written as it is.
        let plain = ExpositionWriter()
        plain.family("t", type: .gauge, help: "Zeit in µs, \"quoted\" — ok")
        #expect(plain.text == "# HELP t Zeit in µs, \"quoted\" — ok\n# TYPE t gauge\n")
    }

    @Test func writesPerSourceSamplesFromPrebuiltFragments() {
        let writer = ExpositionWriter()
        let prefixes = ExpositionWriter.Labels.prefixes("source", ["a", #"b"\"#])
        let states = ExpositionWriter.Labels.suffixes("state", ["open", "closed"])
        writer.sample("m", prefixes, 1, states, 0, value: 1)
        writer.sample("m", prefixes, 0, value: 0.5)
        var histogram = Histogram(bounds: [0.1, 1])
        histogram.observe(0.05)
        histogram.observe(0.5)
        histogram.observe(5)
        writer.histogram(ExpositionWriter.HistogramLayout("d", bounds: histogram.bounds), prefixes, 0, histogram)
        #expect(
            writer.text == """
                m{source="b\\"\\\\",state="open"} 1
                m{source="a"} 0.5
                d_bucket{source="a",le="0.1"} 1
                d_bucket{source="a",le="1"} 2
                d_bucket{source="a",le="+Inf"} 3
                d_sum{source="a"} 5.55
                d_count{source="a"} 3

                """)
    }

    /// Prefixes with constant labels after the source's, and a suffix: every value escaped as a
    /// label value (backslash, quote and newline escaped, a carriage return left out), the
    /// constants once for every source.
    @Test func prefixesEscapeEachValueAndRepeatTheConstants() {
        let writer = ExpositionWriter()
        let prefixes = ExpositionWriter.Labels.prefixes("source", ["a\r\nb", "é"], [("shard", "0"), ("location", #"x"y\"#)])
        let suffixes = ExpositionWriter.Labels.suffixes("state", [#"o"p\en"#])
        writer.sample("m", prefixes, 0, value: 1)
        writer.sample("m", prefixes, 1, suffixes, 0, value: 2)
        let empty = ExpositionWriter.Labels.prefixes("source", [])
        #expect(empty.count == 0)
        #expect(
            writer.text == #"""
                m{source="a\nb",shard="0",location="x\"y\\"} 1
                m{source="é",shard="0",location="x\"y\\",state="o\"p\\en"} 2

                """#)
    }

    /// Labels that differ per series (a source's kind and group) are escaped each, in the
    /// order named, and asked for by series and name.
    @Test func perSeriesSuffixesEscapeEachValueInNameOrder() {
        let writer = ExpositionWriter()
        let prefixes = ExpositionWriter.Labels.prefixes("source", ["a", "b"], [("location", "eu")])
        let rows = [["http", #"Pay"ments\"#], ["dns", "é\r\nx"]]
        var asked: [String] = []
        let suffixes = ExpositionWriter.Labels.suffixes(["kind", "group"], count: rows.count) { series, name in
            asked.append("\(series).\(name)")
            return rows[series][name]
        }
        writer.sample("info", prefixes, 1, suffixes, 1, value: 1)
        writer.sample("info", prefixes, 0, suffixes, 0, value: 1)
        #expect(suffixes.count == 2)
        #expect(asked == ["0.0", "0.1", "1.0", "1.1"])
        #expect(
            writer.text == #"""
                info{source="b",location="eu",kind="dns",group="é\nx"} 1
                info{source="a",location="eu",kind="http",group="Pay\"ments\\"} 1

                """#)
        #expect(ExpositionWriter.Labels.suffixes(["kind"], count: 0) { _, _ in "unused" }.count == 0)
    }

    @Test func formatsSpecialValues() {
        #expect(ExpositionWriter.format(3) == "3")
        #expect(ExpositionWriter.format(.infinity) == "+Inf")
        #expect(ExpositionWriter.format(.nan) == "NaN")
        #expect(ExpositionWriter.format(0.25) == "0.25")
    }
}

@Suite("Pages")
struct PageTests {
    func board() -> SourceRegistry {
        let board = SourceRegistry(sources: [
            SourceConfig(name: "up", url: "http://127.0.0.1/ok"),
            SourceConfig(name: "down", url: "http://127.0.0.1/<script>"),
            SourceConfig(name: "never", url: "http://127.0.0.1/never"),
        ])
        var up = ProbeResult(source: "up", timestampMs: Timestamp.nowMs(), ok: true, httpStatus: 200, durationSeconds: 0.002)
        up.attemptSeconds = 0.002
        board.record(up)
        board.record(
            ProbeResult(
                source: "down", timestampMs: Timestamp.nowMs(), ok: false,
                failure: Failure(category: .serverError, reason: "http_500", httpStatus: 500, serverMessage: "<b>boom</b>"),
                httpStatus: 500, durationSeconds: 0.2))
        return board
    }

    @Test func metricsShowProbedSourcesWithHistograms() throws {
        let sources = [
            SourceConfig(name: "up", url: "http://127.0.0.1/ok"), SourceConfig(name: "down", url: "http://127.0.0.1/<script>"),
            SourceConfig(name: "never", url: "http://127.0.0.1/never"),
        ]
        let monitor = Monitor(config: LookoutConfig(sources: sources), configPath: nil, logger: Logger(label: "test"))
        monitor.registry.apply(sources)
        for entry in board().snapshot().records { if let last = entry.last { monitor.registry.record(last) } }
        let text = MetricsExposition(context: try LookoutContext(monitor: monitor), version: "9.9.9").render()
        #expect(text.contains("lookout_probe_success{source=\"up\"} 1\n"))
        #expect(text.contains("lookout_probe_success{source=\"down\"} 0\n"))
        #expect(!text.contains("lookout_probe_success{source=\"never\"}"))
        #expect(text.contains("lookout_probe_http_status_code{source=\"down\"} 500\n"))
        // Never succeeded: 0, so `time() - x > 300` fires for it; nothing before a first probe.
        #expect(text.contains("lookout_last_success_timestamp_seconds{source=\"down\"} 0\n"))
        #expect(!text.contains("lookout_last_success_timestamp_seconds{source=\"never\"}"))
        // Latency is one attempt's: the page's p50/p95 as a summary; buckets only in full detail.
        #expect(text.contains("# TYPE lookout_probe_latency_seconds summary\n"))
        #expect(text.contains("lookout_probe_latency_seconds{source=\"up\",quantile=\"0.5\"} 0.002\n"))
        #expect(text.contains("lookout_probe_latency_seconds_count{source=\"up\"} 1\n"))
        // The failed probe's answer came after 0.2 s of waits with no latency of its own here.
        #expect(!text.contains("lookout_probe_latency_seconds{source=\"down\""))
        #expect(!text.contains("lookout_probe_duration_seconds_bucket{source=\"up\""))
        #expect(text.contains("lookout_build_info{version=\"9.9.9\"} 1\n"))
        #expect(text.contains("lookout_network_online 1\n"))
        #expect(text.contains("# TYPE process_cpu_seconds_total counter\n"))
        #expect(text.contains("process_resident_memory_bytes "))
        #expect(text.contains("process_open_fds "))
        #expect(text.contains("lookout_config_last_reload_successful 1\n"))
        #expect(text.contains("lookout_shard_info{index=\"0\",count=\"1\"} 1\n"))
    }

    /// `metrics.detail: default` keeps a healthy source — http, https with a certificate, a
    /// download — to at most 15 series; `full` writes every phase, window, state and bucket.
    @Test(arguments: [MetricsDetail.default, .full])
    func aHealthySourceStaysWithinTheSeriesBudget(detail: MetricsDetail) throws {
        var file = SourceConfig(name: "file", url: "https://127.0.0.1/big.iso")
        file.kind = .download
        let sources = [SourceConfig(name: "api", url: "http://127.0.0.1/ok"), SourceConfig(name: "secure", url: "https://127.0.0.1/ok"), file]
        var config = LookoutConfig(sources: sources)
        config.metricsDetail = detail
        config.location = "eu"
        let monitor = Monitor(config: config, configPath: nil, logger: Logger(label: "test"))
        monitor.registry.apply(sources)
        let now = Timestamp.nowMs()
        for back in 0..<20 {
            for source in sources {
                var result = ProbeResult(source: source.name, timestampMs: now - Int64(back) * 30_000, ok: true, httpStatus: 200, durationSeconds: 0.05)
                result.attemptSeconds = source.kind == .download ? nil : 0.05
                if source.url.hasPrefix("https") { result.certificateExpiry = Date(timeIntervalSinceNow: 86_400 * 60) }
                monitor.registry.record(result)
            }
        }
        let text = MetricsExposition(context: try LookoutContext(monitor: monitor), version: "9.9.9").render()
        let lines = text.split(separator: "\n").filter { !$0.hasPrefix("#") }
        for source in sources {
            let series = lines.filter { $0.contains("source=\"\(source.name)\"") }
            switch detail {
            case .default: #expect(series.count <= 15 && series.count >= 12, "\(source.name): \(series.count) series\n\(series.joined(separator: "\n"))")
            case .full: #expect(series.count >= 35, "\(source.name): \(series.count) series")
            }
        }
        #expect(text.contains(#"lookout_tls_cert_expiry_timestamp_seconds{source="secure",location="eu"}"#))
        #expect(text.contains(#"lookout_circuit_breaker_state{source="api",location="eu",state="closed"} 1"#))
        #expect(text.contains(#"lookout_error_ratio{source="api",location="eu",window="5m"} 0"#))
        #expect(text.contains(#"lookout_error_ratio{source="api",location="eu",window="1m"} 0"#) == (detail == .full))
        // The old name stays one release, with the same windows.
        #expect(text.contains(#"lookout_error_rate{source="api",location="eu",window="5m"} 0"#))
        #expect(text.contains(#"lookout_error_rate{source="api",location="eu",window="1m"}"#) == (detail == .full))
        #expect(text.contains("# HELP lookout_error_rate Deprecated: use lookout_error_ratio"))
        #expect(text.contains(#"lookout_probe_phase_seconds{source="api""#) == (detail == .full))
        #expect(text.contains(#"lookout_circuit_breaker_state{source="api",location="eu",state="open"} 0"#) == (detail == .full))
        #expect(text.contains(#"lookout_availability_ratio{source="api",location="eu",window="30d"}"#) == (detail == .full))
        // HELP and TYPE are the same either way.
        #expect(text.contains("# TYPE lookout_probe_phase_seconds gauge\n") && text.contains("# TYPE lookout_calls_total counter\n"))
    }

    @Test func statusPageEscapesWhatUpstreamsSend() throws {
        let sources = board().snapshot().records.map(\.source)
        let monitor = Monitor(config: LookoutConfig(sources: sources), configPath: nil, logger: Logger(label: "test"))
        monitor.registry.apply(sources)
        for entry in board().snapshot().records { if let last = entry.last { monitor.registry.record(last) } }
        let html = StatusPage(context: try LookoutContext(monitor: monitor)).render()
        #expect(!html.contains("/<script>"))
        #expect(html.contains("/&lt;script&gt;") || html.contains("/%3Cscript%3E"))
        #expect(html.contains("aria-live"))
        #expect(html.contains("<svg class=\"spark\""))
        #expect(html.contains("id=\"source-up\""))
        #expect(!html.contains("<b>boom</b>"))
        #expect(html.contains("&lt;b&gt;boom&lt;/b&gt;"))
        #expect(html.contains("Degraded"))
        #expect(html.contains("Pending"))
        #expect(html.contains("Upstream server error"))
        // On a phone the values carry their labels.
        #expect(html.contains(#"<td data-label="Error rate (1 h)">"#))
        #expect(html.contains(#"<td data-label="Circuit breaker">"#))
        #expect(html.contains("td[data-label]::before"))
    }

    @Test func theRowOfASourceWhoseParentIsDownSaysSo() throws {
        var child = SourceConfig(name: "api", url: "http://127.0.0.1/api")
        child.dependsOn = ["gateway"]
        let sources = [SourceConfig(name: "gateway", url: "http://127.0.0.1/gw"), child]
        let monitor = Monitor(config: LookoutConfig(sources: sources), configPath: nil, logger: Logger(label: "test"))
        monitor.registry.apply(sources)
        let now = Timestamp.nowMs()
        for source in ["gateway", "api"] {
            monitor.registry.record(
                ProbeResult(
                    source: source, timestampMs: now - 240_000, ok: false, failure: Failure(category: .timeout, reason: "response_timeout")))
        }
        let html = StatusPage(context: try LookoutContext(monitor: monitor)).render(nowMs: now)
        #expect(html.contains(##"Blocked by <a href="#source-gateway">gateway</a>, which is down"##))
        #expect(html.contains(">4m</time>"))
        let json = String(decoding: StatusAPI(context: try LookoutContext(monitor: monitor)).statusBytes(nowMs: now), as: UTF8.self)
        #expect(json.contains(#""blocked_by":["gateway"]"#))
        #expect(json.contains(#""down_for":"4m""#))
    }

    /// An incident's line starts with the source's name, so the upstream's words follow without
    /// "Error while probing NAME:" again; the source's own row keeps the whole message.
    @Test func anIncidentLineDoesNotNameItsSourceTwice() throws {
        let sources = [SourceConfig(name: "checkout", url: "http://127.0.0.1/checkout")]
        let monitor = Monitor(config: LookoutConfig(sources: sources), configPath: nil, logger: Logger(label: "test"))
        monitor.registry.apply(sources)
        let now = Timestamp.nowMs()
        monitor.registry.record(
            ProbeResult(
                source: "checkout", timestampMs: now - 60_000, ok: false,
                failure: Failure(category: .serverError, reason: "http_503", httpStatus: 503, serverMessage: "card processor unavailable"), httpStatus: 503))
        let html = StatusPage(context: try LookoutContext(monitor: monitor)).render(nowMs: now)
        let incidents = try #require(
            html.range(of: #"<section class="incidents""#).map { html[$0.lowerBound...] }.map { $0[..<($0.range(of: "</section>")?.lowerBound ?? $0.endIndex)] }
        )
        #expect(incidents.contains("Upstream server error: “the server answered 503. The server said: card processor unavailable”"))
        #expect(!incidents.contains("Error while probing"))
        #expect(html.contains("Error while probing checkout: the server answered 503. The server said: card processor unavailable"))
    }

    @Test func aSourceInMaintenanceSaysSoWithItsNote() throws {
        let now = Timestamp.nowMs()
        var config = LookoutConfig(sources: [SourceConfig(name: "db", url: "http://127.0.0.1/db")])
        config.maintenance = [
            MaintenanceWindow(name: "upgrade", sources: ["db"], schedule: .once(startMs: now - 60_000, endMs: now + 600_000), note: "vendor upgrade")
        ]
        let monitor = Monitor(config: config, configPath: nil, logger: Logger(label: "test"))
        monitor.start()
        var result = ProbeResult(source: "db", timestampMs: now, ok: false, failure: Failure(category: .serverError, reason: "http_503"))
        result.duringMaintenance = true
        monitor.registry.record(result)
        let html = StatusPage(context: try LookoutContext(monitor: monitor)).render(nowMs: now)
        #expect(html.contains(#"<span class="state maintenance">Maintenance</span>"#))
        #expect(html.contains("vendor upgrade · ends <time"))
        // Maintenance is left out of availability.
        #expect(monitor.snapshot(nowMs: now).summaries[0] == nil)
        let json = String(decoding: StatusAPI(context: try LookoutContext(monitor: monitor)).statusBytes(nowMs: now), as: UTF8.self)
        #expect(json.contains(#""maintenance":{"window":"upgrade","note":"vendor upgrade""#))
    }

    @Test func aSourceNamedLikeMarkupStaysText() throws {
        let hostile = SourceConfig(name: "<script>alert(1)</script>", url: "http://127.0.0.1/")
        let monitor = Monitor(config: LookoutConfig(sources: [hostile]), configPath: nil, logger: Logger(label: "test"))
        monitor.registry.apply([hostile])
        monitor.registry.record(
            ProbeResult(
                source: hostile.name, timestampMs: Timestamp.nowMs(), ok: false,
                failure: Failure(category: .serverError, reason: "http_500", httpStatus: 500, serverMessage: #"<img src=x onerror=alert(1)> "q""#)))
        let html = StatusPage(context: try LookoutContext(monitor: monitor)).render()
        #expect(!html.contains("<script>alert(1)</script>"))
        #expect(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
        #expect(!html.contains("<img src=x"))
        #expect(html.contains("&lt;img src=x onerror=alert(1)&gt; &quot;q&quot;"))
        let metrics = MetricsExposition(context: try LookoutContext(monitor: monitor)).render()
        #expect(metrics.contains(#"lookout_probe_success{source="<script>alert(1)</script>"} 0"#))
    }
}
