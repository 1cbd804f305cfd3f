import Foundation
import Logging
import LookoutCore
import LookoutStore
import MicroHTTPServer
import ResilientHTTP
import Testing

@testable import LookoutWeb

/// The page's order, groups, filter, audiences and history pieces, rendered without a server.
@Suite("status page layout")
struct StatusPageLayoutTests {
    func monitor(_ yaml: String) throws -> Monitor {
        let monitor = Monitor(config: try ConfigLoader.parse(yaml, file: "t.yml"), configPath: nil, logger: Logger(label: "test"))
        monitor.start()
        return monitor
    }

    func body(_ response: HTTPResponse) -> String {
        switch response.body {
        case .bytes(let bytes): String(decoding: bytes, as: UTF8.self)
        default: ""
        }
    }

    static let config = """
        sources:
          - {name: api, url: "http://127.0.0.1:1/api?key=secret", group: Payments}
          - {name: ledger, url: "http://127.0.0.1:1/ledger", group: Payments}
          - {name: feed, kind: rss, url: "http://127.0.0.1:1/feed", labels: {team: content}}
          - {name: cdn, url: "http://127.0.0.1:1/cdn", group: Edge}
        status_page: {group_by: team, title: "Acme <status>"}
        """

    func failing(_ monitor: Monitor, _ name: String, atMs: Int64, message: String) {
        monitor.registry.record(
            ProbeResult(
                source: name, timestampMs: atMs, ok: false,
                failure: Failure(category: .serverError, reason: "http_503", httpStatus: 503, serverMessage: message), httpStatus: 503))
    }

    @Test func incidentsComeFirstLongestDownFirstThenTheGroups() throws {
        let monitor = try monitor(Self.config)
        let now = Timestamp.nowMs()
        for name in ["ledger", "feed"] { monitor.registry.record(ProbeResult(source: name, timestampMs: now - 60_000, ok: true, httpStatus: 200)) }
        failing(monitor, "api", atMs: now - 1_000, message: "<b>overloaded</b>")
        failing(monitor, "cdn", atMs: now - 300_000, message: "edge down")
        let html = StatusPage(context: try LookoutContext(monitor: monitor)).render(nowMs: now)
        #expect(html.contains("<title>Acme &lt;status&gt; status</title>"))
        let incidents = try #require(html.range(of: "<h2>Open incidents (2)</h2>"))
        let sources = try #require(html.range(of: #"<section class="sources""#))
        #expect(incidents.upperBound < sources.lowerBound)
        // cdn has been down longer: its line comes first; each says why and what Lookout does.
        let cdn = try #require(html.range(of: #"data-source="cdn""#))
        let api = try #require(html.range(of: #"data-source="api""#))
        #expect(cdn.lowerBound < api.lowerBound)
        #expect(html.contains("&lt;b&gt;overloaded&lt;/b&gt;"))
        #expect(html.contains("Probing every 30s"))
        // Groups in config order, a label-made group, and each group's roll-up state.
        for (group, state) in [("Payments", "degraded"), ("content", "ok"), ("Edge", "down")] {
            #expect(html.contains(#"<h2>\#(group)</h2> <span class="state \#(state)">"#), "\(group)")
        }
        // A group where all is well is collapsed; a broken one is open.
        #expect(html.contains(#"<details class="group" id="group-content" data-state="ok"><summary>"#))
        #expect(html.contains(#"<details class="group" id="group-edge" data-state="down" open><summary>"#))
    }

    @Test func theFilterNarrowsTheListWithoutScripts() throws {
        let monitor = try monitor(Self.config)
        let page = StatusPage(context: try LookoutContext(monitor: monitor))
        let html = page.render(filter: "PAY")
        #expect(html.contains(#"<tbody id="source-api""#) && html.contains(#"<tbody id="source-ledger""#))
        #expect(!html.contains(#"<tbody id="source-cdn""#))
        #expect(page.render(filter: "content").contains(#"<tbody id="source-feed""#))  // a label value
        let none = page.render(filter: "<nothing>")
        #expect(none.contains("No source matches “&lt;nothing&gt;”"))
    }

