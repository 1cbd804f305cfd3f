import Logging
import LookoutCore
import LookoutWeb
import MicroHTTPServer
import Testing

/// Every answer of Lookout's server carries the security headers: the page, the API, a 404 and
/// a 405 alike.
@Suite("security headers")
struct SecurityHeadersTests {
    @Test func everyAnswerCarriesThem() async {
        let monitor = Monitor(config: LookoutConfig(sources: [SourceConfig(name: "a", url: "http://127.0.0.1:1/")]), configPath: nil, logger: Logger(label: "test"))
        let router = LookoutRoutes.router(LookoutContext(monitor: monitor))
        for (method, path) in [("GET", "/"), ("GET", "/api/v1/status"), ("GET", "/nowhere"), ("DELETE", "/metrics")] {
            let response = await router.respond(to: HTTPRequest(method: method, path: path))
            #expect(response.headers["X-Content-Type-Options"] == "nosniff", "\(method) \(path)")
            #expect(response.headers["Referrer-Policy"] == "no-referrer", "\(method) \(path)")
            #expect(response.headers["Content-Security-Policy"]?.contains("frame-ancestors 'none'") == true, "\(method) \(path)")
        }
    }
}
