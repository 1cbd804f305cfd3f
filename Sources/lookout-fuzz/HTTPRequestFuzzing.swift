import Dispatch
import Foundation
import Logging
import LookoutAlerting
import LookoutCore
import LookoutStore
import LookoutWeb
import MicroHTTPServer
import ResilientHTTP
import Synchronization

/// Lookout's routes with a real monitor, store and alerting behind them, fed requests parsed
/// from fuzz input:
///
/// ```
/// METHOD\n
/// /path?query\n
/// Header-Name: value\n   (any number)
/// \n
/// body
/// ```
///
/// Sources and `/probe` targets point at 127.0.0.1:1, where nothing listens, so a probe the fuzzer
/// triggers ends at once and never leaves the machine.
final class HTTPRequestFuzzing: @unchecked Sendable {
    // Used from libFuzzer's one thread only.
    static let shared = HTTPRequestFuzzing()
    /// Requests served before the whole stack is built anew, so silences and records a long run
    /// adds cannot grow without bound.
    static let requestsPerStack = 20_000

    private var router: Router
    private var served = 0

    init() {
        router = HTTPRequestFuzzing.makeRouter()
    }

    static func makeRouter() -> Router {
        let logger = Logger(label: "fuzz") { _ in SwiftLogNoOpLogHandler() }
        var config = LookoutConfig(
            database: ":memory:",
            sources: [
                SourceConfig(name: "acme", kind: .json, url: "http://127.0.0.1:1/acme", interval: .seconds(3600), timeout: .seconds(1)),
                SourceConfig(name: "feed", kind: .rss, url: "http://127.0.0.1:1/feed", interval: .seconds(3600), timeout: .seconds(1)),
            ])
        config.adminToken = "fuzz-token"
        config.probeModules = ["http_2xx": ProbeModule(kind: .http, timeout: .seconds(1), allow: [#"http://127\.0\.0\.1:1/.*"#])]
        let database = try! LookoutDatabase(path: ":memory:")
        let writer = RecordWriter(database: database, logger: logger)
        let monitor = Monitor(config: config, configPath: nil, sinks: [writer], clientEvents: [writer], logger: logger)
        monitor.start()
        // What a running monitor's first apply does: the breaker routes reach their work.
        for source in config.sources { monitor.client.configure(upstream: source.name, policy: source.policy) }
        return LookoutRoutes.router(LookoutContext(monitor: monitor, database: database, writer: writer, logger: logger))
    }

    func run(_ data: [UInt8]) {
        served += 1
        if served % HTTPRequestFuzzing.requestsPerStack == 0 { router = HTTPRequestFuzzing.makeRouter() }
        let request = HTTPRequestFuzzing.request(from: data)
        let router = self.router
        let done = DispatchSemaphore(value: 0)
        let status = Atomic<Int>(0)
        Task {
            let response = await router.respond(to: request)
            status.store(response.status, ordering: .relaxed)
            done.signal()
        }
        done.wait()
        let code = status.load(ordering: .relaxed)
        precondition((100...599).contains(code), "a response status of \(code)")
        precondition(code != 500 || request.method == "POST", "an internal error answered \(request.method) \(request.path)")
    }

    static func request(from data: [UInt8]) -> HTTPRequest {
        var lines = data.split(separator: 0x0A, maxSplits: 64, omittingEmptySubsequences: false).makeIterator()
        func text(_ bytes: ArraySlice<UInt8>?) -> String { String(decoding: bytes ?? [], as: UTF8.self) }
        let method = text(lines.next()).trimmingCharacters(in: .whitespaces)
        let target = text(lines.next())
        var path = target
        var query: [String: String] = [:]
        if let mark = target.firstIndex(of: "?") {
            path = String(target[..<mark])
            for pair in target[target.index(after: mark)...].split(separator: "&") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                guard !parts.isEmpty else { continue }  // a pair that is only "="
                let key = String(parts[0]).removingPercentEncoding ?? String(parts[0])
                let value = parts.count > 1 ? (String(parts[1]).removingPercentEncoding ?? String(parts[1])) : ""
                query[key] = value
            }
        }
        var headers = HTTPHeaders()
        var body: [UInt8] = []
        while let line = lines.next() {
            if line.isEmpty {
                var rest: [UInt8] = []
                while let more = lines.next() {
                    if !rest.isEmpty || more.startIndex > 0 { rest.append(0x0A) }
                    rest.append(contentsOf: more)
                }
                body = rest
                break
            }
            let header = text(line)
            guard let colon = header.firstIndex(of: ":") else { continue }
            headers.add(String(header[..<colon]), String(header[header.index(after: colon)...]).trimmingCharacters(in: .whitespaces))
        }
        return HTTPRequest(
            method: method.isEmpty ? "GET" : method, path: path.isEmpty ? "/" : path, query: query, headers: headers, body: body, remoteAddress: "127.0.0.1")
    }
}
