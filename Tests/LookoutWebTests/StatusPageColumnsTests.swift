import Foundation
import Logging
import LookoutCore
import LookoutWeb
import MicroHTTPServer
import Testing

/// The columns of a source's row come from one list: on both pages the header, the cells of
/// every row and the history row's span agree, and each header carries its width class.
@Suite("status page columns")
struct StatusPageColumnsTests {
    func page(_ path: String, details: Bool = false) async throws -> String {
        let sources = [SourceConfig(name: "a", url: "http://127.0.0.1:1/"), SourceConfig(name: "b", url: "http://127.0.0.1:2/")]
        var config = LookoutConfig(sources: sources)
        config.statusPage.publicDetails = details
        let monitor = Monitor(config: config, configPath: nil, logger: Logger(label: "test"))
        monitor.registry.apply(sources)
        let router = LookoutRoutes.router(try LookoutContext(monitor: monitor))
        let response = await router.respond(to: HTTPRequest(method: "GET", path: path))
        return response.bodyText
    }

    func count(_ text: some StringProtocol, _ needle: String) -> Int { text.components(separatedBy: needle).count - 1 }

    /// Customers see states only (3 columns) unless `public_details` adds error rates and
    /// response times (5); on-call sees all 6.
    @Test(arguments: [("/", false, 6), ("/public", false, 3), ("/public", true, 5)])
    func headerCellsAndSpanAgree(path: String, details: Bool, expected: Int) async throws {
        let html = try await page(path, details: details)
        let head = try #require(
            html.range(of: "<thead>").flatMap { start in
                html.range(of: "</thead>", range: start.upperBound..<html.endIndex).map { html[start.lowerBound..<$0.upperBound] }
            })
        #expect(count(head, "<th scope=\"col\" class=\"col-") == expected)
        #expect(html.contains("colspan=\"\(expected)\""))
        for other in [3, 5, 6] where other != expected { #expect(!html.contains("colspan=\"\(other)\"")) }
        #expect(html.contains("Response time p50 / p95") == (expected != 3))
        for row in html.components(separatedBy: "<tbody id=\"source-").dropFirst() {
            let first = row.components(separatedBy: "</tr>")[0]
            #expect(count(first, "<th scope=\"row\"") + count(first, "<td data-label=") == expected)
        }
        #expect(html.contains("th.col-1 { width: 20%; }"))
        #expect(!html.lowercased().contains("breaker") || path == "/")
        #expect((path == "/") == html.contains("<td data-label=\"Circuit breaker\">"))
    }
}
