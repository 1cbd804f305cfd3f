import LookoutCore
import ResilientHTTP
import Testing

/// The kinds of source come from one list: a name parses only when a prober is registered for
/// it, each prober answers for its own kind, and the docs' list of kinds is that list.
@Suite("prober registry")
struct ProberRegistryTests {
    @Test func everyRegisteredKindParsesAndNothingElse() {
        #expect(Probers.all.map { $0.kind.rawValue } == ["http", "json", "rss", "download", "tcp", "tls", "dns", "icmp", "grpc", "push", "flow"])
        for prober in Probers.all {
            #expect(SourceKind(rawValue: prober.kind.rawValue) == prober.kind)
            #expect(ObjectIdentifier(Probers.prober(for: prober.kind)) == ObjectIdentifier(prober))
            #expect(!prober.summary.isEmpty)
        }
        #expect(SourceKind(rawValue: "ftp") == nil)
        #expect(SourceKind(rawValue: "") == nil)
        #expect(Probers.names == "http, json, rss, download, tcp, tls, dns, icmp, grpc, push or flow")
        // Which kinds are one HTTP request decides where a module may be used.
        #expect(Probers.httpRequestNames == "http, json or rss")
        let refused = #expect(throws: ConfigError.self) {
            try ConfigLoader.parse("probe_modules: {m: {kind: tcp, allow: [x]}}\nsources: [{name: a, url: \"http://127.0.0.1:1/\"}]\n", file: "t.yml")
        }
        #expect(refused?.problems.map(\.message) == [#""tcp" is a kind of source, not served at /probe (use http, json or rss)"#])
    }

    @Test func eachKindChecksWhatItOwns() {
        let page = TransferResult(httpStatus: 200, body: Array("<html>not json</html>".utf8))
        var source = SourceConfig(name: "a", kind: .json, url: "http://127.0.0.1:1/")
        #expect(ResponseCheck.validator(for: source)?(page)?.reason == "json_invalid")
        source.kind = .rss
        #expect(ResponseCheck.validator(for: source)?(page)?.reason == "xml_invalid")
        source.kind = .http
        #expect(ResponseCheck.validator(for: source) == nil)
    }

    @Test func theDocsListEveryKind() throws {
        let docs = DocsTests.root.appendingPathComponent("docs/configuration.md")
        let text = try String(contentsOf: docs, encoding: .utf8)
        let line = try #require(text.split(separator: "\n").first { $0.contains("kind: json") && $0.contains("#") })
        let listed = line.split(separator: "#")[1].split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(listed == Probers.all.map { $0.kind.rawValue })
    }
}
