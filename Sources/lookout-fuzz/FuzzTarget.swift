import CronSchedule
import DNSLookup
import DomainRegistration
import Foundation
import LookoutAlerting
import LookoutCore
import LookoutWeb
import ResilientHTTP

/// One parser of outside input, driven by arbitrary bytes. Each must return without trapping,
/// whatever the bytes; what it returns is checked only where an invariant is cheap to state.
enum FuzzTarget: String, CaseIterable, Sendable {
    /// `lookout.yml`, through the whole config reader (YAML, every key, alert expressions).
    case config
    /// The alert expression language.
    case alertExpression = "alert-expression"
    /// Durations, sizes and rates as written in a config, seconds as sent in headers, and URLs.
    case values
    /// RSS/Atom detection and item counting.
    case feed
    /// JSON validity and `json_path` assertions on a response body.
    case jsonPath = "json-path"
    /// `Retry-After`, `RateLimit` and `RateLimit-Reset` values.
    case serverWait = "server-wait"
    /// The message Lookout pulls out of an upstream's error body, and the classification of it.
    case serverMessage = "server-message"
    /// Lookout's HTTP handling above libmicrohttpd: routes, query strings, headers and bodies.
    case httpRequest = "http-request"
    /// A peer's status document, as `peers` reads it from another instance.
    case peerStatus = "peer-status"
    /// A hook's Mustache template: checked as `check-config` checks it, then rendered over three
    /// alerts within its budget.
    case template
    /// What the other probers read from outside: a DNS server's answer (ldns, then Lookout's
    /// reading of it and a module's record checks), a gRPC health answer and its trailers, and the
    /// dns://, icmp:// and grpc:// URLs of sources.
    case probeAnswer = "probe-answer"
    /// A vendor's status page in every format `vendor_status` reads, and what a source says of it.
    case vendorPage = "vendor-page"
    /// A TCP server's side of a `query_response` conversation: its bytes cut into lines as they
    /// arrive in chunks of any size, each matched, and what a match captured sent back.
    case conversation
    /// A regular expression from outside and a text to match it on (split at the first NUL):
    /// compiled as Go's syntax by RE2, matched anywhere, whole and with its groups.
    case regex
    /// A push source's cron schedule, and its next and previous runs in a time zone that keeps
    /// daylight saving.
    case cron
    /// What a registry answers over RDAP: IANA's bootstrap file and a domain's record.
    case rdap
    /// A flow's `{{NAME}}` templates, and what its captures and cookie jar take from an answer:
    /// the text before the first NUL is the template, the capture's path and pattern and a
    /// `Set-Cookie` value; the rest is the answer's body.
    case flow
    /// A blackbox_exporter file as `probe_modules_file` reads it: YAML with its aliases and merge
    /// keys, every prober's keys, and every regular expression compiled.
    case blackboxFile = "blackbox-file"

