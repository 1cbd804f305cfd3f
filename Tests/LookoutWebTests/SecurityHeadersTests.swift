import Foundation
import Logging
import LookoutCore
import LookoutWeb
import MicroHTTPServer
import Testing

/// Every answer of Lookout's server carries the security headers: the page, the API, a 404 and
/// a 405 alike.
@Suite("security headers")
struct SecurityHeadersTests {
    @Test func everyAnswerCarriesThem() async throws {
        let monitor = Monitor(
            config: LookoutConfig(sources: [SourceConfig(name: "a", url: "http://127.0.0.1:1/")]), configPath: nil, logger: Logger(label: "test"))
        let router = LookoutRoutes.router(try LookoutContext(monitor: monitor))
        for (method, path) in [("GET", "/"), ("GET", "/api/v1/status"), ("GET", "/nowhere"), ("DELETE", "/metrics")] {
            let response = await router.respond(to: HTTPRequest(method: method, path: path))
            #expect(response.headers["X-Content-Type-Options"] == "nosniff", "\(method) \(path)")
            #expect(response.headers["Referrer-Policy"] == "no-referrer", "\(method) \(path)")
            #expect(response.headers["Content-Security-Policy"]?.contains("frame-ancestors 'none'") == true, "\(method) \(path)")
        }
    }

    /// The CSP allows no inline script or style but the page's own: every `<script>` and
    /// `<style>` of the page is listed by its hash, and the page has no `style=` or `on…=`
    /// attributes (which a hash cannot allow).
    @Test func thePolicyAllowsExactlyThePagesOwnScriptAndStyle() async throws {
        let monitor = Monitor(
            config: LookoutConfig(sources: [SourceConfig(name: "a", url: "http://127.0.0.1:1/")]), configPath: nil, logger: Logger(label: "test"))
        let router = LookoutRoutes.router(try LookoutContext(monitor: monitor))
        let response = await router.respond(to: HTTPRequest(method: "GET", path: "/"))
        let page = response.bodyText
        let policy = try #require(response.headers["Content-Security-Policy"])
        #expect(policy.contains("default-src 'none'"))
        var inline = 0
        for tag in ["script", "style"] {
            let pattern = try NSRegularExpression(pattern: "<\(tag)>(.*?)</\(tag)>", options: [.dotMatchesLineSeparators])
            for match in pattern.matches(in: page, range: NSRange(page.startIndex..., in: page)) {
                let content = String(page[Range(match.range(at: 1), in: page)!])
                #expect(policy.contains("\(tag)-src '\(StatusPage.hashSource(content))'"), "the page's \(tag) is not allowed by the policy")
                inline += 1
            }
        }
        #expect(inline == 2)
        #expect(!page.contains(" style=\""))
        #expect(page.range(of: " on[a-z]+=", options: .regularExpression) == nil)
    }
}
