import LookoutCore
import Testing

@Suite("a source's fields, shared until written")
struct SourceConfigTests {
    /// Two holders of one source's fields never see each other's writes, whether a field is read
    /// and written through its own accessor (`name`, `labels`, `policy`) or through the key-path
    /// subscript (`method`); a holder's own reads see its writes.
    @Test func aWriteToACopyLeavesTheOriginalAsItWas() {
        var original = SourceConfig(name: "a", url: "https://a.test/", interval: .seconds(30))
        original.labels = ["team": "payments"]
        original.group = "EU"
        var copy = original
        copy.name = "b"
        copy.url = "https://b.test/"
        copy.interval = .seconds(5)
        copy.labels["team"] = "search"
        copy.group = nil
        copy.policy.requireHTTPS = !original.policy.requireHTTPS
        copy.dependsOn = ["a"]
        copy.method = "HEAD"

        #expect(original.name == "a")
        #expect(original.url == "https://a.test/")
        #expect(original.interval == .seconds(30))
        #expect(original.labels == ["team": "payments"])
        #expect(original.group == "EU")
        #expect(original.dependsOn.isEmpty)
        #expect(original.method == "GET")
        #expect(copy.name == "b")
        #expect(copy.url == "https://b.test/")
        #expect(copy.interval == .seconds(5))
        #expect(copy.labels == ["team": "search"])
        #expect(copy.group == nil)
        #expect(copy.policy.requireHTTPS != original.policy.requireHTTPS)
        #expect(copy.dependsOn == ["a"])
        #expect(copy.method == "HEAD")
        #expect(copy != original)
    }

    /// A copy written back to what it was equals the original again: equality compares the
    /// fields, not which storage holds them.
    @Test func equalFieldsAreEqualWhereverTheyAreHeld() {
        let original = SourceConfig(name: "a", url: "https://a.test/")
        var copy = original
        copy.name = "b"
        #expect(copy != original)
        copy.name = "a"
        #expect(copy == original)
    }

    /// What the connectivity monitor counts as one host: the host and its port as written, or
    /// the whole text when it names none.
    @Test func aSourceLivesOnItsHostAndPort() {
        #expect(SourceConfig.hostAndPort(of: "https://api.example/v1") == "api.example")
        #expect(SourceConfig.hostAndPort(of: "http://api.example:8080/v1?x=1") == "api.example:8080")
        #expect(SourceConfig.hostAndPort(of: "tcp://[::1]:5432") == "[::1]:5432")
        #expect(SourceConfig.hostAndPort(of: "no url at all") == "no url at all")
    }
}
