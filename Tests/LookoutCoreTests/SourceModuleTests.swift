import Foundation
import LookoutCore
import MicroHTTPServer
import ResilientHTTP
import Synchronization
import Testing

/// A source that names a `/probe` module (`module:`) makes the module's request and is judged
/// by its checks, so one definition serves the schedule and blackbox-style scrapes.
@Suite("sources naming a probe module")
struct SourceModuleTests {
    @Test func theSourceSendsTheModulesRequestAndAppliesItsChecks() async throws {
        let seen = Mutex<[String]>([])
        var router = Router()
        router.post("/search") { request in
            seen.withLock { $0.append("\(request.method) \(request.headers["X-Probe"] ?? "-") \(request.bodyText)") }
            return HTTPResponse(status: 201, headers: ["Content-Type": "application/json"], body: .bytes(Array(#"{"hits": 0}"#.utf8)))
        }
        let server = HTTPServer(configuration: .init(port: 0), router: router)
        try server.start()
        defer { Task { await server.stop() } }
        let config = try ConfigLoader.parse(
            """
            probe_modules:
              search: {kind: http, allow: [".*"]}
            sources:
              - {name: plain, url: "http://127.0.0.1:\(server.port)/search"}
            """, file: "t.yml")
        #expect(config.sources[0].module == nil)
        // A module from a blackbox file: POST with a body and a header, 201 accepted, and a body
        // regex that fails on this answer.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("module-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try """
        modules:
          search_post:
            prober: http
            http: {method: POST, body: '{"q": "ping"}', headers: {X-Probe: lookout}, valid_status_codes: [201]}
          search_hits:
            prober: http
            http: {method: POST, body: '{}', valid_status_codes: [201], fail_if_body_matches_regexp: ['"hits": 0']}
        """.write(to: directory.appendingPathComponent("blackbox.yml"), atomically: true, encoding: .utf8)
        let named = try ConfigLoader.parse(
            """
            probe_modules_file: blackbox.yml
            probe_allow: ["http://127\\\\.0\\\\.0\\\\.1:[0-9]+/.*"]
            sources:
              - {name: post, url: "http://127.0.0.1:\(server.port)/search", module: search_post}
              - {name: hits, url: "http://127.0.0.1:\(server.port)/search", module: search_hits}
            """, file: "t.yml", directory: directory.path)
        let prober = SourceProber(client: ResilientClient())
        let post = await prober.probe(named.sources[0])
        #expect(post.ok, "\(String(describing: post.failure))")
        // The module's request (a loaded machine may time out and retry it: each try is the same).
        #expect(!seen.withLock { $0 }.isEmpty && Set(seen.withLock { $0 }) == [#"POST lookout {"q": "ping"}"#])
        let hits = await prober.probe(named.sources[1])
        #expect(hits.failure?.reason == "body_mismatch")
    }

    /// The module is shared, not carried: inline it was 800 of a source's 1,609 bytes in every
    /// copy (the registry keeps one more), 16 MB at 10,000 sources that mostly name none. Copies
    /// of a source share one module, and a changed module is still a changed source.
    @Test func aSourceCarriesItsModuleByReference() throws {
        // At most 1 KB inline (817 bytes now): the module inline would add its 800.
        #expect(MemoryLayout<SourceConfig>.size <= 1024)
        let config = try ConfigLoader.parse(
            """
            probe_modules:
              search: {kind: http, allow: [".*"]}
            sources:
              - {name: a, url: "http://127.0.0.1:1/", module: search}
            """, file: "t.yml")
        var changed = config.sources[0]
        #expect(changed == config.sources[0])
        changed.module?.method = "POST"
        #expect(changed != config.sources[0])
        #expect(config.sources[0].module?.method == "GET")
    }

    @Test func aModuleThatIsNotThereOrDoesNotFitIsAnError() {
        func problems(_ yaml: String) -> [String] {
            do {
                _ = try ConfigLoader.parse(yaml, file: "t.yml")
                return []
            } catch let error as ConfigError {
                return error.problems.map(\.description)
            } catch {
                return ["\(error)"]
            }
        }
        #expect(
            problems("probe_modules: {a: {kind: http, allow: [x]}}\nsources:\n  - {name: s, url: \"http://x/\", module: b}\n")
                == [#"t.yml:3:41: sources[0].module: no probe module is named "b" (configured: a)"#])
        #expect(
            problems("sources:\n  - {name: s, kind: tcp, url: \"tcp://x:1\", module: b}\n").first?.contains("only applies to http, json or rss and dns sources")
                == true)
        // A dns source takes a dns module, and only one.
        #expect(
            problems("probe_modules: {a: {kind: http, allow: [x]}}\nsources:\n  - {name: s, kind: dns, url: \"dns://127.0.0.1/x.test\", module: a}\n")
                .first?.contains(#""a" is a http module; a dns source takes a dns module (prober: dns)"#) == true)
    }
}
