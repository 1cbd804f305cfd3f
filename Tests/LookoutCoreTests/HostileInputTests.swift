import Foundation
import LookoutCore
import ResilientHTTP
import Testing

/// Regression tests for the adversarial pass (issue "Hostile input never crashes, leaks or loses
/// anything"): each input from its table, asserting the clear error or the correct result.
@Suite("hostile input")
struct HostileInputTests {
    static func problems(_ text: String) -> [String] {
        do {
            _ = try ConfigLoader.parse(text, file: "t.yml", environment: [:])
            return []
        } catch let error as ConfigError {
            return error.problems.map(\.description)
        } catch {
            return ["unexpected \(error)"]
        }
    }

    // Row 2: durations and sizes past Int64 are refused, not trapped on.
    @Test(arguments: [
        ("timeout: 9223372036854775807ms", #"t.yml:4:14: sources[0].timeout: "9223372036854775807ms" is too large (at most 100 years)"#),
        ("interval: 99999999999999999999999h", #"t.yml:4:15: sources[0].interval: "99999999999999999999999h" is too large (at most 100 years)"#),
        ("interval: 0s", #"t.yml:4:15: sources[0].interval: "0s" must be above zero"#),
        ("max_bytes: 9999999999GiB", #"t.yml:4:16: sources[0].max_bytes: "9999999999GiB" is too large (at most 1EiB)"#),
        ("rate_limit: {rate: 1e300/s}", #"t.yml:4:24: sources[0].rate_limit.rate: "1e300/s" is too large (at most 1000000000/s)"#),
    ])
    func numbersPastTheirRangeAreRefused(line: String, expected: String) {
        let text = "sources:\n  - name: a\n    kind: download\n    \(line)\n    url: http://x/\n"
        #expect(HostileInputTests.problems(text).contains(expected), "got: \(HostileInputTests.problems(text))")
    }

    @Test func durationParserNeverTraps() {
        for text in ["9223372036854775807ms", "99999999999999999999999h", "1e400s", "\u{0663}s", "9" + String(repeating: "9", count: 400) + "d"] {
            #expect(ConfigValues.duration(text) == nil, "\(text)")
        }
        #expect(ConfigValues.duration("36500d") == .seconds(36500 * 86400))
        #expect(ConfigValues.size("1EiB") == nil)
        #expect(ConfigValues.size("1024TiB") == 1 << 50)
    }

    // Row 1's root: seconds from outside become durations without a trap.
    @Test func secondsFromOutsideAreClamped() {
        #expect(Duration.clamping(seconds: 1e16) == .longest)
        #expect(Duration.clamping(seconds: .infinity) == .longest)
        #expect(Duration.clamping(seconds: .nan) == nil)
        #expect(Duration.clamping(seconds: -1) == nil)
        #expect(Duration.clamping(seconds: 1.5) == .milliseconds(1500))
        #expect(Int64(clamping: 1e300) == .max)
        #expect(Int64(clamping: -1e300) == .min)
        #expect(Int64(clamping: .nan) == nil)
        #expect(Duration.seconds(Int64.max).totalMilliseconds == .max)
    }

    // Row 8: brackets nested deep are refused with a message, not a SIGSEGV.
    @Test(arguments: [5_000, 50_000])
    func deeplyNestedExpressionsAreRefused(depth: Int) {
        let expr = String(repeating: "(", count: depth) + "up" + String(repeating: ")", count: depth)
        let text = "sources:\n  - {name: a, url: \"http://x/\"}\nalerts:\n  rules:\n    - {name: x, expr: \"\(expr)\"}\n"
        let found = HostileInputTests.problems(text)
        #expect(found.count == 1)
        #expect(found.first?.hasPrefix("t.yml:5:23: alerts.rules[0].expr: longer than 1000 terms") == true, "got: \(found)")
    }

    @Test func nestingPastTheLimitIsNamed() {
        let expr = String(repeating: "(", count: 65) + "up" + String(repeating: ")", count: 65)
        do {
            _ = try AlertExpressionParser.parse(expr)
            Issue.record("parsed")
        } catch {
            #expect(error.offset == 64 && error.message == "nested more than 64 levels deep", "\(error)")
        }
        let chain = Array(repeating: "not", count: 65).joined(separator: " ") + " up > 0"
        #expect(throws: AlertExpressionError.self) { try AlertExpressionParser.parse(chain) }
        #expect((try? AlertExpressionParser.parse(String(repeating: "(", count: 64) + "up" + String(repeating: ")", count: 64))) != nil)
    }

    @Test func deeplyNestedYAMLIsASyntaxError() {
        let text = "sources: " + String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000) + "\n"
        let found = HostileInputTests.problems(text)
        #expect(found.first?.contains("YAML syntax error") == true, "got: \(found)")
    }

    // Row 6: allow patterns match the whole target.
    @Test func allowPatternsAreAnchored() {
        let module = ProbeModule(allow: [#"127\.0\.0\.1"#, #"http://127\.0\.0\.1:[0-9]+/.*"#])
        #expect(!module.allows("http://other.host/?127.0.0.1"))
        #expect(!module.allows("http://other.host/?http://127.0.0.1:1/"))
        #expect(module.allows("127.0.0.1"))
        #expect(module.allows("http://127.0.0.1:9480/ok"))
        #expect(!module.allows("http://127.0.0.1.evil.example:80/"))
    }

    @Test func checkConfigWarnsAboutAPatternThatAllowsAnyHost() throws {
        let text = "probe_modules:\n  m: {kind: http, allow: [\".*\", \"http://127\\\\.0\\\\.0\\\\.1:9480/.*\"]}\nsources:\n  - {name: a, url: \"http://x/\"}\n"
        let config = try ConfigLoader.parse(text, file: "t.yml", environment: [:])
        #expect(config.warnings.count == 1)
        #expect(
            config.warnings.first?.description.hasPrefix(#"t.yml:2:27: probe_modules.m.allow[0]: ".*" allows any host"#) == true,
            "got: \(config.warnings)")
    }

    // Retry-After and RateLimit values past Int64 ask for the longest wait, never a trap.
    @Test func serverWaitsPastInt64AreClamped() {
        #expect(ServerWait.retryAfter("99999999999999999999999", now: Date()) == .longest)
        #expect(ServerWait.retryAfter("9223372036854775807", now: Date()) == .longest)
        #expect(ServerWait.retryAfter("-5", now: Date()) == nil)
        #expect(ServerWait.rateLimitReset(#""default";r=0;t=9223372036854775807"#) == .longest)
        #expect(ServerWait.retryAfter("Fri, 31 Dec 9999 23:59:59 GMT", now: Date()) == .longest)
    }

    // Row 9: control bytes from an upstream are spelled out wherever the failure is shown.
    @Test func controlCharactersFromUpstreamsAreEscaped() {
        var body = Array(#"{"detail":"bad\u0000 \u001b[31mred\u202e"}"#.utf8)
        var failure = FailureClassifier.classify(TransferResult(httpStatus: 503, headers: [("Content-Type", "application/json")], body: body))
        #expect(failure?.serverMessage == "bad\\u0000 ^[[31mred\\u202E")
        body = [0x62, 0x61, 0x64, 0x00, 0x1B, 0x5B, 0x33, 0x31, 0x6D, 0xFF, 0xFE, 0x0A, 0x7F]
        failure = FailureClassifier.classify(TransferResult(httpStatus: 500, headers: [("Content-Type", "text/plain")], body: body))
        let message = failure?.serverMessage ?? ""
        #expect(message == "bad\\u0000^[[31m\u{FFFD}\u{FFFD} \\u007F")
        #expect(!message.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F })
        let detail = Failure(category: .invalidResponse, reason: "x", detail: "a\u{1B}]0;title\u{07}b").detail
        #expect(detail == "a^[]0;title\\u0007b")
        #expect(Failure(category: .invalidResponse, reason: "x", detail: String(repeating: "x", count: 5000)).detail.count == 1001)
    }

    // Row 12: a prefixed Atom root is a feed; HTTP/0.9 is a protocol violation, not a bad URL.
    @Test func prefixedAtomRootsAreFeeds() {
        let atom =
            #"<?xml version="1.0"?><a:feed xmlns:a="http://www.w3.org/2005/Atom"><a:title>t</a:title><a:entry><a:id>1</a:id></a:entry><a:entry><a:id>2</a:id></a:entry></a:feed>"#
        #expect(FeedProber.feed(Array(atom.utf8), minItems: 2) == nil)
        #expect(FeedProber.feed(Array(atom.utf8), minItems: 3)?.reason == "too_few_items")
        let undeclared = "<rss version=\"2.0\"><channel><item><content:encoded>x</content:encoded></item></channel></rss>"
        #expect(FeedProber.feed(Array(undeclared.utf8), minItems: 1) == nil)
        let rdf = #"<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/"><item/></rdf:RDF>"#
        #expect(FeedProber.feed(Array(rdf.utf8), minItems: 1) == nil)
        #expect(FeedProber.feed(Array("<html><body/></html>".utf8))?.detail == "the document is XML but not an RSS or Atom feed")
    }

    @Test func anHTTP09AnswerIsAnInvalidResponse() {
        let failure = FailureClassifier.classify(TransferResult(curlCode: 1, curlMessage: "Received HTTP/0.9 when not allowed"))
        #expect(failure?.category == .invalidResponse)
        #expect(failure?.reason == "http09_response")
        #expect(FailureClassifier.classify(TransferResult(curlCode: 1, curlMessage: "Protocol \"gopher\" not supported"))?.reason == "bad_url")
    }

    @Test func logValuesWithControlCharactersAreQuotedAndEscaped() {
        #expect(LogfmtLogHandler.logfmtValue("a\u{1B}[31m") == #""a\u001b[31m""#)
        #expect(LogfmtLogHandler.logfmtValue("nul\u{0}") == #""nul\u0000""#)
        #expect(LogfmtLogHandler.logfmtValue("plain") == "plain")
    }

    @Test func aTimeoutLongerThanTheIntervalIsAWarning() throws {
        let config = try ConfigLoader.parse("sources:\n  - {name: a, url: \"http://x/\", interval: 10s, timeout: 1h}\n", file: "t.yml", environment: [:])
        #expect(
            config.warnings.map(\.description) == [
                "t.yml:2:57: sources[0].timeout: 1h is longer than the interval (10s): each probe is cut off at the interval, so the timeout never applies"
            ])
    }

    /// A call ends at the interval: retries that could never start are a warning, once under
    /// `defaults` when inherited, and per source where the source sets its own timing.
    @Test func retriesThatCannotFitInTheIntervalAreAWarning() throws {
        let config = try ConfigLoader.parse(
            """
            defaults: {interval: 30s, retry: {server_error: {max_attempts: 6, base: 5s}}}
            sources:
              - {name: a, url: "http://x/"}
              - {name: b, url: "http://x/", interval: 1m}
              - {name: c, url: "http://x/", interval: 2m, timeout: 50s, retry: {server_error: {max_attempts: 2}, timeout: {max_attempts: 4}}}
            """, file: "t.yml", environment: [:])
        #expect(
            config.warnings.map(\.description) == [
                "t.yml:1:49: defaults.retry: retries that cannot start before the call's deadline (30s, the interval): server_error 6 attempts with waits of 5s, 10s, 20s, 30s…, only 3 can start; lower max_attempts or the backoff, or raise the interval",
                "t.yml:4:43: sources[1].retry: retries that cannot start before the call's deadline (1m, the interval): server_error 6 attempts with waits of 5s, 10s, 20s, 30s…, only 4 can start; lower max_attempts or the backoff, or raise the interval",
                "t.yml:5:111: sources[2].retry: retries that cannot start before the call's deadline (2m, the interval): timeout 4 attempts of up to 50s with waits of 1s, 2s, 3s, only 3 can start; lower max_attempts or the backoff, or raise the interval",
            ], "got: \(config.warnings)")
        // A short timeout makes the deadline 2 × timeout × attempts, shorter than the interval.
        let short = try ConfigLoader.parse(
            "sources:\n  - {name: a, url: \"http://x/\", interval: 60s, timeout: 2s, retry: {server_error: {max_attempts: 4, base: 5s}}}\n",
            file: "t.yml", environment: [:])
        #expect(
            short.warnings.map(\.description).first?.contains(
                "deadline (16s: 2 × timeout × attempts): server_error 4 attempts with waits of 5s, 10s, 20s, only 3 can start; lower max_attempts or the backoff, or raise the timeout"
            ) == true, "\(short.warnings)")
        // The defaults alone fit: no warning.
        #expect(try ConfigLoader.parse("sources:\n  - {name: a, url: \"http://x/\"}\n", file: "t.yml", environment: [:]).warnings.isEmpty)
        // The built-in retries a short interval cuts off are nobody's to fix: no warning.
        let quiet = try ConfigLoader.parse(
            "defaults: {interval: 5s, timeout: 2s}\nsources:\n  - {name: a, url: \"http://x/\", interval: 3s}\n", file: "t.yml", environment: [:])
        #expect(quiet.warnings.isEmpty, "\(quiet.warnings)")
    }

    @Test func aCanaryOnTheSourcesHostIsAWarning() throws {
        let config = try ConfigLoader.parse(
            """
            connectivity:
              canaries: ["http://api.example.org/health", "https://www.example.net/"]
            sources:
              - {name: a, url: "https://API.example.org/v1"}
              - {name: b, url: "https://other.example.com/"}
            """, file: "t.yml", environment: [:])
        #expect(
            config.warnings.map(\.description) == [
                "t.yml:2:14: connectivity.canaries[0]: http://api.example.org/health is on the same host as a: if that host goes down, Lookout would call itself offline and hold back their alerts; use a canary on another network path"
            ])
    }

    // Found by fuzzing: FoundationXML traps on an element name that is not UTF-8.
    @Test func feedsInAnyEncodingNeverReachTheParserAsInvalidUTF8() {
        let invalid: [UInt8] = Array("<rss><chan".utf8) + [0xFF, 0xFF] + Array("><item/></chan".utf8) + [0xFF, 0xFF] + Array("></rss>".utf8)
        #expect(FeedProber.feed(invalid, minItems: 1) == nil || FeedProber.feed(invalid, minItems: 1)?.reason == "xml_invalid")
        let declaredUTF16 = Array(#"<?xml version="1.0" encoding="UTF-16"?>"#.utf8) + invalid
        #expect(FeedProber.feed(declaredUTF16, minItems: 1)?.reason != "too_few_items")
        let latin1 =
            Array(#"<?xml version="1.0" encoding="ISO-8859-1"?><rss><channel><item><title>caf"#.utf8) + [0xE9] + Array("</title></item></channel></rss>".utf8)
        #expect(FeedProber.feed(latin1, minItems: 1) == nil)
        var utf16: [UInt8] = [0xFF, 0xFE]
        for unit in "<feed xmlns=\"http://www.w3.org/2005/Atom\"><entry><title>é</title></entry></feed>".utf16 {
            utf16 += [UInt8(unit & 0xFF), UInt8(unit >> 8)]
        }
        #expect(FeedProber.feed(utf16, minItems: 1) == nil)
        #expect(FeedProber.feed(utf16, minItems: 2)?.reason == "too_few_items")
    }
}
