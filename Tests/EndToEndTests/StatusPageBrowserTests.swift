import Foundation
import GRDB
import Logging
import LookoutCore
import LookoutStore
import ResilientHTTP
import TestSupport
import Testing

/// The status page in a real browser: headless Chromium renders a config with 3 groups, 12
/// sources, two incidents, an announcement and a maintenance window over 90 days of history
/// written through the store's own writer, at desktop and phone widths (screenshots kept with
/// the test's files, or in docs/screenshots/ when asked); what upstreams and announcements
/// say stays text, and the public page gives nothing away.
@Suite("status page in Chromium")
struct StatusPageBrowserTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    let http = CurlTransport()
    static let groups = [
        ("Payments", ["payments-api", "checkout", "ledger", "refunds"]),
        ("Content", ["feed-rss", "feed-atom", "search", "catalog"]),
        ("Infrastructure", ["cdn", "auth", "images", "nightly-dump"]),
    ]

    /// 90 days of hourly probes through `RecordWriter`, with a fake clock: `search` had a bad
    /// day 10 days ago, `catalog` exists only for the last 20 days; one stored alert episode.
    static func writeHistory(to path: String, nowMs: Int64) throws {
        let database = try LookoutDatabase(path: path)
        let writer = RecordWriter(database: database, logger: Logger(label: "history"))
        let hour = HealthWindow.hour
        let start = nowMs - 90 * HealthWindow.day
        for (_, names) in groups {
            for name in names {
                var at = start - start % hour + hour
                while at < nowMs - hour {
                    let daysAgo = (nowMs - at) / HealthWindow.day
                    if name == "catalog" && daysAgo >= 20 {
                        at += hour
                        continue
                    }
                    let failing = name == "search" && daysAgo == 10 && (at / hour) % 24 < 6
                    let slow = Double((at / hour) % 24) / 24
                    writer.record(
                        ProbeResult(
                            source: name, timestampMs: at, ok: !failing, failure: failing ? Failure(category: .serverError, reason: "http_503") : nil,
                            httpStatus: failing ? 503 : 200, durationSeconds: 0.02 + 0.2 * slow))
                    at += hour
                }
            }
        }
        writer.flush()
        let episodeStart = nowMs - 10 * HealthWindow.day - 12 * hour
        try database.writer.write { db in
            try db.execute(
                sql: """
                    INSERT INTO alerts (fingerprint, rule, source, severity, state, started_at_ms, resolved_at_ms, summary, labels, annotations)
                    VALUES ('f-old', 'SourceDown', 'search', 'critical', 'resolved', ?, ?, 'search is down', '{}', '{}')
                    """,
                arguments: [episodeStart, episodeStart + 2 * hour])
        }
    }

    /// A string as a YAML double-quoted scalar (JSON strings are valid YAML).
    static func yaml(_ text: String) -> String {
        String(decoding: try! JSONSerialization.data(withJSONObject: [text]), as: UTF8.self).dropFirst().dropLast().description
    }

    @Test func rendersGroupsHistoryAndIncidentsEscapedAtDesktopAndPhoneWidths() async throws {
        let directory = try makeTemporaryDirectory("browser")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (sim, simBase) = try await startSimulator()
        let hostile = #"<img src=x onerror="document.title='pwned'"> "quoted" & <script>alert(1)</script>"#
        let now = Timestamp.nowMs()
        let database = directory.appendingPathComponent("lookout.sqlite").path
        try Self.writeHistory(to: database, nowMs: now)
        let tokenFile = directory.appendingPathComponent("token")
        try "admin-secret\n".write(to: tokenFile, atomically: true, encoding: .utf8)
        // What the README's screenshots show reads as a real outage would; the same page with
        // hostile upstream text and announcements is checked after a reload, below.
        let config = directory.appendingPathComponent("lookout.yml")
        func writeConfig(announcement title: String, _ message: String, hostileSource: String? = nil) throws {
            let urls: [String: (kind: String, path: String)] = [
                "payments-api": ("json", "/json/valid"), "checkout": ("http", "/status/503?detail=card%20processor%20unavailable,%20retry%20later"),
                "ledger": ("http", "/ok"), "refunds": ("http", "/ok"), "feed-rss": ("rss", "/rss/valid?items=3"), "feed-atom": ("rss", "/atom/valid?items=3"),
                "search": ("http", "/status/500?detail=shard%207%20unavailable"), "catalog": ("json", "/json/valid"), "cdn": ("http", "/ok"),
                "auth": ("http", "/ok"), "images": ("http", "/ok"), "nightly-dump": ("download", "/download/200000?seed=3"),
            ]
            var sources = ""
            for (group, names) in Self.groups {
                for name in names {
                    let (kind, path) = urls[name]!
                    sources += "  - {name: \(name), kind: \(kind), group: \(group), url: \"\(simBase)\(path)\"}\n"
                }
            }
            // A new source, so its first probe is told at once (checkout's breaker may be open).
            if let hostileSource {
                let detail = hostileSource.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
                sources += "  - {name: gateway, group: Payments, url: \"\(simBase)/status/503?detail=\(detail)\"}\n"
            }
            try """
            listen: 127.0.0.1:0
            database: \(database)
            retention: 100d
            admin_token_file: \(tokenFile.path)
            defaults: {interval: 1s, timeout: 2s, retry: {server_error: {max_attempts: 1}}}
            sources:
            \(sources)
            maintenance:
              - {name: refunds-migration, sources: [refunds], start: "\(Timestamp.rfc3339(now - 3_600_000))", end: "\(Timestamp.rfc3339(now + 7_200_000))", note: "Database migration"}
            announcements:
              - title: \(Self.yaml(title))
                message: \(Self.yaml(message))
                state: identified
                sources: [checkout]
                at: "\(Timestamp.rfc3339(now - 600_000))"
            alerts:
              evaluation_interval: 1s
              rules:
                - {name: SourceDown, severity: critical, expr: up == 0}
            """.write(to: config, atomically: true, encoding: .utf8)
        }
        try writeConfig(
            announcement: "Card payments failing",
            "Our card processor is refusing about a third of payments. We are working with them; PayPal is not affected.")

        let (lookout, base) = try await startLookout(config: config)
        _ = try await eventually("every source probed, both incidents firing") { () -> Bool? in
            let page = await http.perform(TransferRequest(url: "\(base)/", timeout: .patient)).bodyText
            return !page.contains("not probed yet") && page.contains("<h2>Open incidents (2)</h2>") ? true : nil
        }

        // Announcements through the API: bad input is a 400 naming the field.
        func post(_ body: String, path: String = "/api/v1/announcements") async -> (Int, String) {
            let response = await http.perform(
                TransferRequest(
                    url: "\(base)\(path)", method: "POST", headers: [("Authorization", "Bearer admin-secret")], body: Array(body.utf8), timeout: .patient))
            return (response.httpStatus ?? 0, response.bodyText)
        }
        let missing = await post(#"{"title": "x", "state": "investigating"}"#)
        #expect(missing.0 == 400 && missing.1.contains("message"))
        let unknownSource = await post(#"{"title": "x", "message": "y", "state": "identified", "sources": ["nope"]}"#)
        #expect(unknownSource.0 == 400 && unknownSource.1.contains(#"sources: no source is named \"nope\""#))
        let long = await post(#"{"title": "\#(String(repeating: "x", count: 201))", "message": "y", "state": "identified"}"#)
        #expect(long.0 == 400 && long.1.contains("title: at most 200 characters"))
        let badState = await post(#"{"title": "x", "message": "y", "state": "fixed"}"#)
        #expect(badState.0 == 400 && badState.1.contains("state: must be one of investigating"))
        let created = await post(#"{"title": "Search index rebuild", "message": "Results may be stale.", "state": "monitoring", "sources": ["search"]}"#)
        #expect(created.0 == 201)
        let id = (try? JSONSerialization.jsonObject(with: Data(created.1.utf8)) as? [String: Any])?["id"] as? String ?? ""
        let resolved = await post(#"{"state": "resolved", "message": "Rebuilt; results are current."}"#, path: "/api/v1/announcements/\(id)")
        #expect(resolved.0 == 200)

        let chromium = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--user-data-dir=\(directory.path)/profile"]
        // With the console logged: the Content-Security-Policy blocks nothing the page runs.
        let dom = try await runTool("/usr/bin/chromium", chromium + ["--enable-logging=stderr", "--v=0", "--window-size=1280,2000", "--dump-dom", "\(base)/"])
            .output
        #expect(!dom.contains("Content Security Policy"), "the browser blocked part of the page")
        // What is broken comes first: the incident lines before the source list.
        let incidents = try #require(dom.range(of: #"<section class="incidents""#))
        let list = try #require(dom.range(of: #"<section class="sources""#))
        #expect(incidents.lowerBound < list.lowerBound)
        #expect(dom.contains(#"data-source="checkout""#) && dom.contains(#"data-source="search""#))
        // Three groups, each source with 90 day segments.
        for (group, _) in Self.groups { #expect(dom.contains("<h2>\(group)</h2>")) }
        let bodies = dom.components(separatedBy: #"<tbody id="source-"#).dropFirst()
        #expect(bodies.count == 12)
        for body in bodies {
            let name = body.prefix { $0 != "\"" }
            let bars = body.components(separatedBy: #"<div class="bars""#).dropFirst().first?.components(separatedBy: "</div>").first ?? ""
            let segments = bars.components(separatedBy: "<i ").count - 1
            #expect(segments == 90, "\(name) has \(segments) day segments")
            // On a phone each value carries its label; only the history row spans the card.
            for cell in body.components(separatedBy: "<td").dropFirst() {
                #expect(cell.hasPrefix(" data-label=") || cell.hasPrefix(" colspan="), "\(name): a cell without a label: \(cell.prefix(60))")
            }
        }
        #expect(dom.contains(": no data\""))  // catalog's first 70 days
        #expect(dom.contains("1 alert: SourceDown"))  // search's bad day
        #expect(dom.contains("<h2>Maintenance in progress</h2>") && dom.contains("UTC: Database migration\"></i>"))  // and in today's segment
        // Announcements: the open one at the top, the resolved one in the history.
        #expect(dom.contains("Card payments failing") && dom.contains("card processor unavailable, retry later"))
        #expect(dom.contains("Past announcements (30 days)") && dom.contains("Rebuilt; results are current."))
        #expect(dom.contains("aria-live"))

        // The public page: no URL, no error detail, no breaker internals, no admin hint.
        let publicHTML = await http.perform(TransferRequest(url: "\(base)/public", timeout: .patient)).bodyText
        #expect(publicHTML.contains("<h2>Current problems (2)</h2>"))
        for secret in [
            simBase, "127.0.0.1", "http://", "shard 7 unavailable", "retry later", "HTTP 503", "HTTP 500", "Breaker", "breaker", "/api/", "/metrics", "Details",
            "Not notified", "curl",
        ] {
            #expect(!publicHTML.contains(secret), "the public page shows \(secret)")
        }
        // The filter works without JavaScript.
        let filtered = await http.perform(TransferRequest(url: "\(base)/?q=feed", timeout: .patient)).bodyText
        #expect(filtered.components(separatedBy: #"<tbody id="source-"#).count - 1 == 2)
        // Group badges.
        let badge = await http.perform(TransferRequest(url: "\(base)/badge/group:Payments/status.svg", timeout: .patient))
        #expect(badge.httpStatus == 200 && badge.bodyText.contains("Payments: degraded"))

        // Kept as test artefacts in .build/test-artefacts/; the README's screenshots are rewritten
        // only when asked (LOOKOUT_UPDATE_SCREENSHOTS=1), so testing leaves a clean checkout clean.
        let update = ProcessInfo.processInfo.environment["LOOKOUT_UPDATE_SCREENSHOTS"] == "1"
        let screenshots = Self.root.appendingPathComponent(update ? "docs/screenshots" : ".build/test-artefacts/screenshots")
        try FileManager.default.createDirectory(at: screenshots, withIntermediateDirectories: true)
        for (name, width, height, path) in [
            ("status-1280", 1280, 2000, "/"), ("status-390", 390, 2400, "/"), ("status-public-1280", 1280, 1400, "/public"),
            ("status-public-390", 390, 1600, "/public"),
        ] {
            let file = screenshots.appendingPathComponent("\(name).png")
            try? FileManager.default.removeItem(at: file)
            let shot = try await runTool("/usr/bin/chromium", chromium + ["--window-size=\(width),\(height)", "--screenshot=\(file.path)", "\(base)\(path)"])
            #expect(shot.status == 0, "\(shot.output)")
            let size = (try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? NSNumber)?.intValue ?? 0
            #expect(size > 10_000, "screenshot \(name) is \(size) bytes")
        }

        // What upstreams and announcements say stays text: the same page after a reload that
        // adds an upstream answering with markup and makes the announcement markup.
        try writeConfig(announcement: "Checkout errors " + hostile, "We are looking into failed payments. " + hostile, hostileSource: hostile)
        lookout.send(SIGHUP)
        _ = try await eventually("the reloaded announcement and the new source's answer on the page") { () -> Bool? in
            let page = await http.perform(TransferRequest(url: "\(base)/", timeout: .patient)).bodyText
            return page.contains("Checkout errors &lt;img src=x onerror=") && page.contains("The server said: &lt;img src=x") ? true : nil
        }
        let hostileDOM = try await runTool("/usr/bin/chromium", chromium + ["--window-size=1280,2000", "--dump-dom", "\(base)/"]).output
        #expect(hostileDOM.contains("Checkout errors &lt;img src=x onerror="))
        #expect(hostileDOM.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
        #expect(!hostileDOM.contains("<img src=\"x\""))
        #expect(hostileDOM.contains("<title>Lookout status</title>"))  // the onerror never ran
        // The public page shows the announcement, as text, and no upstream's words.
        let hostilePublic = await http.perform(TransferRequest(url: "\(base)/public", timeout: .patient)).bodyText
        #expect(hostilePublic.contains("Checkout errors &lt;img src=x onerror="))
        #expect(!hostilePublic.contains("<img src=x") && !hostilePublic.contains("The server said"))
        #expect(try await lookout.terminate() == 0)
        #expect(try await sim.terminate() == 0)
    }

    /// A name that is itself markup is refused before it can reach any page.
    @Test func aSourceNamedLikeMarkupIsRefused() async throws {
        let directory = try makeTemporaryDirectory("named")
        defer { try? FileManager.default.removeItem(at: directory) }
        let named = directory.appendingPathComponent("named.yml")
        try "sources:\n  - {name: \"<script>alert(1)</script>\", url: \"http://127.0.0.1:1/ok\"}\n".write(to: named, atomically: true, encoding: .utf8)
        let binary = ChildProcess.binDirectory.appendingPathComponent("lookout").path
        #expect(try await runTool(binary, ["check-config", "--config", named.path]).status == 1)
    }
}
