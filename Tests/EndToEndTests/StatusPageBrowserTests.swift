import Foundation
import ResilientHTTP
import Testing
import TestSupport

/// The status page in a real browser: headless Chromium renders it at desktop and phone widths
/// (the screenshots are kept in docs/screenshots/), and what upstreams send stays text.
@Suite("status page in Chromium")
struct StatusPageBrowserTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    let http = CurlTransport()

    @Test func rendersEscapedAtDesktopAndPhoneWidths() async throws {
        let directory = try makeTemporaryDirectory("browser")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (sim, simBase) = try await startSimulator()
        let hostile = #"<img src=x onerror="document.title='pwned'"> "quoted" & <script>alert(1)</script>"#
        let encoded = hostile.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let config = directory.appendingPathComponent("lookout.yml")
        try """
            listen: 127.0.0.1:0
            database: ":memory:"
            defaults: {interval: 1s, timeout: 2s, retry: {server_error: {max_attempts: 1}}}
            sources:
              - {name: healthy, kind: json, url: "\(simBase)/json/valid"}
              - {name: hostile, url: "\(simBase)/status/500?detail=\(encoded)"}
              - {name: file, kind: download, url: "\(simBase)/download/2000000?seed=3"}
            """.write(to: config, atomically: true, encoding: .utf8)

        // A name that is itself markup is refused before it can reach any page.
        let named = directory.appendingPathComponent("named.yml")
        try "sources:\n  - {name: \"<script>alert(1)</script>\", url: \"\(simBase)/ok\"}\n".write(to: named, atomically: true, encoding: .utf8)
        let binary = ChildProcess.binDirectory.appendingPathComponent("lookout").path
        #expect(try runTool(binary, ["check-config", "--config", named.path]).status == 1)

        let (lookout, base) = try await startLookout(config: config)
        _ = try await eventually("every source probed") { () -> Bool? in
            let page = await http.perform(TransferRequest(url: "\(base)/")).bodyText
            return page.contains("not probed yet") ? nil : true
        }
        let chromium = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--user-data-dir=\(directory.path)/profile"]
        let dom = try runTool("/usr/bin/chromium", chromium + ["--dump-dom", "\(base)/"])
        #expect(dom.output.contains("Degraded"))
        #expect(dom.output.contains("&lt;img src=x onerror="))
        #expect(dom.output.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
        #expect(!dom.output.contains("<img src=\"x\""))
        #expect(dom.output.contains("<title>Lookout status</title>"))  // the onerror never ran
        #expect(dom.output.contains("aria-live"))

        // The README's screenshots are rewritten only when asked (LOOKOUT_UPDATE_SCREENSHOTS=1), so
        // that testing leaves a clean checkout clean.
        let update = ProcessInfo.processInfo.environment["LOOKOUT_UPDATE_SCREENSHOTS"] == "1"
        let screenshots = update ? Self.root.appendingPathComponent("docs/screenshots") : directory.appendingPathComponent("screenshots")
        try FileManager.default.createDirectory(at: screenshots, withIntermediateDirectories: true)
        for width in [1280, 390] {
            let file = screenshots.appendingPathComponent("status-\(width).png")
            try? FileManager.default.removeItem(at: file)
            let shot = try runTool("/usr/bin/chromium", chromium + ["--window-size=\(width),1400", "--screenshot=\(file.path)", "\(base)/"])
            #expect(shot.status == 0, "\(shot.output)")
            let size = (try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? NSNumber)?.intValue ?? 0
            #expect(size > 10_000, "screenshot at \(width) px is \(size) bytes")
        }
        #expect(try await lookout.terminate() == 0)
        #expect(try await sim.terminate() == 0)
    }
}
