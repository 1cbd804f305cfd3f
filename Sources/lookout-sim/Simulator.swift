import Foundation
import LookoutCore
import MicroHTTPServer
import Synchronization

/// The simulator's endpoints (SPEC section 9) and the little state some of them keep.
/// Everything but `/slow`, `/trickle` and `/ratelimit` is independent of time.
final class Simulator: Sendable {
    struct State {
        var counters: [String: Int] = [:]
        var flaky: [String: Int] = [:]
        /// Provider receivers answer 429 to this many more requests (`POST /providers/throttle`).
        var throttle: (count: Int, retryAfter: Int) = (0, 1)
        /// Throttles of one receiver's requests, by path prefix (`?path=/telegram/`).
        var throttleByPath: [String: (count: Int, retryAfter: Int)] = [:]
        /// Switches turned on by `POST /switch/ID/on`: from when each is on (Unix ms; it may be
        /// later than now, `?at=`).
        var switchedOnAt: [String: Int64] = [:]

        /// When switch `id` went on, if it is on now.
        func onSince(_ id: String) -> Int64? {
            switchedOnAt[id].flatMap { $0 <= Timestamp.nowMs() ? $0 : nil }
        }
        /// How long each of the last 10,000 `/slow` answers took by the simulator's own clock,
        /// from the request's arrival to the answer's hand-over, in microseconds (`/slow/stats`).
        var slowMicroseconds: [Int64] = []
        var tokens: [String: Date] = [:]
        var issuedTokens = 0
        var rateWindows: [String: (second: Int, count: Int)] = [:]
        var webhooks: [WebhookDelivery] = []
    }

    /// A bearer token `/protected` always accepts, for sources configured with a token file.
    static let staticToken = "sim-static-token"

    let state = Mutex(State())
    let digests = Mutex<[String: String]>([:])

