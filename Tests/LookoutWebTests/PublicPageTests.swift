import Foundation
import Logging
import LookoutCore
import LookoutStore
import LookoutWeb
import MicroHTTPServer
import ResilientHTTP
import Testing

/// What customers read: display names and descriptions instead of internal names, sources kept
/// from them, Statuspage's words, no percentiles unless asked, and a fallback in use said.
@Suite("public page")
struct PublicPageTests {
    func router(_ yaml: String) throws -> (Monitor, Router) {
        let config = try ConfigLoader.parse(yaml, file: "t.yml")
        let monitor = Monitor(config: config, configPath: nil, logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
        monitor.start()
        return (monitor, LookoutRoutes.router(LookoutContext(monitor: monitor, database: try LookoutDatabase(path: ":memory:"))))
    }

    static let config = """
        defaults: {outage: {failure_threshold: 1}}
        sources:
          - {name: legacy-api, url: "http://127.0.0.1:1/", display_name: "Payments API", description: "Card payments in the EU", group: Payments}
          - {name: internal-db, url: "http://127.0.0.1:1/", public: false, group: Payments}
          - {name: news-main, url: "http://127.0.0.1:1/", display_name: News, fallback: news-mirror}
          - {name: news-mirror, url: "http://127.0.0.1:1/", display_name: "News mirror"}
        """

    func get(_ router: Router, _ path: String) async -> HTTPResponse {
        await router.respond(to: HTTPRequest(method: "GET", path: path))
    }

    @Test func customersReadDisplayNamesAndNeverTheHiddenSource() async throws {
        let (monitor, router) = try router(Self.config)
        let now = Timestamp.nowMs()
        monitor.registry.record(
            ProbeResult(source: "legacy-api", timestampMs: now, ok: false, failure: Failure(category: .serverError, reason: "http_503", httpStatus: 503)))
        monitor.registry.record(ProbeResult(source: "internal-db", timestampMs: now, ok: true))
        var fast = ProbeResult(source: "news-mirror", timestampMs: now, ok: true)
        fast.attemptSeconds = 0.05
        monitor.registry.record(fast)
        var fallback = ProbeResult(source: "news-main", timestampMs: now, ok: false, failure: Failure(category: .timeout, reason: "response_timeout"))
        fallback.fallbackInUse = "news-mirror"
        monitor.registry.record(fallback)

        let page = await get(router, "/public").bodyText
        for leak in ["legacy-api", "internal-db", "news-main", "127.0.0.1", "503", "<svg class=\"rt\"", "Error rate"] {
            #expect(!page.contains(leak), "the public page shows \(leak)")
        }
        #expect(page.contains("Payments API") && page.contains("Card payments in the EU"))
        #expect(page.contains(#"<tbody id="source-payments-api""#))
        #expect(page.contains(#"<span class="state down">Major outage</span>"#))
        #expect(page.contains(#"<span class="state ok">Operational</span>"#))
        #expect(page.contains("Showing News mirror while News is down"))
        #expect(page.contains("Partial System Outage"))
        // The on-call page still has everything.
        let full = await get(router, "/").bodyText
        #expect(full.contains("internal-db") && full.contains("legacy-api") && full.contains("Response time p50 / p95"))
        #expect(full.contains("<svg class=\"rt\""))

        // Badges: the hidden source has none, and its group's counts only the public ones.
        #expect(await get(router, "/badge/internal-db/status.svg").status == 404)
        #expect(await get(router, "/badge/legacy-api/status.svg").status == 200)
        // Statuspage v2: components by display name, the hidden one absent.
        let summary = await get(router, "/api/v2/summary.json").bodyText
        #expect(!summary.contains("internal-db") && !summary.contains("legacy-api"))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(summary.utf8)) as? [String: Any])
        let names = (object["components"] as? [[String: Any]])?.compactMap { $0["name"] as? String }
        #expect(names == ["Payments", "Payments API", "News", "News mirror"])
        let incidents = (object["incidents"] as? [[String: Any]])?.compactMap { $0["name"] as? String }
        #expect(incidents?.contains("Payments API outage") == true)
        let feed = await get(router, "/history.atom").bodyText
        #expect(feed.contains("Payments API outage") && !feed.contains("legacy-api"))
    }

    @Test func detailsOnlyWhenAskedAndConfigProblems() async throws {
        let (_, router) = try router(Self.config + "\nstatus_page: {public_details: true}\n")
        let page = await get(router, "/public").bodyText
        #expect(page.contains("Response time p50 / p95") && page.contains("Error rate (1 h)"))
        for (yaml, expected) in [
            ("display_name: \"\"", "must be 1 to 100 characters"),
            ("description: \"\(String(repeating: "x", count: 301))\"", "must be 1 to 300 characters"),
            ("public: maybe", "sources[0].public"),
        ] {
            do {
                _ = try ConfigLoader.parse("sources: [{name: a, url: \"http://127.0.0.1:1/\", \(yaml)}]", file: "t.yml")
                Issue.record("\(yaml) was accepted")
            } catch {
                #expect("\(error)".contains(expected), "\(error)")
            }
        }
    }
}
