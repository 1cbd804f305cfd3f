import Foundation
import Logging
import LookoutCore
import LookoutStore
import LookoutWeb
import MicroHTTPServer
import ResilientHTTP
import Testing

/// Wrong requests to the JSON API get a JSON answer that says what is wrong.
@Suite("API requests")
struct APIRequestTests {
    func router() throws -> Router {
        let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        let config = LookoutConfig(
            database: ":memory:",
            sources: [
                SourceConfig(name: "acme", kind: .http, url: "http://127.0.0.1:1/", interval: .seconds(3600), timeout: .seconds(1))
            ])
        let database = try LookoutDatabase(path: ":memory:")
        let monitor = Monitor(config: config, configPath: nil, logger: logger)
        monitor.start()
        return LookoutRoutes.router(LookoutContext(monitor: monitor, database: database))
    }

    func error(_ response: HTTPResponse) -> String? {
        guard case .bytes(let bytes) = response.body,
            let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any]
        else { return nil }
        #expect(object["error"] as? String == (response.status == 404 ? "not_found" : "bad_request"))
        return object["message"] as? String
    }

    @Test(arguments: [
        ("limit=abc", "limit must be a whole number from 1 to 1000"),
        ("limit=0", "limit must be a whole number from 1 to 1000"),
        ("limit=99999999999999999999", "limit must be a whole number from 1 to 1000"),
        ("before=x", "before must be an error record id (the next link carries it)"),
        ("since=yesterday", "since must be RFC 3339 (2026-11-22T10:00:00Z) or milliseconds since 1970"),
    ])
    func badPagingIsA400(query: String, message: String) async throws {
        let (key, value) = (String(query.split(separator: "=")[0]), String(query.split(separator: "=")[1]))
        let response = try await router().respond(to: HTTPRequest(method: "GET", path: "/api/v1/sources/acme/errors", query: [key: value]))
        #expect(response.status == 400)
        #expect(error(response) == message)
    }

    @Test func unknownAPIPathsAnswerInJSON() async throws {
        let router = try router()
        let response = await router.respond(to: HTTPRequest(method: "GET", path: "/api/v1/nothing"))
        #expect(response.status == 404)
        #expect(error(response)?.hasPrefix("no such endpoint: /api/v1/nothing") == true)
        let page = await router.respond(to: HTTPRequest(method: "GET", path: "/nothing"))
        #expect(page.status == 404)
        #expect(error(page) == nil)
    }

    /// Bytes of an owned or plain body.
    func bytes(_ response: HTTPResponse) -> [UInt8] { response.bodyBytes }

    @Test func metricsAreGzippedWhenTheScraperAsks() async throws {
        let router = try router()
        let plain = await router.respond(to: HTTPRequest(method: "GET", path: "/metrics"))
        #expect(plain.headers["Content-Encoding"] == nil)
        let zipped = await router.respond(to: HTTPRequest(method: "GET", path: "/metrics", headers: ["Accept-Encoding": "gzip"]))
        #expect(zipped.headers["Content-Encoding"] == "gzip")
        #expect(zipped.headers["Vary"] == "Accept-Encoding")
        let compressed = bytes(zipped)
        #expect(compressed.starts(with: [0x1F, 0x8B]))
        #expect(compressed.count * 3 < bytes(plain).count)
        // gunzip must give back the exposition (build_info and the source's series).
        let gunzip = Process()
        gunzip.executableURL = URL(fileURLWithPath: "/bin/gzip")
        gunzip.arguments = ["-dc"]
        let input = Pipe()
        let output = Pipe()
        gunzip.standardInput = input
        gunzip.standardOutput = output
        try gunzip.run()
        input.fileHandleForWriting.write(Data(compressed))
        try input.fileHandleForWriting.close()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        gunzip.waitUntilExit()
        #expect(gunzip.terminationStatus == 0)
        #expect(text.contains("lookout_build_info{"))
        #expect(text.contains(#"source="acme""#))
        let refused = await router.respond(to: HTTPRequest(method: "GET", path: "/metrics", headers: ["Accept-Encoding": "gzip;q=0, identity"]))
        #expect(refused.headers["Content-Encoding"] == nil)
    }
}
