import Foundation
import Testing

@testable import LookoutCore

@Suite("regex cache")
struct RegexCacheTests {
    @Test func aPatternIsCompiledOnceAndMatchedManyTimes() throws {
        let first = try #require(RegexCache.regex(#"hits":\s*[1-9]"#))
        let second = try #require(RegexCache.regex(#"hits":\s*[1-9]"#))
        #expect(first === second)
        #expect(RegexCache.matches(#"hits":\s*[1-9]"#, #"{"hits": 3}"#))
        #expect(!RegexCache.matches(#"hits":\s*[1-9]"#, #"{"hits": 0}"#))
    }

    @Test func whatIsNotARegularExpressionMatchesNothing() {
        #expect(RegexCache.regex("(") == nil)
        #expect(!RegexCache.matches("(", "("))
    }

    @Test func aModuleAllowsOnlyWholeTargets() {
        let module = ProbeModule(allow: [#"http://127\.0\.0\.1:[0-9]+/.*"#])
        for _ in 0..<3 {
            #expect(module.allows("http://127.0.0.1:9480/ok"))
            #expect(!module.allows("http://other.host/?http://127.0.0.1:1/"))
        }
    }
}