    @Test func thePublicPageLeavesOutURLsErrorsAndInternals() async throws {
        let monitor = try monitor(Self.config + "\n")
        failing(monitor, "api", atMs: Timestamp.nowMs(), message: "db password wrong")
        let router = LookoutRoutes.router(try LookoutContext(monitor: monitor))
        let html = body(await router.respond(to: HTTPRequest(method: "GET", path: "/public")))
        #expect(html.contains("<h2>Current problems (1)</h2>"))
        for secret in ["127.0.0.1", "secret", "db password", "HTTP 503", "Breaker", "/metrics", "/api/v1"] {
            #expect(!html.contains(secret), "the public page shows \(secret)")
        }
        // The full page has them, and stays the default.
        let full = body(await router.respond(to: HTTPRequest(method: "GET", path: "/")))
        #expect(full.contains("db password wrong") && full.contains("Breaker"))
    }

    @Test func withPublicSetTheFullPageNeedsTheAdminToken() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("public-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let token = directory.appendingPathComponent("token")
        try "s3cret".write(to: token, atomically: true, encoding: .utf8)
        let monitor = try monitor(Self.config.replacingOccurrences(of: "status_page: {", with: "admin_token_file: \(token.path)\nstatus_page: {public: true, "))
        let router = LookoutRoutes.router(try LookoutContext(monitor: monitor))
        #expect(!body(await router.respond(to: HTTPRequest(method: "GET", path: "/"))).contains("127.0.0.1"))
        let refused = await router.respond(to: HTTPRequest(method: "GET", path: "/oncall"))
        #expect(refused.status == 401)
        #expect(refused.headers["WWW-Authenticate"]?.hasPrefix("Basic ") == true)
        let basic = "Basic " + Data("oncall:s3cret".utf8).base64EncodedString()
        let allowed = await router.respond(to: HTTPRequest(method: "GET", path: "/oncall", headers: ["Authorization": basic]))
        #expect(allowed.status == 200 && body(allowed).contains("127.0.0.1"))
    }

    /// Without an admin token the full page is off, as the admin API is: an open `/oncall`
    /// would show anyone the URLs and errors the public page leaves out. The config says so.
    @Test func withPublicSetAndNoTokenTheFullPageIsOff() async throws {
        let yaml = Self.config.replacingOccurrences(of: "status_page: {", with: "status_page: {public: true, ")
        let config = try ConfigLoader.parse(yaml, file: "t.yml")
        #expect(config.warnings.map(\.naming).contains { $0.hasPrefix("t.yml:6:") && $0.contains("status_page.public: the full page moves to /oncall") })
        let router = LookoutRoutes.router(try LookoutContext(monitor: try monitor(yaml)))
        let refused = await router.respond(to: HTTPRequest(method: "GET", path: "/oncall"))
        #expect(refused.status == 403)
        #expect(!body(refused).contains("127.0.0.1") && body(refused).contains("admin_token_file"))
        #expect(!body(await router.respond(to: HTTPRequest(method: "GET", path: "/"))).contains("127.0.0.1"))
        // Without public, `/oncall` is the full page, as `/` is, and nothing is warned of.
        let open = LookoutRoutes.router(try LookoutContext(monitor: try monitor(Self.config)))
        #expect(body(await open.respond(to: HTTPRequest(method: "GET", path: "/oncall"))).contains("127.0.0.1"))
        #expect(try ConfigLoader.parse(Self.config, file: "t.yml").warnings.isEmpty)
    }

    @Test func groupBadgesRollUpTheirSources() async throws {
        let monitor = try monitor(Self.config)
        let now = Timestamp.nowMs()
        monitor.registry.record(ProbeResult(source: "api", timestampMs: now, ok: true, httpStatus: 200))
        failing(monitor, "ledger", atMs: now, message: "x")
        let router = LookoutRoutes.router(try LookoutContext(monitor: monitor))
        #expect(body(await router.respond(to: HTTPRequest(method: "GET", path: "/badge/group:Payments/status.svg"))).contains("Payments: degraded"))
        // As the page writes it.
        #expect(body(await router.respond(to: HTTPRequest(method: "GET", path: "/badge/group:Payments/uptime/24h.svg"))).contains("uptime 24h: 50.0%"))
        let unknown = await router.respond(to: HTTPRequest(method: "GET", path: "/badge/group:Nope/status.svg"))
        #expect(unknown.status == 404 && body(unknown).contains("no such group"))
    }

