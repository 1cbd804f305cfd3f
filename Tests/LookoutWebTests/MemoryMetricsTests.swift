import Foundation
import Logging
import LookoutCore
import LookoutWeb
import MicroHTTPServer
import Testing

/// /metrics splits resident memory into what can be told apart: the live heap and SQLite's share.
@Suite("memory metrics")
struct MemoryMetricsTests {
    @Test func heapAndDatabaseMemoryAreExported() async throws {
        let monitor = Monitor(
            config: LookoutConfig(sources: [SourceConfig(name: "a", url: "http://127.0.0.1:1/")]), configPath: nil, logger: Logger(label: "test"))
        let router = LookoutRoutes.router(try LookoutContext(monitor: monitor))
        let response = await router.respond(to: HTTPRequest(method: "GET", path: "/metrics"))
        let text = response.bodyText
        func value(_ name: String) -> Double? {
            text.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap { Double($0.split(separator: " ")[1]) }
        }
        let heap = try #require(value("lookout_heap_allocated_bytes"))
        let resident = try #require(value("process_resident_memory_bytes"))
        #expect(heap > 0 && heap < resident)
        // What the allocator keeps free: with the live heap, never more than is resident.
        let free = try #require(value("lookout_heap_free_bytes"))
        #expect(free >= 0 && free + heap <= resident * 1.01)
        #expect(value("lookout_db_memory_bytes") != nil)
    }
}
