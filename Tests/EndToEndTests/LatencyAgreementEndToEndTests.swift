import Foundation
import ResilientHTTP
import TestSupport
import Testing

/// One meaning of latency: against an upstream that answers after 100 ms, the page's row and its
/// chart, `/api/v1/sources/NAME` and `/metrics` give the same p50, one attempt's.
@Suite("one meaning of latency")
struct LatencyAgreementEndToEndTests {
    let http = CurlTransport()

    func text(_ url: String) async -> String {
        await http.perform(TransferRequest(url: url, timeout: .seconds(10))).bodyText
    }

    /// "100 ms" or "1.25 s" as the page writes it, in seconds.
    static func seconds(_ shown: Substring) -> Double? {
        let parts = shown.split(separator: " ")
        guard parts.count == 2, let value = Double(parts[0]) else { return nil }
        return parts[1] == "ms" ? value / 1000 : parts[1] == "s" ? value : nil
    }

    static func firstMatch(_ pattern: String, in text: String) -> Substring? {
        guard let range = text.range(of: pattern, options: .regularExpression) else { return nil }
        return text[range]
    }

    @Test func thePageTheAPIAndTheMetricsAgreeOnP50() async throws {
        let directory = try makeTemporaryDirectory("latency")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (sim, simBase) = try await startSimulator()
        // The 503 source's answers come at once but its calls retry with 1 s of backoff: its
        // latency is the attempt's, not the call's.
        let config = try writeLookoutConfig(
            in: directory,
            """
            defaults: {interval: 1s, timeout: 2s}
            sources:
              - {name: slow, url: "\(simBase)/slow?ms=100"}
              - {name: refused, url: "http://127.0.0.1:9/"}
            """)
        let (lookout, base) = try await startLookout(config: config)
        _ = try await eventually("ten attempts of slow with an answer") { () -> Bool? in
            let line = Self.firstMatch(#"lookout_probe_latency_seconds_count\{source="slow"\} [0-9]+"#, in: await text("\(base)/metrics"))
            return line.flatMap { Int($0.split(separator: " ").last ?? "") }.map { $0 >= 10 } == true ? true : nil
        }
        // Probes keep coming every second: the four are read between two equal attempt counts,
        // so that all of them describe the same attempts.
        func count(_ metrics: String) -> Int? {
            Self.firstMatch(#"lookout_probe_latency_seconds_count\{source="slow"\} [0-9]+"#, in: metrics).flatMap { Int($0.split(separator: " ").last ?? "") }
        }
        let (apiP50, metricP50, rowP50, chartP50, metrics, page) = try await eventually("the API, /metrics and the page read between two equal counts") {
            () -> (Double, Double, Double, Double, String, String)? in
            let before = count(await text("\(base)/metrics"))
            let body = await text("\(base)/api/v1/sources/slow")
            let metrics = await text("\(base)/metrics")
            let page = await text("\(base)/")
            guard before != nil, before == count(metrics), before == count(await text("\(base)/metrics")) else { return nil }
            guard let api = (try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])?["source"] as? [String: Any],
                let apiP50 = (api["latency"] as? [String: Any])?["p50_seconds"] as? Double,
                let metricLine = Self.firstMatch(#"lookout_probe_latency_seconds\{source="slow",quantile="0.5"\} [0-9.e-]+"#, in: metrics),
                let metricP50 = Double(metricLine.split(separator: " ").last ?? ""),
                let section = Self.firstMatch(#"<tbody id="source-slow"[\s\S]*?</tbody>"#, in: page),
                let row = Self.firstMatch(#"data-label="Response time p50 / p95">[0-9.]+ m?s"#, in: String(section)),
                let rowP50 = Self.seconds(row.split(separator: ">").last ?? ""),
                let label = Self.firstMatch(#"latest p50 [0-9.]+ m?s"#, in: String(section)),
                let chartP50 = Self.seconds(label.dropFirst("latest p50 ".count))
            else { return nil }
            return (apiP50, metricP50, rowP50, chartP50, metrics, page)
        }
        for (what, value) in [("API", apiP50), ("metrics", metricP50), ("row", rowP50), ("chart", chartP50)] {
            #expect(value >= 0.1 && value < 0.15, "\(what): \(value) s for a 100 ms upstream")
            #expect(abs(value - apiP50) <= apiP50 * 0.05, "\(what) \(value) s vs the API's \(apiP50) s")
        }
        // A refused connection has no latency: no quantile, no "0 ms".
        #expect(!metrics.contains(#"lookout_probe_latency_seconds{source="refused""#))
        let refused = try #require(Self.firstMatch(#"<tbody id="source-refused"[\s\S]*?</tbody>"#, in: page))
        #expect(refused.contains(#"data-label="Response time p50 / p95">–"#))
        _ = sim
        _ = lookout
    }
}
