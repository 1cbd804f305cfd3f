import Logging
import LookoutCore
import LookoutWeb
import MicroHTTPServer
import ResilientHTTP
import Testing

/// Shields-style badges read one source's snapshot.
@Suite("badges")
struct BadgeTests {
    func body(_ response: HTTPResponse) -> String {
        if case .bytes(let bytes) = response.body { return String(decoding: bytes, as: UTF8.self) }
        return ""
    }

    @Test func statusUptimeAndResponseTimeBadges() async throws {
        let sources = [SourceConfig(name: "api", url: "http://127.0.0.1/api"), SourceConfig(name: "<b>", url: "http://127.0.0.1/b")]
        let monitor = Monitor(config: LookoutConfig(sources: sources), configPath: nil, logger: Logger(label: "test"))
        monitor.start()
        let router = LookoutRoutes.router(try LookoutContext(monitor: monitor))
        #expect(body(await router.respond(to: HTTPRequest(method: "GET", path: "/badge/api/status.svg"))).contains(">pending</text>"))
        let now = Timestamp.nowMs()
        for index in 0..<1999 {
            var result = ProbeResult(source: "api", timestampMs: now - Int64(index) * 30, ok: true, httpStatus: 200)
            result.attemptSeconds = 0.042
            monitor.registry.record(result)
        }
        monitor.registry.record(ProbeResult(source: "api", timestampMs: now, ok: false, failure: Failure(category: .timeout, reason: "response_timeout")))
        let status = await router.respond(to: HTTPRequest(method: "GET", path: "/badge/api/status.svg"))
        #expect(status.headers["Content-Type"] == "image/svg+xml; charset=utf-8")
        #expect(status.headers["Cache-Control"] == "max-age=60, public")
        #expect(body(status).contains(">down</text>"))
        #expect(body(status).contains(##"fill="#cf222e""##))
        let uptime = body(await router.respond(to: HTTPRequest(method: "GET", path: "/badge/api/uptime/24h.svg")))
        #expect(uptime.contains(">uptime 24h</text>"))
        #expect(uptime.contains(">99.95%</text>"))
        #expect(body(await router.respond(to: HTTPRequest(method: "GET", path: "/badge/api/response-time.svg"))).contains(">42 ms</text>"))
        #expect(await router.respond(to: HTTPRequest(method: "GET", path: "/badge/api/uptime/1y.svg")).status == 404)
        #expect(await router.respond(to: HTTPRequest(method: "GET", path: "/badge/nope/status.svg")).status == 404)
        // A name is text in the SVG, never markup.
        #expect(!body(await router.respond(to: HTTPRequest(method: "GET", path: "/badge/<b>/status.svg"))).contains("<b>"))
    }
}
