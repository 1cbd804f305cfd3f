import Foundation
import Logging
import LookoutAlerting
import LookoutCore
import LookoutStore
import LookoutWeb
import MicroHTTPServer
import ResilientHTTP
import Synchronization
import TestSupport
import Testing

/// Vendors' pages read over loopback: one Lookout reads another's Statuspage v2 summary and
/// Atom history as a vendor page; a page served by the test turns to an outage after ours
/// began, and the API, the page and the notification say when the vendor acknowledged it.
@Suite("vendor status end to end")
struct VendorStatusTests {
    static let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }

    func lookout(_ yaml: String) throws -> (Monitor, LookoutContext) {
        let config = try ConfigLoader.parse(yaml, file: "t.yml", hooks: NotificationProviders.hookKinds)
        let monitor = Monitor(config: config, configPath: nil, logger: Self.logger)
        monitor.start()
        return (monitor, LookoutContext(monitor: monitor, database: try LookoutDatabase(path: ":memory:")))
    }

    /// The notifications queued for `hook`, in order, taken off the queue.
    func sent(_ context: LookoutContext, hook: String = "chat") throws -> [String] {
        let outbox = OutboxStore(database: context.database)
        var payloads: [String] = []
        while let row = try outbox.head(hook: hook) {
            payloads.append(row.payload)
            try outbox.markDelivered(row.id, nowMs: Timestamp.nowMs())
        }
        return payloads
    }

    func fail(_ monitor: Monitor, _ name: String, atMs: Int64) {
        monitor.registry.record(
            ProbeResult(source: name, timestampMs: atMs, ok: false, failure: Failure(category: .serverError, reason: "http_503", httpStatus: 503)))
    }

    @Test func lookoutReadsAnotherLookoutAsAVendorPage() async throws {
        // B: a Lookout whose `acme` is down.
        let (monitorB, contextB) = try lookout(
            """
            defaults: {outage: {failure_threshold: 1}}
            status_page: {title: Bee}
            sources: [{name: acme, url: "http://127.0.0.1:1/", group: payments}, {name: other, url: "http://127.0.0.1:1/"}]
            """)
        let now = Timestamp.nowMs()
        fail(monitorB, "acme", atMs: now - 120_000)
        monitorB.registry.record(ProbeResult(source: "other", timestampMs: now, ok: true))
        let server = HTTPServer(configuration: .init(port: 0), router: LookoutRoutes.router(contextB))
        try server.start()
        let base = "http://127.0.0.1:\(server.port)"

        // Its v2 summary has Statuspage's fields (Atlassian's public API reference).
        let summary = await CurlTransport().perform(TransferRequest(url: base + "/api/v2/summary.json", timeout: .patient))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(summary.body)) as? [String: Any])
        #expect(Set(object.keys) == ["page", "status", "components", "incidents", "scheduled_maintenances"])
        let page = try #require(object["page"] as? [String: Any])
        #expect(Set(page.keys) == ["id", "name", "url", "time_zone", "updated_at"])
        #expect(page["name"] as? String == "Bee")
        let status = try #require(object["status"] as? [String: Any])
        #expect(status["indicator"] as? String == "critical")
        let components = try #require(object["components"] as? [[String: Any]])
        let componentKeys: Set<String> = [
            "id", "name", "status", "created_at", "updated_at", "position", "description", "showcase", "start_date", "group_id", "page_id", "group",
            "only_show_if_degraded",
        ]
        for component in components { #expect(Set(component.keys).subtracting(["components"]) == componentKeys) }
        #expect(components.map { $0["name"] as? String } == ["payments", "acme", "other"])
        #expect(components.map { $0["status"] as? String } == ["major_outage", "major_outage", "operational"])
        let incidents = try #require(object["incidents"] as? [[String: Any]])
        #expect(incidents.count == 1)
        let incidentKeys: Set<String> = [
            "id", "name", "status", "created_at", "updated_at", "monitoring_at", "resolved_at", "impact", "shortlink", "started_at", "page_id",
            "incident_updates", "components",
        ]
        #expect(Set(incidents[0].keys) == incidentKeys)
        let update = try #require((incidents[0]["incident_updates"] as? [[String: Any]])?.first)
        #expect(Set(update.keys) == ["id", "status", "body", "incident_id", "created_at", "updated_at", "display_at", "affected_components"])
        // Public-safe: no upstream words, no addresses.
        let text = String(decoding: summary.body, as: UTF8.self)
        #expect(!text.contains("503") && !text.contains("127.0.0.1:1"))
        for path in ["status", "components", "incidents", "incidents/unresolved", "scheduled-maintenances"] {
            let answer = await CurlTransport().perform(TransferRequest(url: base + "/api/v2/\(path).json", timeout: .patient))
            #expect(answer.httpStatus == 200 && (try? JSONSerialization.jsonObject(with: Data(answer.body))) is [String: Any], "\(path)")
        }

        // A: reads B as the vendor of its `pay`, by base URL (the format found) and by Atom feed.
        let (monitorA, contextA) = try lookout(
            """
            defaults: {outage: {failure_threshold: 1}}
            sources:
              - {name: pay, url: "http://127.0.0.1:1/", vendor_status: {url: "\(base)", components: [acme]}}
              - {name: feed, url: "http://127.0.0.1:1/", vendor_status: {url: "\(base)/history.atom"}}
            """)
        await monitorA.vendors.poll(force: true)
        let readings = monitorA.vendors.readings
        #expect(readings.map(\.page?.format) == [.statuspage, .feed])
        #expect(readings.allSatisfy { $0.problem == nil }, "\(readings.map(\.problem))")
        let config = try #require(monitorA.config.sources[0].vendorStatus)
        let view = monitorA.vendors.view(config, source: "pay")
        #expect(view.state == .problem)
        #expect(view.incident?.name == "acme outage")
        let feedView = monitorA.vendors.view(try #require(monitorA.config.sources[1].vendorStatus))
        #expect(feedView.state == .problem && feedView.incident?.name == "acme outage")
        // A's outage began after B's: the vendor was first.
        fail(monitorA, "pay", atMs: now)
        monitorA.observeVendors(nowMs: now)
        let json = String(decoding: StatusAPI(context: contextA).statusBytes(nowMs: now), as: UTF8.self)
        #expect(json.contains("Bee's status page reports it: ‘acme outage’"), "\(json)")
        #expect(json.contains("2m before we saw it"))
        #expect(json.contains(#""acknowledged_after_seconds":0"#))
        let html = StatusPage(context: contextA).render(nowMs: now)
        #expect(html.contains("Vendor: <a href="))
        #expect(html.contains("Vendor status pages (2)"))

        // The history feeds read as feeds with Debian's feedparser.
        for feed in ["history.atom", "history.rss"] {
            let (status, output) = try await runTool(
                "/usr/bin/python3",
                [
                    "-c",
                    "import feedparser, sys; d = feedparser.parse(sys.argv[1]); print(d.bozo, d.version, len(d.entries), d.entries[0].title if d.entries else '')",
                    base + "/" + feed,
                ])
            #expect(status == 0, "\(output)")
            #expect(output.hasPrefix("False"), "\(feed): \(output)")
            #expect(output.contains("1 acme outage"), "\(feed): \(output)")
        }
        await server.stop()
    }

    /// A vendor page that turns to an outage a minute after ours began: the vendor is followed,
    /// its acknowledgement timed, counted when the outage ends, and said in the notification.
    @Test func theVendorConfirmsAMinuteAfterUs() async throws {
        let document = Mutex(#"{"status":{"indicator":"none"},"components":[{"id":"c1","name":"API","status":"operational"}],"incidents":[]}"#)
        let conditional = Mutex(0)
        var router = Router()
        router.get("/api/v2/summary.json") { request in
            if request.headers["If-None-Match"] == "\"v\"" && document.withLock({ $0.contains("operational\"}],\"incidents\":[]") }) {
                conditional.withLock { $0 += 1 }
                return HTTPResponse(status: 304, headers: ["ETag": "\"v\""])
            }
            return HTTPResponse(headers: ["Content-Type": "application/json", "ETag": "\"v\""], body: .bytes(Array(document.withLock { $0 }.utf8)))
        }
        let server = HTTPServer(configuration: .init(port: 0), router: router)
        try server.start()
        let (monitor, context) = try lookout(
            """
            defaults: {outage: {failure_threshold: 1}}
            sources: [{name: pay, url: "http://127.0.0.1:1/", vendor_status: {url: "http://127.0.0.1:\(server.port)", components: [API]}}]
            alerts:
              rules: [{name: SourceDown, severity: critical, expr: up == 0}]
              hooks: [{name: chat, type: slack, url: "http://127.0.0.1:1/hook", group_wait: 0s}]
            """)
        let start = Timestamp.nowMs()
        await monitor.vendors.poll(nowMs: start, force: true)
        fail(monitor, "pay", atMs: start)
        monitor.observeVendors(nowMs: start)
        context.alerts.evaluate(nowMs: start)
        let firing = try sent(context)
        #expect(firing.count == 1)
        #expect(firing.first?.contains("*Vendor:* 127.0.0.1 reports nothing yet (all operational)") == true, "\(firing)")
        // Read again unchanged: a 304 to If-None-Match.
        await monitor.vendors.poll(nowMs: start + 10_000, force: true)
        #expect(conditional.withLock { $0 } == 1)
        #expect(monitor.vendors.readings[0].problem == nil)

        let confirmedAt = Timestamp.rfc3339(start + 60_000)
        document.withLock {
            $0 =
                #"{"status":{"indicator":"critical"},"components":[{"id":"c1","name":"API","status":"major_outage"}],"incidents":[{"id":"i","name":"API down","status":"investigating","impact":"critical","started_at":"\#(confirmedAt)","components":[{"id":"c1","name":"API"}]}]}"#
        }
        await monitor.vendors.poll(nowMs: start + 65_000, force: true)
        monitor.observeVendors(nowMs: start + 65_000)
        let json = String(decoding: StatusAPI(context: context).statusBytes(nowMs: start + 65_000), as: UTF8.self)
        #expect(json.contains("reports it: ‘API down’ (incident since"), "\(json)")
        #expect(json.contains("1m after we saw it"))
        var metrics = MetricsExposition(context: context).render(nowMs: start + 65_000)
        #expect(metrics.contains(#"lookout_vendor_reports_problem{source="pay",vendor="127.0.0.1"} 1"#))
        #expect(metrics.contains(#"lookout_vendor_page_up{vendor="127.0.0.1",page="http://127.0.0.1:\#(server.port)"} 1"#), "\(metrics)")

        // The outage ends: counted for the vendor as acknowledged a minute late; the resolved
        // notification says so.
        monitor.registry.record(ProbeResult(source: "pay", timestampMs: start + 90_000, ok: true))
        context.alerts.evaluate(nowMs: start + 90_000)
        context.alerts.evaluate(nowMs: start + 95_000)
        monitor.observeVendors(nowMs: start + 95_000)
        let all = try sent(context)
        let resolved = try #require(all.first { $0.contains("recovered") })
        #expect(resolved.contains("127.0.0.1 reported it 1m after we saw it (‘API down’)"), "\(resolved)")
        let record = try #require(monitor.vendors.records["127.0.0.1"])
        #expect(record.acknowledged == 1 && record.unacknowledged == 0 && record.lagSecondsSum == 60)
        metrics = MetricsExposition(context: context).render(nowMs: start + 95_000)
        #expect(metrics.contains(#"lookout_vendor_acknowledgement_delay_seconds_sum{vendor="127.0.0.1"} 60"#))
        #expect(metrics.contains(#"lookout_vendor_outages_acknowledged_total{vendor="127.0.0.1"} 1"#))
        await server.stop()
    }

    /// A vendor's maintenance in progress on what a source watches counts as a maintenance
    /// window only when the source asks for it.
    @Test func vendorMaintenanceIsRespectedOnlyWhenAsked() async throws {
        var router = Router()
        let until = Timestamp.rfc3339(Timestamp.nowMs() + 3_600_000)
        router.get("/api/v2/summary.json") { _ in
            .json(
                #"{"status":{"indicator":"maintenance"},"components":[{"id":"c","name":"DB","status":"under_maintenance"}],"scheduled_maintenances":[{"id":"m","name":"DB upgrade","status":"in_progress","scheduled_for":"2026-01-01T00:00:00Z","scheduled_until":"\#(until)","components":[{"id":"c","name":"DB"}]}]}"#
            )
        }
        let server = HTTPServer(configuration: .init(port: 0), router: router)
        try server.start()
        let url = "http://127.0.0.1:\(server.port)"
        let (monitor, _) = try lookout(
            """
            sources:
              - {name: asks, url: "http://127.0.0.1:1/", vendor_status: {url: "\(url)", components: [DB], respect_maintenance: true}}
              - {name: plain, url: "http://127.0.0.1:1/", vendor_status: {url: "\(url)", components: [DB]}}
            """)
        await monitor.vendors.poll(force: true)
        monitor.observeVendors()
        let entries = monitor.maintenance.entries(atMs: Timestamp.nowMs())
        #expect(entries["asks"]?.window == "vendor: DB upgrade")
        #expect(entries["plain"] == nil)
        await server.stop()
    }

    /// Row 5 of the third attack: a server that answers `{}` everywhere is unreadable, and an
    /// incident.io widget found under a base URL with a full outage is read as one.
    @Test func aBaseURLReadsEachDocumentByItsShape() async throws {
        let widget = Mutex("{}")
        var router = Router()
        router.get("/*") { request in
            let body = request.path == "/api/v1/summary" ? widget.withLock { $0 } : "{}"
            return HTTPResponse(headers: ["Content-Type": "application/json"], body: .bytes(Array(body.utf8)))
        }
        let server = HTTPServer(configuration: .init(port: 0), router: router)
        try server.start()
        let (monitor, _) = try lookout(#"sources: [{name: pay, url: "http://127.0.0.1:1/", vendor_status: {url: "http://127.0.0.1:\#(server.port)"}}]"#)
        await monitor.vendors.poll(nowMs: Timestamp.nowMs(), force: true)
        let empty = try #require(monitor.vendors.readings.first)
        #expect(empty.page == nil && empty.problem != nil, "\(empty.problem ?? "no problem")")
        widget.withLock {
            $0 =
                #"{"page_title":"Acme","ongoing_incidents":[{"id":"1","name":"API down","status":"identified","current_worst_impact":"full_outage"}],"in_progress_maintenances":[],"scheduled_maintenances":[]}"#
        }
        await monitor.vendors.poll(nowMs: Timestamp.nowMs(), force: true)
        let read = try #require(monitor.vendors.readings.first)
        #expect(read.page?.format == .incidentIOWidget && read.page?.level == .majorOutage, "\(String(describing: read.page?.level))")
        await server.stop()
    }

    /// Row 6 of the third attack: pages on one host have a breaker each and a series each: one
    /// that is down pauses none of the others.
    @Test func pagesOnOneHostAreWatchedApart() async throws {
        var router = Router()
        router.get("/down/*") { _ in HTTPResponse(status: 500, headers: [:], body: .bytes(Array("down".utf8))) }
        router.get("/up/*") { _ in
            HTTPResponse(
                headers: ["Content-Type": "application/json"], body: .bytes(Array(#"{"status":{"indicator":"none"},"components":[],"incidents":[]}"#.utf8)))
        }
        let server = HTTPServer(configuration: .init(port: 0), router: router)
        try server.start()
        let base = "http://127.0.0.1:\(server.port)"
        let (monitor, context) = try lookout(
            """
            sources:
              - {name: a, url: "http://127.0.0.1:1/", vendor_status: {url: "\(base)/down"}}
              - {name: b, url: "http://127.0.0.1:1/", vendor_status: {url: "\(base)/up"}}
            """)
        // Enough failed reads of the first page to open any breaker they share.
        for round in 0..<8 { await monitor.vendors.poll(nowMs: Timestamp.nowMs() + Int64(round) * 1000, force: true) }
        #expect(monitor.vendors.reading("\(base)/up")?.problem == nil, "\(monitor.vendors.reading("\(base)/up")?.problem ?? "")")
        #expect(monitor.vendors.reading("\(base)/down")?.problem != nil)
        let metrics = MetricsExposition(context: context).render()
        #expect(metrics.contains(#"lookout_vendor_page_up{vendor="127.0.0.1",page="\#(base)/up"} 1"#), "\(metrics)")
        #expect(metrics.contains(#"lookout_vendor_page_up{vendor="127.0.0.1",page="\#(base)/down"} 0"#))
        await server.stop()
    }
}