    func run(_ data: [UInt8]) {
        switch self {
        case .config:
            _ = try? ConfigLoader.parse(
                String(decoding: data, as: UTF8.self), file: "fuzz.yml", directory: "/nonexistent", environment: ["FUZZ": "x", "EMPTY": ""],
                hooks: NotificationProviders.hookKinds)
        case .blackboxFile:
            let read = ConfigLoader.parseBlackbox(String(decoding: data, as: UTF8.self), file: "fuzz.yml", directory: "/nonexistent")
            precondition(read.problems.allSatisfy { !$0.message.isEmpty }, "a problem without words")
        case .alertExpression:
            if let expression = try? AlertExpressionParser.parse(String(decoding: data, as: UTF8.self)) {
                _ = expression.holds { _, _ in 1 }
            }
        case .values:
            let text = String(decoding: data, as: UTF8.self)
            if let duration = ConfigValues.duration(text) {
                precondition(duration <= .longest, "a duration past the longest allowed")
                _ = duration.totalMilliseconds
                _ = ConfigValues.format(duration)
            }
            if let size = ConfigValues.size(text) { precondition(size >= 0 && size <= ConfigValues.largestSize) }
            if let rate = ConfigValues.rate(text) { precondition(rate > 0 && rate <= ConfigValues.largestRate) }
            // RFC 3339 times (silences, maintenance windows, API queries) read back what they say.
            if let ms = Timestamp.parseRFC3339(text), ms >= 0, ms < 253_402_300_800_000 {
                precondition(Timestamp.parseRFC3339(Timestamp.rfc3339(ms)) == ms, "an RFC 3339 time that does not survive a round trip")
            }
            if let seconds = Double(text), let duration = Duration.clamping(seconds: seconds) {
                precondition(duration <= .longest)
                _ = duration.totalMilliseconds
            }
            _ = Double(text).flatMap { Int64(clamping: $0) }
            // A URL's parts read back as the same URL, and a port is a port.
            let shown = Redaction.url(text).utf8
            if let parts = URLParts(text) {
                precondition(parts.port.map { (0...99_999).contains($0) } ?? true, "a port past five digits")
                if !text.contains("%") { precondition(URLParts(parts.text) == parts, "a URL whose parts read back differently") }
                // The query's items are its non-empty pieces between `&` bytes, as written.
                let pieces = Array((parts.query ?? "").utf8).split(separator: UInt8(ascii: "&")).map(Array.init)
                precondition(parts.queryItems.map { Array($0.text.utf8) } == pieces, "query items that are not the query's pieces")
                // Whatever else the URL holds, a shown URL with user information hides it.
                if parts.userInfo != nil {
                    // Bytes, not Characters: an `@` followed by a combining mark is one grapheme with it.
                    precondition(shown.starts(with: (parts.scheme + "://REDACTED@").utf8), "user information shown")
                }
            }
            // No secret-looking query item of a shown URL keeps its value, nor a piece of one
            // between `;` or `#`, nor one of a fragment written as a query, nor a path segment's
            // parameter: after a secret name (read decoded up to its first `=`, so an escaped
            // `=` ends it too) comes `=REDACTED` and nothing else.
            func checkNamed(_ piece: Substring, needsEquals: Bool, _ what: String) {
                // Bytes, not Characters: an `=` followed by a combining mark is one grapheme with it.
                let decoded = URLParts.lenientlyDecoded(piece.utf8)
                guard let equals = decoded.utf8.firstIndex(of: UInt8(ascii: "=")) else {
                    precondition(needsEquals || !Redaction.isSecret(decoded), "a secret \(what) name shown without REDACTED")
                    return
                }
                guard Redaction.isSecret(String(Substring(decoded.utf8[..<equals]))) else { return }
                precondition(decoded.utf8[equals...].elementsEqual("=REDACTED".utf8), "a secret \(what) value shown")
            }
            func checkPieces(_ text: Substring, _ separators: Set<UInt8>, _ what: String) {
                for piece in text.utf8.split(omittingEmptySubsequences: false, whereSeparator: separators.contains).dropFirst() {
                    checkNamed(Substring(piece), needsEquals: true, what + " piece")
                }
            }
            func checkItems(_ bytes: Substring.UTF8View.SubSequence, _ what: String) {
                for item in URLParts.items(ofQuery: Substring(bytes)) {
                    checkNamed(item.text, needsEquals: false, what)
                    checkPieces(item.text, [UInt8(ascii: ";"), UInt8(ascii: "#")], what)
                }
            }
            let shownText = String(decoding: shown, as: UTF8.self)
            let beforeQuery = Substring(shownText).utf8.prefix { $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") }
            let shownPath = URLParts(shownText)?.path ?? String(Substring(beforeQuery[Redaction.pathStart(inText: Substring(beforeQuery))...]))
            for segment in shownPath.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false) {
                checkPieces(Substring(segment), [UInt8(ascii: ";")], "path parameter")
            }
            let fragment = shown.firstIndex(of: UInt8(ascii: "#")) ?? shown.endIndex
            if let query = shown[..<fragment].firstIndex(of: UInt8(ascii: "?")) {
                checkItems(shown[shown.index(after: query)..<fragment], "query")
            }
            if fragment < shown.endIndex, shown[fragment...].contains(UInt8(ascii: "=")) {
                checkItems(shown[shown.index(after: fragment)...], "fragment")
            }
            _ = DNSProber.urlProblem(text)
            _ = ProbeURL.problem(text)
        case .feed:
            let minItems = data.first.map { Int($0) % 4 }
            _ = FeedProber.feed(Array(data.dropFirst()), minItems: minItems)
        case .jsonPath:
            // First line: the path; the rest: the body.
            let newline = data.firstIndex(of: 0x0A) ?? data.endIndex
            let path = String(decoding: data[..<newline], as: UTF8.self)
            let body = Array(data[min(newline + 1, data.endIndex)...])
            var source = SourceConfig(name: "fuzz", kind: .json, url: "http://127.0.0.1:1/", interval: .seconds(1), timeout: .seconds(1))
            source.expect.jsonPath = JSONPathAssertion(path: path, min: 1, max: 1e300, equals: nil, exists: true)
            _ = ResponseCheck.validator(for: source)?(TransferResult(httpStatus: 200, body: body))
        case .serverWait:
            let text = String(decoding: data, as: UTF8.self)
            for wait in [ServerWait.retryAfter(text, now: Date()), ServerWait.rateLimitReset(text)] {
                if let wait {
                    precondition(wait >= .zero && wait <= .longest)
                    _ = wait.totalMilliseconds
                }
            }
            _ = ServerWait.rateLimitRemaining(text)
            let result = TransferResult(httpStatus: 429, headers: [("Retry-After", text), ("RateLimit", text), ("RateLimit-Reset", text)])
            if let wait = ServerWait.requested(by: result) { precondition(wait <= .longest) }
        case .serverMessage:
            let status = 400 + Int(data.first ?? 0) % 200
            let contentType = (data.count > 1 && data[1] & 1 == 1) ? "application/json" : "text/plain"
            let body = Array(data.dropFirst(2))
            if let message = ServerMessage.extract(from: body, contentType: contentType) {
                precondition(message.count <= 200)
            }
            if let failure = FailureClassifier.classify(TransferResult(httpStatus: status, headers: [("Content-Type", contentType)], body: body)) {
                precondition(!failure.detail.unicodeScalars.contains { $0.value < 0x20 })
                precondition(!(failure.serverMessage ?? "").unicodeScalars.contains { $0.value < 0x20 })
                _ = failure.message(operation: "probing fuzz")
            }
        case .httpRequest:
            HTTPRequestFuzzing.shared.run(data)
        case .template:
            let text = String(decoding: data, as: UTF8.self)
            guard HookTemplate.problem(text) == nil else { return }
            let alerts: [[String: Any]] = (0..<3).map { ["rule": "R\($0)", "labels": ["source": "s\($0)"], "alerts": [["rule": "inner"]]] }
            if case .success(let output) = HookTemplate.render(text, ["alerts": alerts, "status": "firing", "source": "acme"]) {
                precondition(output.utf8.count <= HookTemplate.maxOutputBytes)
            }
        case .probeAnswer:
            ProbeAnswerFuzzing.run(data)
        case .conversation:
            ProbeAnswerFuzzing.conversation(data)
        case .regex:
            ProbeAnswerFuzzing.regex(data)
        case .flow:
            let split = data.firstIndex(of: 0) ?? data.endIndex
            let spec = String(decoding: data[..<split], as: UTF8.self)
            if let template = FlowTemplate(spec) {
                let values = Dictionary(template.names.map { ($0, "v") }) { first, _ in first }
                precondition(template.expanded(values) != nil, "a template with every value did not expand")
            }
            let answer = TransferResult(httpStatus: 200, headers: [("Set-Cookie", spec), ("X-Spec", spec)], body: Array(data[split...].dropFirst()))
            for from in [FlowCapture.From.json(spec), .header("X-Spec"), .regex("(" + spec + ")")] {
                if let value = FlowProber.captured(FlowCapture(name: "x", from: from), from: answer) { precondition(!value.isEmpty) }
            }
            var cookies: [(name: String, value: String)] = []
            FlowProber.keepCookies(answer, into: &cookies)
            precondition(cookies.count <= 1 && cookies.allSatisfy { !$0.name.isEmpty })
        case .rdap:
            if let bootstrap = try? RDAP.Bootstrap(json: data) {
                for servers in bootstrap.servers.values { precondition(!servers.isEmpty, "a TLD without a server") }
            }
            let now = Date(timeIntervalSince1970: 1_795_000_000)
            if let expires = try? RDAP.expiration(json: data, now: now) {
                precondition(expires.timeIntervalSince1970 >= 473_385_600 && expires.timeIntervalSince(now) <= 100 * 365 * 86_400)
            }
        case .cron:
            guard let schedule = try? CronSchedule(String(decoding: data, as: UTF8.self)) else { return }
            let zone = TimeZone(identifier: "Europe/Berlin")!
            let start = Date(timeIntervalSince1970: 1_774_700_000)  // the week Berlin springs forward in 2026
            if let next = schedule.next(after: start, in: zone) { precondition(next > start, "a next run before the time asked") }
            if let previous = schedule.previous(atOrBefore: start, in: zone) { precondition(previous <= start, "a previous run after the time asked") }
        case .vendorPage:
            for format in [nil] + VendorPage.Format.allCases.map(Optional.some) {
                guard case .success(let page) = VendorPage.parse(data, as: format, nowMs: 1_800_000_000_000) else { continue }
                precondition(page.components.count <= VendorPage.maxItems && page.incidents.count <= 2 * VendorPage.maxItems)
                for text in page.components.map(\.name) + page.incidents.map(\.name) + page.incidents.compactMap(\.latestUpdate) {
                    precondition(text.count <= VendorPage.maxText, "a vendor text past the limit")
                }
                var reading = VendorWatch.Reading(config: VendorStatusConfig(url: "https://status.example.com", components: ["API"]))
                reading.page = page
                reading.lastSuccessMs = 1
                _ = VendorView.of(reading, config: reading.config).sentence(downSinceMs: 1_799_999_000_000)
                _ = VendorView.of(reading, config: VendorStatusConfig(url: "https://x.example")).sentence(downSinceMs: nil)
            }
            if let ms = Timestamp.parseRFC822(String(decoding: data.prefix(64), as: UTF8.self)), ms >= 0, ms < 253_402_300_800_000 {
                precondition(Timestamp.parseRFC822(Timestamp.rfc822(ms)) == ms / 1000 * 1000, "an RFC 822 time that does not survive a round trip")
            }
        case .peerStatus:
            if case .success(let peer) = Peers.parse(TransferResult(httpStatus: 200, body: data), url: "http://127.0.0.1:1") {
                precondition(peer.sources.count <= 100_000)
                _ = peer.label
            }
        }
    }
}