    func router() -> Router {
        var router = Router()
        let routes: [(String, String, Router.Handler)] = [
            ("GET", "/ok", { _ in .json(#"{"ok":true}"#) }),
            ("GET", "/text", text),
            ("GET", "/status/:code", status),
            ("GET", "/flaky/:id", flaky),
            ("GET", "/flaky/:id/reset", flakyReset),
            ("POST", "/flaky/:id/reset", flakyReset),
            ("GET", "/slow", slow),
            ("GET", "/slow/stats", slowStats),
            ("GET", "/switch/:id", switched),
            ("GET", "/vendor/:id/api/v2/summary.json", vendorSummary),
            ("POST", "/switch/:id/:state", setSwitch),
            ("GET", "/trickle", trickle),
            ("GET", "/drop", { _ in .dropConnection }),
            ("GET", "/json/valid", { _ in .json(Simulator.validJSON) }),
            ("GET", "/json/invalid", { _ in .json(#"{"meta": {"total": 3}, "items": [1, 2"#) }),
            ("GET", "/rss/valid", { request in Simulator.rss(items: request.intQuery("items") ?? 3) }),
            ("GET", "/atom/valid", { request in Simulator.atom(items: request.intQuery("items") ?? 3) }),
            ("GET", "/rss/malformed", { _ in Simulator.malformedRSS() }),
            ("GET", "/download/:bytes", download),
            ("POST", "/oauth/token", oauthToken),
            ("GET", "/protected", protected),
            ("POST", "/orders", createOrder),
            ("GET", "/rdap/dns.json", rdapBootstrap),
            ("GET", "/rdap/domain/:name", rdapDomain),
            ("DELETE", "/orders/:id", deleteOrder),
            ("GET", "/ratelimit", rateLimit),
            ("GET", "/redirect", redirect),
            // A gzip body whatever was asked (1,200 bytes of text uncompressed), for what a
            // client that asked for no encoding, or one, counts and decodes.
            (
                "GET", "/gzip",
                { _ in
                    let text = Array(String(repeating: "lookout-sim gzip\n", count: 75).utf8)
                    guard let compressed = text.withUnsafeBytes({ Gzip.compress($0) }) else { return .text("cannot compress", status: 500) }
                    return HTTPResponse(headers: ["Content-Encoding": "gzip", "Content-Type": "text/plain"], body: .owned(compressed))
                }
            ),
            ("GET", "/gzip-bomb/:bytes", gzipBomb),
            // A fixed Last-Modified, for probe_http_last_modified_timestamp_seconds (1445412480).
            ("GET", "/last-modified", { _ in HTTPResponse(headers: ["Last-Modified": "Wed, 21 Oct 2015 07:28:00 GMT"], body: .bytes(Array("ok\n".utf8))) }),
            ("POST", "/webhook", webhook),
            ("POST", "/slack/:team/:bot/:secret", slack),
            ("POST", "/teams/:id", teams),
            ("POST", "/pagerduty/v2/enqueue", pagerDuty),
            ("POST", "/discord/:id/:token", discord),
            ("POST", "/ntfy", ntfy),
            ("POST", "/providers/throttle", throttleProviders),
            ("POST", "/telegram/:bot/sendMessage", telegram),
            ("POST", "/mattermost/hooks/:key", mattermost),
            ("POST", "/googlechat/v1/spaces/:space/messages", googleChat),
            ("PUT", "/_matrix/client/v3/rooms/:room/send/m.room.message/:txn", matrix),
            ("POST", "/pushover/1/messages.json", pushover),
            ("POST", "/gotify/message", gotify),
            ("POST", "/incidentio/v2/alert_events/http/:id", incidentIO),
            ("POST", "/splunk/integrations/generic/20131114/alert/:key/:route", splunkOnCall),
            ("GET", "/webhook/log", webhookLog),
            ("POST", "/webhook/reset", webhookReset),
            ("GET", "/counters", counters),
        ]
        for (method, path, handler) in routes {
            router.add(method, path) { [self] request in
                if request.path != "/counters" {
                    state.withLock { state in
                        state.counters[request.path, default: 0] += 1
                        // Range requests are also counted on their own, so tests can see a resume.
                        if request.headers["Range"] != nil { state.counters[request.path + " range", default: 0] += 1 }
                    }
                }
                return await handler(request)
            }
        }
        return router
    }

    static let validJSON = #"{"meta":{"total":3},"items":[{"id":1,"title":"first"},{"id":2,"title":"second"},{"id":3,"title":"third"}]}"#

    func status(_ request: HTTPRequest) async -> HTTPResponse {
        guard let code = Int(request.pathParameters["code"] ?? ""), (100...599).contains(code) else {
            return .text("status must be a number between 100 and 599\n", status: 400)
        }
        let detail = request.query["detail"] ?? "simulated status \(code)"
        var response = HTTPResponse.json(Simulator.jsonText(["detail": detail]), status: code)
        if let retryAfter = request.query["retry_after"] { response.headers.set("Retry-After", retryAfter) }
        return response
    }

    /// A body of the caller's choosing, for what regular expressions make of it: `repeat`
    /// `count` times (at most 16 Mi), then `then`; `header` becomes `X-Text`.
    func text(_ request: HTTPRequest) async -> HTTPResponse {
        let count = min(max(0, request.intQuery("count") ?? 1), 16 << 20)
        var body = Array(String(repeating: request.query["repeat"] ?? "", count: count).utf8)
        body += Array((request.query["then"] ?? "").utf8)
        var response = HTTPResponse(headers: ["Content-Type": "text/plain; charset=utf-8"], body: .bytes(body))
        if let header = request.query["header"] { response.headers.set("X-Text", header) }
        return response
    }

    func flaky(_ request: HTTPRequest) async -> HTTPResponse {
        let id = request.pathParameters["id"]!
        let failures = request.intQuery("fail") ?? 1
        let code = request.intQuery("code") ?? 503
        let seen = state.withLock { state -> Int in
            defer { state.flaky[id, default: 0] += 1 }
            return state.flaky[id, default: 0]
        }
        if seen < failures {
            return .json(Simulator.jsonText(["detail": "flaky \(id): failure \(seen + 1) of \(failures)"]), status: code)
        }
        return .json(#"{"ok":true}"#)
    }

    func flakyReset(_ request: HTTPRequest) async -> HTTPResponse {
        let id = request.pathParameters["id"]!
        state.withLock { _ = $0.flaky.removeValue(forKey: id) }
        return .json(#"{"reset":true}"#)
    }

    /// Healthy until its switch is on; then answers `code` (default 503) with `detail`, or with
    /// `ms` set, answers 200 only after that long. Tests break and mend sources at a moment.
    func switched(_ request: HTTPRequest) async -> HTTPResponse {
        let id = request.pathParameters["id"]!
        guard state.withLock({ $0.onSince(id) }) != nil else { return .json(#"{"ok":true}"#) }
        if let milliseconds = request.intQuery("ms") {
            try? await Task.sleep(for: .milliseconds(max(0, milliseconds)))
            return .json(#"{"ok":true}"#)
        }
        let code = request.intQuery("code") ?? 503
        return .json(Simulator.jsonText(["detail": request.query["detail"] ?? "switch \(id) is on"]), status: (100...599).contains(code) ? code : 503)
    }

    /// `POST /switch/ID/on` (now, or `?at=` Unix ms, so a test need not wait to turn it) or `/off`.
    func setSwitch(_ request: HTTPRequest) async -> HTTPResponse {
        let id = request.pathParameters["id"]!
        switch request.pathParameters["state"] {
        case "on":
            let at = request.intQuery("at").map(Int64.init)
            state.withLock { state in
                if let at { state.switchedOnAt[id] = at } else if state.switchedOnAt[id] == nil { state.switchedOnAt[id] = Timestamp.nowMs() }
            }
        case "off":
            state.withLock { _ = $0.switchedOnAt.removeValue(forKey: id) }
        default: return .text("state must be on or off\n", status: 400)
        }
        return .json(Simulator.jsonText(["switch": id, "state": request.pathParameters["state"] ?? ""]))
    }

    func slow(_ request: HTTPRequest) async -> HTTPResponse {
        let milliseconds = request.intQuery("ms") ?? 1000
        try? await Task.sleep(for: .milliseconds(milliseconds))
        // The clock runs from the request's arrival on the server's thread to the answer's
        // hand-over there, so the simulator's own thread hops count as the upstream's time.
        var response = HTTPResponse.json(#"{"ok":true}"#)
        response.onQueued = { [self, received = request.receivedAt] queued in
            let elapsed = queued - received
            let microseconds = elapsed.components.seconds * 1_000_000 + elapsed.components.attoseconds / 1_000_000_000_000
            state.withLock { state in
                state.slowMicroseconds.append(microseconds)
                if state.slowMicroseconds.count > 10_000 { state.slowMicroseconds.removeFirst(state.slowMicroseconds.count - 10_000) }
            }
        }
        return response
    }

    /// `/slow/stats`: `{"count", "p50_ms", "p95_ms"}` of the `/slow` answers by the simulator's
    /// own clock — the upstream's side of a latency comparison.
    func slowStats(_ request: HTTPRequest) async -> HTTPResponse {
        let sorted = state.withLock { $0.slowMicroseconds }.sorted()
        func quantile(_ q: Double) -> Double {
            sorted.isEmpty ? 0 : Double(sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * q).rounded()))]) / 1000
        }
        return .json(Simulator.jsonText(["count": sorted.count, "p50_ms": quantile(0.5), "p95_ms": quantile(0.95)]))
    }

    func trickle(_ request: HTTPRequest) async -> HTTPResponse {
        let bytes = max(0, request.intQuery("bytes") ?? 1024)
        let milliseconds = max(0, request.intQuery("ms") ?? 1000)
        let pieces = max(1, min(bytes, 20))
        return HTTPResponse(
            headers: ["Content-Type": "application/octet-stream"],
            body: .stream(contentLength: UInt64(bytes)) { writer in
                var sent = 0
                for piece in 0..<pieces {
                    let end = bytes * (piece + 1) / pieces
                    try await Task.sleep(for: .milliseconds(milliseconds / pieces))
                    try await writer.write([UInt8](repeating: UInt8(ascii: "."), count: end - sent))
                    sent = end
                }
            })
    }

    func redirect(_ request: HTTPRequest) async -> HTTPResponse {
        let remaining = request.intQuery("n") ?? 1
        let location = remaining > 1 ? "/redirect?n=\(remaining - 1)" : "/ok"
        // A body, as real servers send with a redirect ("Found. Redirecting to …").
        return HTTPResponse(
            status: 302, headers: ["Location": location, "Content-Type": "text/plain"], body: .bytes(Array("Found. Redirecting to \(location)\n".utf8)))
    }

    func rateLimit(_ request: HTTPRequest) async -> HTTPResponse {
        let limit = max(0, request.intQuery("rps") ?? 5)
        let second = Int(Date().timeIntervalSince1970)
        let key = "rps=\(limit)"
        let count = state.withLock { state -> Int in
            var window = state.rateWindows[key] ?? (second, 0)
            if window.second != second { window = (second, 0) }
            window.count += 1
            state.rateWindows[key] = window
            return window.count
        }
        if count <= limit {
            var response = HTTPResponse.json(#"{"ok":true}"#)
            response.headers.set("RateLimit", "\"default\";r=\(limit - count);t=1")
            return response
        }
        var response = HTTPResponse.json(Simulator.jsonText(["detail": "more than \(limit) requests a second"]), status: 429)
        response.headers.set("Retry-After", "1")
        response.headers.set("RateLimit", "\"default\";r=0;t=1")
        return response
    }

    func counters(_ request: HTTPRequest) async -> HTTPResponse {
        let counters = state.withLock { $0.counters }
        return .json(Simulator.jsonText(counters))
    }

    static func jsonText(_ object: Any) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }
}

extension HTTPRequest {
    func intQuery(_ name: String) -> Int? {
        query[name].flatMap { Int($0) }
    }
}
