import Testing

@testable import ResilientHTTP

@Suite("Time of day")
struct TimeOfDayTests {
    @Test(arguments: [
        (Int64(0), "00:00:00 UTC"),
        (Int64(1_700_000_000_000), "22:13:20 UTC"),  // 2023-11-14T22:13:20Z
        (Int64(86_399_999), "23:59:59 UTC"),
        (Int64(3_723_000), "01:02:03 UTC"),
    ])
    func formatsUTCWithoutAFormatter(ms: Int64, expected: String) {
        #expect(ResilientClient.timeOfDay(ms) == expected)
    }
}

@Suite("ASCII comparisons")
struct ASCIIComparisonTests {
    @Test func lettersCompareWithoutCaseAndNothingElseDoes() {
        #expect(ASCII.equalIgnoringCase("Content-Type", "content-type"))
        #expect(!ASCII.equalIgnoringCase("Content-Type", "content-typ"))
        #expect(!ASCII.equalIgnoringCase("a", "ab"))
        #expect(ASCII.hasPrefixIgnoringCase("HTTPS://x", "https://"))
        #expect(!ASCII.hasPrefixIgnoringCase("http", "https://"))
        #expect(!ASCII.hasPrefixIgnoringCase("[ttps://x", "{ttps://"))  // 0x5B and 0x7B differ by 0x20 but are not letters
        #expect(!ASCII.equalIgnoringCase("É", "é"))  // ASCII only, like the header names it compares
        #expect(ASCII.equalIgnoringCase("", ""))
        #expect(ASCII.containsIgnoringCase("http://LocalHost:9/", "localhost"))
        #expect(ASCII.containsIgnoringCase("api_KEY", "key"))  // at the very end
        #expect(ASCII.containsIgnoringCase("Token", "token"))  // the whole text
        #expect(!ASCII.containsIgnoringCase("ke", "key"))  // shorter than the needle
        #expect(!ASCII.containsIgnoringCase("k-e-y", "key"))
        #expect(!ASCII.containsIgnoringCase("[ey", "{ey"))
        #expect(ASCII.containsIgnoringCase("anything", ""))
        #expect(ASCII.containsIgnoringCase("", ""))
        #expect(ASCII.containsIgnoringCase("kekeY", "key"))  // after two starts that fail
        #expect(!ASCII.containsIgnoringCase("kkkk", "kke"))
        #expect(!ASCII.containsIgnoringCase("", "a"))
        #expect(ASCII.containsIgnoringCase("ÉtokenÉ", "TOKEN"))  // bytes beyond ASCII around it
        #expect(ASCII.hasSuffixIgnoringCase("api.LOCALHOST", ".localhost"))
        #expect(!ASCII.hasSuffixIgnoringCase("localhost", ".localhost"))  // shorter than the suffix
        #expect(!ASCII.hasSuffixIgnoringCase("a.localhost.example", ".localhost"))
    }
}
