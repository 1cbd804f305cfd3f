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
    func page(_ path: String) async throws -> String {
        let sources = [SourceConfig(name: "a", url: "http://127.0.0.1:1/"), SourceConfig(name: "b", url: "http://127.0.0.1:2/")]
        let monitor = Monitor(config: LookoutConfig(sources: sources), configPath: nil, logger: Logger(label: "test"))
        monitor.registry.apply(sources)
        let router = LookoutRoutes.router(try LookoutContext(monitor: monitor))
        let response = await router.respond(to: HTTPRequest(method: "GET", path: path))
        return response.bodyText
    }

    func count(_ text: some StringProtocol, _ needle: String) -> Int { text.components(separatedBy: needle).count - 1 }

    @Test(arguments: [("/", 6), ("/public", 5)])
    func headerCellsAndSpanAgree(path: String, expected: Int) async throws {
        let html = try await page(path)
        let head = try #require(
            html.range(of: "<thead>").flatMap { start in
                html.range(of: "</thead>", range: start.upperBound..<html.endIndex).map { html[start.lowerBound..<$0.upperBound] }
            })
        #expect(count(head, "<th scope=\"col\" class=\"col-") == expected)
        #expect(html.contains("colspan=\"\(expected)\""))
        #expect(!html.contains("colspan=\"\(expected == 6 ? 5 : 6)\""))
        for row in html.components(separatedBy: "<tbody id=\"source-").dropFirst() {
            let first = row.components(separatedBy: "</tr>")[0]
            #expect(count(first, "<th scope=\"row\"") + count(first, "<td data-label=") == expected)
        }
        #expect(html.contains("th.col-1 { width: 20%; }"))
        #expect(!html.lowercased().contains("breaker") || path == "/")
        #expect((path == "/") == html.contains("<td data-label=\"Circuit breaker\">"))
    }
}
