import Foundation
import Logging
import LookoutCore
import LookoutStore
import MicroHTTPServer
import ResilientHTTP
import Testing

@testable import LookoutWeb

/// The SLA routes in process: the admin token when the page is public, and what a hostile
/// upstream's words become in the CSV (no formula) and the HTML (escaped).
@Suite("SLA routes")
struct SLARoutesTests {
    func body(_ response: HTTPResponse) -> String {
        switch response.body {
        case .bytes(let bytes): String(decoding: bytes, as: UTF8.self)
        default: ""
        }
    }

    /// A context whose source `api` had one outage, the server saying `words`.
    func context(_ yaml: String, words: String) throws -> LookoutContext {
        let monitor = Monitor(config: try ConfigLoader.parse(yaml, file: "t.yml"), configPath: nil, logger: Logger(label: "test"))
        monitor.start()
        let context = try LookoutContext(monitor: monitor)
        let now = Timestamp.nowMs()
        _ = try RunStore(database: context.database).begin(nowMs: now - 600_000)
        let failure = Failure(category: .serverError, reason: "http_500", httpStatus: 500, detail: "HTTP 500", serverMessage: words)
        for (offset, ok) in [(-300_000, true), (-240_000, false), (-180_000, false), (-120_000, true)] as [(Int64, Bool)] {
            let result = ProbeResult(source: "api", timestampMs: now + offset, ok: ok, failure: ok ? nil : failure, httpStatus: ok ? 200 : 500)
            monitor.registry.record(result)
            context.writer.record(result)
        }
        context.writer.flush()
        return context
    }

    static let yaml = """
        defaults: {sla: {target: 99.9%}}
        sources: [{name: api, url: "http://127.0.0.1:1/"}]
        """

    @Test func theReportIsBehindTheTokenWhenThePageIsPublic() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sla-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let token = directory.appendingPathComponent("token")
        try "s3cret".write(to: token, atomically: true, encoding: .utf8)
        let yaml = "admin_token_file: \(token.path)\nstatus_page: {public: true}\n" + Self.yaml
        let router = LookoutRoutes.router(try context(yaml, words: "db down"))
        for path in ["/api/v1/sla", "/api/v1/sla.csv", "/sla"] {
            let refused = await router.respond(to: HTTPRequest(method: "GET", path: path))
            #expect(refused.status == 401, "\(path)")
            #expect(!body(refused).contains("db down"))
            let allowed = await router.respond(to: HTTPRequest(method: "GET", path: path, headers: ["Authorization": "Bearer s3cret"]))
            #expect(allowed.status == 200 && body(allowed).contains("db down"), "\(path)")
        }
        // Not public: open, as the full page is.
        let open = LookoutRoutes.router(try context(Self.yaml, words: "db down"))
        #expect(await open.respond(to: HTTPRequest(method: "GET", path: "/api/v1/sla")).status == 200)
    }

    @Test func anUpstreamsWordsAreNeitherAFormulaNorMarkup() async throws {
        let words = #"=HYPERLINK("http://evil/","x"), <script>alert(1)</script>"#
        let router = LookoutRoutes.router(try context(Self.yaml, words: words))
        let csv = body(await router.respond(to: HTTPRequest(method: "GET", path: "/api/v1/sla.csv")))
        // Quoted (it holds a comma and quotes), prefixed so no spreadsheet runs it.
        #expect(csv.contains(#""'=HYPERLINK(""http://evil/"",""x""), <script>alert(1)</script>""#), "\(csv)")
        let page = await router.respond(to: HTTPRequest(method: "GET", path: "/sla"))
        #expect(!body(page).contains("<script>") && body(page).contains("&lt;script&gt;"))
        // Its own style is allowed by hash, nothing else.
        #expect(page.headers["Content-Security-Policy"]?.contains("style-src 'sha256-") == true)
        #expect(page.headers["Content-Security-Policy"]?.contains("script-src") == false)
        let json = await router.respond(to: HTTPRequest(method: "GET", path: "/api/v1/sla", query: ["source": "api", "period": "2026-1"]))
        #expect(json.status == 400 && body(json).contains("months are 01 to 12"))
        let unknown = await router.respond(to: HTTPRequest(method: "GET", path: "/api/v1/sla", query: ["source": "nope"]))
        #expect(unknown.status == 404)
    }
}
