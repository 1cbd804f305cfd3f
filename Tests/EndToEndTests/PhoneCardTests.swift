import Foundation
import Logging
import LookoutCore
import LookoutStore
import LookoutWeb
import ResilientHTTP
import TestSupport
import Testing

/// The on-call page on a phone, measured in a real browser (Debian's Chromium at 390 px): a
/// healthy source's card is folded to at most 200 px (name, state, the latest probes, the bars)
/// and opens when its name is tapped; a broken one shows everything; a working source whose
/// alert still fires is not an open incident.
@Suite("the page on a phone")
struct PhoneCardTests {
    @Test func aHealthyCardIsShortAndABrokenOneWhole() async throws {
        let config = try ConfigLoader.parse(
            """
            defaults: {outage: {failure_threshold: 1}}
            sources:
              - {name: healthy, url: "http://127.0.0.1:1/healthy", group: Payments}
              - {name: broken, url: "http://127.0.0.1:1/broken", group: Payments}
              - {name: cert, url: "https://127.0.0.1:1/cert", group: Payments}
            alerts:
              rules: [{name: CertSoon, severity: warning, expr: cert_days_left < 14, for: 0s}]
            """, file: "t.yml")
        let monitor = Monitor(config: config, configPath: nil, logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
        monitor.start()
        let context = LookoutContext(monitor: monitor, database: try LookoutDatabase(path: ":memory:"))
        let now = Timestamp.nowMs()
        for step in 0..<20 {
            let at = now - Int64(20 - step) * 30_000
            for name in ["healthy", "cert"] {
                var result = ProbeResult(source: name, timestampMs: at, ok: true, httpStatus: 200)
                result.attemptSeconds = 0.02 + Double(step) / 1000
                if name == "cert" { result.certificateExpiry = Date(timeIntervalSince1970: Double(now) / 1000 + 3 * 86_400) }
                monitor.registry.record(result)
            }
            monitor.registry.record(
                step < 15
                    ? ProbeResult(source: "broken", timestampMs: at, ok: true, httpStatus: 200)
                    : ProbeResult(
                        source: "broken", timestampMs: at, ok: false,
                        failure: Failure(category: .serverError, reason: "http_503", httpStatus: 503, serverMessage: "overloaded"), httpStatus: 503))
        }
        context.alerts.evaluate(nowMs: now)
        let html = StatusPage(context: context).render(nowMs: now)
        // The working source with a firing alert is folded away, not an open incident.
        #expect(context.alerts.firing.map(\.rule) == ["CertSoon"])
        #expect(html.contains("<h2>Open incidents (1)</h2>"))
        #expect(html.contains("<summary>1 working source with alerts</summary>"))
        #expect(html.contains(#"aria-label="Last 20 probes: 15 passed, 5 failed""#))

        let directory = try makeTemporaryDirectory("phone")
        defer { try? FileManager.default.removeItem(at: directory) }
        // The page as served, with a script that writes each card's height into the DOM.
        let measure = """
            <script>setTimeout(function () { document.querySelectorAll('tbody[data-state]').forEach(function (b) {
              b.setAttribute('data-height', Math.round(b.getBoundingClientRect().height)); }); }, 200);</script>
            """
        let file = directory.appendingPathComponent("page.html")
        try html.replacingOccurrences(of: "</body>", with: measure + "</body>").write(to: file, atomically: true, encoding: .utf8)
        func heights(_ url: String) async throws -> [String: Int] {
            let chromium = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--user-data-dir=\(directory.path)/profile"]
            let dom = try await runTool("/usr/bin/chromium", chromium + ["--window-size=390,3000", "--virtual-time-budget=2000", "--dump-dom", url]).output
            var found: [String: Int] = [:]
            for part in dom.components(separatedBy: "<tbody id=\"source-").dropFirst() {
                let name = String(part.prefix { $0 != "\"" })
                guard let range = part.range(of: "data-height=\""), let value = Int(part[range.upperBound...].prefix { $0.isNumber }) else { continue }
                found[name] = value
            }
            return found
        }
        let folded = try await heights(file.absoluteString)
        let healthy = try #require(folded["healthy"])
        #expect(healthy <= 200, "a healthy card is \(healthy) px tall at 390 px")
        #expect(try #require(folded["broken"]) > 300, "a broken card shows everything")
        // Tapping the name (its own anchor) opens the card.
        let opened = try await heights(file.absoluteString + "#source-healthy")
        #expect(try #require(opened["healthy"]) > healthy + 100, "\(folded) then \(opened)")
    }
}