    /// A group named with `/` has its badges (the path arrives decoded); any other path under
    /// /badge/ is the documented 404 badge, never a text answer echoing the path.
    @Test func aGroupWithASlashHasBadgesAndEveryUnknownBadgeIsABadge() async throws {
        let monitor = try monitor(Self.config.replacingOccurrences(of: "group: Edge", with: "group: \"Edge/EU\""))
        monitor.registry.record(ProbeResult(source: "cdn", timestampMs: Timestamp.nowMs(), ok: true, httpStatus: 200))
        let router = LookoutRoutes.router(try LookoutContext(monitor: monitor))
        let status = await router.respond(to: HTTPRequest(method: "GET", path: "/badge/group:Edge/EU/status.svg"))
        #expect(status.status == 200 && body(status).contains("Edge/EU: operational"), "\(body(status))")
        let uptime = await router.respond(to: HTTPRequest(method: "GET", path: "/badge/group:Edge/EU/uptime/24h.svg"))
        #expect(uptime.status == 200 && body(uptime).contains("uptime 24h"))
        let unknown = await router.respond(to: HTTPRequest(method: "GET", path: "/badge/a/b/c/<script>.svg"))
        #expect(unknown.status == 404 && unknown.headers["Content-Type"]?.hasPrefix("image/svg+xml") == true)
        #expect(body(unknown).contains("no such badge") && !body(unknown).contains("<script>"))
    }

    @Test func dayBarsSayTheDayTheFigureAndTheAlerts() {
        let axis = DayAxis(nowMs: Timestamp.parseRFC3339("2026-11-24T12:00:00Z")!)
        var days = [BucketCounts?](repeating: BucketCounts(probes: 100), count: 90)
        days[0] = nil
        days[88] = BucketCounts(probes: 1000, failures: 7)
        let episode = AlertStore.Episode(source: "a", rule: "SourceDown<x>", severity: "critical", startedAtMs: axis.startsMs[88] + 1000, resolvedAtMs: nil)
        let window = MaintenanceWindow(
            name: "w", sources: ["a"], schedule: .recurring(weekdays: [1], minuteOfDay: 150, durationMs: 3_600_000, timeZone: "UTC"), note: "Backup <db>")
        let notes = StatusPage.dayNotes(SourceConfig(name: "a", url: "http://x/"), episodes: [episode], maintenance: axis.maintenance([window]), axis: axis)
        // 13 Sundays in 90 days, and the two days the alert (still firing) covers.
        #expect(notes.count == 13 + 2, "\(notes.keys.sorted())")
        let html = StatusPage.uptimeBars(days, notes: notes, axis: axis)
        #expect(html.contains(#"<i title="22 Nov: 100% · maintenance 02:30–03:30 UTC: Backup &lt;db&gt;"></i>"#))
        #expect(StatusPage.dayNotes(SourceConfig(name: "b", url: "http://x/"), episodes: [], maintenance: axis.maintenance([window]), axis: axis).isEmpty)
        #expect(html.components(separatedBy: "<i ").count - 1 == 90)
        #expect(html.contains(#"<i class="n" title="27 Aug: no data"></i>"#))
        #expect(html.contains(#"<i class="w" title="23 Nov: 99.30% up (7 of 1000 probes failed) · 1 alert: SourceDown&lt;x&gt;"></i>"#))
        #expect(html.contains("over 89 days"))
        #expect(html.contains(#"<i title="21 Nov: 100%"></i>"#))  // a good day: green by default, no class
    }

