import Testing

@testable import LookoutCore

@Suite("Source names")
struct SourceNameTests {
    @Test(arguments: ["a", "A.b_c-9", String(repeating: "x", count: 64)])
    func accepts(name: String) {
        #expect(ConfigReader.isSourceName(name))
    }

    @Test(arguments: ["", String(repeating: "x", count: 65), "<script>", "ü", "a b", "a/b", "a\n"])
    func refuses(name: String) {
        #expect(!ConfigReader.isSourceName(name))
    }
}
