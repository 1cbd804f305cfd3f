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
        #expect(config.warnings.first?.description.hasPrefix(#"t.yml:2:27: probe_modules.m.allow[0]: ".*" allows any host"#) == true,
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
}