    /// With `location`, every per-source series and build_info carry it.
    @Test func theLocationIsALabelOnEverySourceSeries() throws {
        let monitor = try monitor("location: eu-west\nmetrics: {detail: full}\n" + Self.config)
        failing(monitor, "api", atMs: Timestamp.nowMs(), message: "x")
        let text = MetricsExposition(context: try LookoutContext(monitor: monitor)).render()
        let perSource = text.split(separator: "\n").filter { $0.contains(#"source=""#) }
        #expect(perSource.count > 40)
        for line in perSource { #expect(line.contains(#"location="eu-west""#), "\(line)") }
        #expect(text.contains(#"lookout_build_info{version="#) && text.contains(#",location="eu-west"} 1"#))
        #expect(text.contains(#"lookout_probe_success{source="api",location="eu-west"} 0"#))
        let refused = try? ConfigLoader.parse("location: \"eu west\"\n" + Self.config, file: "t.yml")
        #expect(refused == nil)
    }

    /// A peer's answer is hostile input: numbers that would overflow, and a document of a
    /// million tiny objects, are refused or ignored, never a trap or gigabytes of memory.
    @Test func aPeersAnswerIsReadDefensively() {
        let overflow = Peers.parse(
            TransferResult(httpStatus: 200, body: Array(#"{"status":"ok","sources":[],"shard":{"index":9223372036854775807,"count":2}}"#.utf8)), url: "http://p"
        )
        #expect((try? overflow.get())?.shard == nil)
        let good = Peers.parse(
            TransferResult(
                httpStatus: 200, body: Array(#"{"status":"ok","location":"us","shard":{"index":1,"count":3},"sources":[{"name":"a","state":"up"}]}"#.utf8)),
            url: "http://p")
        #expect((try? good.get())?.label == "us · shard 2 of 3")
        let bomb = Array("{\"status\":\"x\",\"sources\":[".utf8) + Array(repeating: Array("{},".utf8), count: 1_000_001).flatMap { $0 } + Array("{}]}".utf8)
        guard case .failure(let problem) = Peers.parse(TransferResult(httpStatus: 200, body: bomb), url: "http://p") else {
            Issue.record("a million objects were parsed")
            return
        }
        #expect(problem.message.contains("more than 1000000 objects"))
        guard case .failure(let garbage) = Peers.parse(TransferResult(httpStatus: 200, body: Array("[1,2]".utf8)), url: "http://p") else {
            Issue.record("garbage was taken for a status")
            return
        }
        #expect(garbage.message == "answered something that is not Lookout's status JSON")
    }

    @Test func groupsWhoseNamesLookAlikeKeepDistinctIDs() throws {
        let monitor = try monitor(
            """
            sources:
              - {name: a, url: "http://127.0.0.1:1/a", group: "A B"}
              - {name: b, url: "http://127.0.0.1:1/b", group: "A-B"}
            """)
        let html = StatusPage(context: try LookoutContext(monitor: monitor)).render()
        #expect(html.contains(#"id="group-a-b" "#) && html.contains(#"id="group-a-b-2" "#))
    }

    /// `/api/v1/sources/NAME/availability?days=N`: per day and in total, from the tiers.
    @Test func availabilityPerDayForAReport() async throws {
        let monitor = try monitor(Self.config)
        let database = try LookoutDatabase(path: ":memory:")
        let writer = RecordWriter(database: database, logger: Logger(label: "test"))
        let now = Timestamp.nowMs()
        for back in 0..<40 { writer.record(ProbeResult(source: "api", timestampMs: now - Int64(back) * 86_400_000, ok: back % 10 != 3)) }
        writer.flush()
        let router = LookoutRoutes.router(LookoutContext(monitor: monitor, database: database))
        let response = await router.respond(to: HTTPRequest(method: "GET", path: "/api/v1/sources/api/availability", query: ["days": "30"]))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(body(response).utf8)) as? [String: Any])
        #expect(object["probes"] as? Int == 30 && object["failures"] as? Int == 3)
        #expect((object["days"] as? [[String: Any]])?.count == 30)
        #expect(abs((object["availability"] as? Double ?? 0) - 0.9) < 1e-9)
        for (query, status) in [(["days": "0"], 400), (["days": "x"], 400), (["days": "3651"], 400)] {
            #expect(await router.respond(to: HTTPRequest(method: "GET", path: "/api/v1/sources/api/availability", query: query)).status == status)
        }
        #expect(await router.respond(to: HTTPRequest(method: "GET", path: "/api/v1/sources/nope/availability")).status == 404)
    }

    /// `/api/v1/availability?days=N[&group=G]`: the same report for every source, in config order.
    @Test func availabilityOfEverySourceForAReport() async throws {
        let monitor = try monitor(Self.config)
        let database = try LookoutDatabase(path: ":memory:")
        let writer = RecordWriter(database: database, logger: Logger(label: "test"))
        let now = Timestamp.nowMs()
        for back in 0..<40 {
            writer.record(ProbeResult(source: "api", timestampMs: now - Int64(back) * 86_400_000, ok: back % 10 != 3))
            writer.record(ProbeResult(source: "cdn", timestampMs: now - Int64(back) * 86_400_000, ok: back % 2 == 0))
        }
        writer.flush()
        let router = LookoutRoutes.router(LookoutContext(monitor: monitor, database: database))
        func report(_ query: [String: String]) async throws -> [[String: Any]] {
            let response = await router.respond(to: HTTPRequest(method: "GET", path: "/api/v1/availability", query: query))
            let object = try #require(try JSONSerialization.jsonObject(with: Data(body(response).utf8)) as? [String: Any])
            #expect(object["from"] is String && object["to"] is String)
            return try #require(object["sources"] as? [[String: Any]])
        }
        let every = try await report(["days": "30"])
        #expect(every.map { $0["source"] as? String } == ["api", "ledger", "feed", "cdn"])
        #expect(every[0]["probes"] as? Int == 30 && every[0]["failures"] as? Int == 3)
        #expect(every[3]["probes"] as? Int == 30 && every[3]["failures"] as? Int == 15 && (every[3]["days"] as? [Any])?.count == 30)
        #expect(every[1]["probes"] as? Int == 0 && every[1]["availability"] is NSNull && (every[1]["days"] as? [Any])?.isEmpty == true)
        let single = try #require(
            try JSONSerialization.jsonObject(
                with: Data(
                    body(
                        await router.respond(
                            to: HTTPRequest(method: "GET", path: "/api/v1/sources/cdn/availability", query: ["days": "30"]))
                    ).utf8)) as? [String: Any])
        #expect((single["days"] as? [[String: Any]])?.map { $0["failures"] as? Int } == (every[3]["days"] as? [[String: Any]])?.map { $0["failures"] as? Int })
        #expect(try await report(["group": "Payments"]).map { $0["source"] as? String } == ["api", "ledger"])
        // A group as the page shows it: by the `status_page.group_by` label where `group` is unset.
        #expect(try await report(["group": "content"]).map { $0["source"] as? String } == ["feed"])
        #expect(await router.respond(to: HTTPRequest(method: "GET", path: "/api/v1/availability", query: ["group": "nope"])).status == 404)
        #expect(await router.respond(to: HTTPRequest(method: "GET", path: "/api/v1/availability", query: ["days": "0"])).status == 400)
    }

    @Test func percentagesNeverRoundUpToAHundred() {
        #expect(StatusPage.percent(1) == "100%")
        #expect(StatusPage.percent(0.99999) == "99.99%")
        #expect(StatusPage.percent(0.873) == "87.3%")
        #expect(StatusPage.rollUp([true, nil]) == ("ok", "Operational"))
        #expect(StatusPage.rollUp([true, false]) == ("degraded", "Degraded"))
        #expect(StatusPage.rollUp([false, nil]) == ("down", "Outage"))
        #expect(StatusPage.rollUp([nil]) == ("pending", "Pending"))
    }

    @Test func announcementsAreTextWithLinks() {
        let text = StatusPage.linkify("See https://status.example/x?a=1&b=2. <b>Not</b> javascript:alert(1)\nline two")
        #expect(
            text
                == #"See <a href="https://status.example/x?a=1&amp;b=2" rel="nofollow noopener">https://status.example/x?a=1&amp;b=2</a>. &lt;b&gt;Not&lt;/b&gt; javascript:alert(1)<br>line two"#
        )
    }

    @Test func theResponseChartHasAxesAndUnits() {
        var hours = [[Double]?](repeating: nil, count: 24)
        hours[20] = [0.1, 0.3]
        hours[23] = [0.05, 0.12]
        let svg = StatusPage.responseChart(hours)
        #expect(svg.contains(">500 ms</text>") && svg.contains(">24 h ago</text>") && svg.contains(">now</text>"))
        #expect(svg.contains("latest p50 50 ms, p95 120 ms; peak p95 300 ms"))
        #expect(StatusPage.responseChart([nil, nil]).contains("no probes in the last 24 hours"))
        // Hours alone between gaps are short dashes, visible, not bare points.
        let p50 = svg.components(separatedBy: #"<path class="p50" d=""#).last?.prefix { $0 != "\"" } ?? ""
        #expect(p50.components(separatedBy: "L").count - 1 == 2, "\(p50)")
    }
}
