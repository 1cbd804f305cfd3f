import Foundation
import Testing

@testable import ResilientHTTP

/// `URLParts` stands in for `URLComponents(string:)` wherever Lookout reads a scheme, host or
/// port; these compare the two on the URLs sources, modules and `/probe` targets are written
/// with, and on the malformed ones a config may hold.
@Suite("URL parts")
struct URLPartsTests {
    /// Where both parsers agree: nil for nil, else scheme, host, port, path, query and fragment.
    @Test(arguments: [
        "http://127.0.0.1:8080/ok?s=1", "https://example.com", "https://example.com/", "HTTP://Example.COM:443/a/b?c=d#e",
        "http://h:/", "http://h:0080/", "http://h:abc/", "http://h:65536/", "http://h:0/", "http://h:+80/", "http://h:-1/",
        "http://h:8080:90/", "http://h:1e3/", "http://h: 80/", "http://[::1]:9090/metrics", "http://[::1]/", "http://[::1/",
        "http://[::1]x/", "http://[::1]]/", "http://[::1]:8080x/", "http://[::ffff:1.2.3.4]:1/", "http://[fe80::1%eth0]/",
        "http://[v1.x]/", "http://[]/", "http://ex%41mple.com/", "http://ex%zzmple.com/", "http://a%/",
        "http://exa mple.com/", "http://a{b}/", "http://a|b/", "http://a\"b/", "http://a<b/", "http://a\\b/", "http://a[b/", "http://a\tb/",
        "http://é.com/", "http://ä:80/", "http://%C3%A4/", "http://h_1.example/", "http://h!$&'()*+,;=/", "http://h/a b", "http://h/a{b}",
        "http://h/?q=up{job=\"x\"}", "http://h/#a#b", "http://h/%", "http://h?x#y?z", "http://h#x", "http:///path", "http://", "http:",
        "http:/x", "mailto:a@b", "1http://h/", "h+t.t-p://h/", "http://@h/", "http://h@/", "http://:80/", "http://user@host:81",
        "grpc://h:50051/svc", "grpcs://h/svc", "tcp://h:22", "icmp://h", "HTTPS://[::1]:0443", "http://h/%E2%82%AC",
    ])
    func agreesWithFoundation(url: String) {
        let ours = URLParts(url)
        let theirs = URLComponents(string: url)
        #expect((ours == nil) == (theirs == nil))
        guard let ours, let theirs else { return }
        #expect(ours.scheme == theirs.scheme)
        #expect(ours.host == theirs.host)
        #expect(ours.port == theirs.port)
        #expect((ours.path.removingPercentEncoding ?? ours.path) == theirs.path)
        #expect(ours.query == theirs.query)
        #expect(ours.fragment.map { $0.replacingOccurrences(of: "#", with: "%23") } == theirs.percentEncodedFragment)
    }

    /// Where they differ, on purpose.
    @Test func differsFromFoundationWhereSaid() {
        // A port past five digits is no URL (Foundation drops it and the request would reach
        // the scheme's default port).
        #expect(URLParts("http://h:99999999999999999999/") == nil)
        #expect(URLComponents(string: "http://h:99999999999999999999/")?.port == nil)
        #expect(URLParts("http://h:000000000000443/")?.port == 443)  // leading zeros are not digits that count
        // An international name stays in its ASCII (xn--) form, the one DNS and SNI use.
        #expect(URLParts("http://xn--caf-dma.com/")?.host == "xn--caf-dma.com")
        // A reference without a scheme is no absolute URL.
        #expect(URLParts("//host/path") == nil)
        #expect(URLParts("host/path") == nil)
        #expect(URLParts("") == nil)
        // The user information is kept whole and as written.
        #expect(URLParts("http://u:p:q@h/")?.userInfo == "u:p:q")
        #expect(URLParts("http://a@b@host/")?.userInfo == "a@b")
        #expect(URLParts("http://host/")?.userInfo == nil)
        // A host whose escapes decode to a delimiter, a control character or no UTF-8 is no
        // host: written into another URL or a Host field it would end somewhere else (Foundation
        // decodes them all).
        for hostile in [
            "grpc://evil.example%23.internal:50051", "http://a%2Fb/", "http://a%3A1/", "http://a%40b/", "http://a%0D%0AX:1/", "http://a%00/", "http://a%20b/",
            "http://h%ff/", "http://[::1%5D]/", "http://[::1%0A]/",
        ] {
            #expect(URLParts(hostile) == nil, "\(hostile)")
        }
        #expect(URLComponents(string: "grpc://evil.example%23.internal:50051")?.host == "evil.example#.internal")
        #expect(URLParts("http://ex%41mple.com/")?.host == "exAmple.com")  // an escaped letter is a letter
        #expect(URLParts("http://[fe80::1%25eth0]/")?.host == "[fe80::1%eth0]")  // a zone's escaped %
    }

    @Test func portsDefaultBySchemeAndHostsCompareBare() {
        #expect(URLParts("HTTPS://x/")?.portOrDefault == 443)
        #expect(URLParts("http://x/")?.portOrDefault == 80)
        #expect(URLParts("grpcs://x/s")?.portOrDefault == 443)
        #expect(URLParts("http://x:8080/")?.portOrDefault == 8080)
        #expect(URLParts("ftp://x/")?.portOrDefault == nil)
        #expect(URLParts("http://[::1]:9/")?.bareHost == "::1")
        #expect(URLParts("http://[fe80::1%25enP2p1s0]:22")?.bareHost == "fe80::1%enP2p1s0")  // an interface's case counts
        #expect(URLParts("http://LocalHost/")?.bareHost == "LocalHost")
        #expect(URLParts("grpc://h:1/a%2Fb")?.decodedPath == "/a/b")
    }

    @Test func rebuildsTheURLWithANewHost() throws {
        var parts = try #require(URLParts("https://user:pw@Real.example:8443/a/b?c=%20d#frag"))
        #expect(parts.text == "https://user:pw@Real.example:8443/a/b?c=%20d#frag")
        parts.host = "sni.example"
        #expect(parts.text == "https://user:pw@sni.example:8443/a/b?c=%20d#frag")
        #expect(URLParts("mailto:a@b")?.text == "mailto:a@b")
    }

    /// A percent sign at the very end of an IP literal or a name reads nothing past the text.
    @Test func escapesAtTheEdgeReadNothingBeyond() {
        #expect(URLParts("http://[a%]")?.host == "[a%]")
        #expect(URLParts("http://[a%4]")?.host == "[a%4]")
        #expect(URLParts("http://h%") == nil)
        #expect(URLParts("http://h%4") == nil)
    }

    /// Query items as Foundation's `queryItems` names and values them (decoded, `+` kept, a
    /// missing `=` a nil value), each with its text as written; empty items left out.
    @Test func queryItemsDecodeAndKeepTheirText() throws {
        let url = "http://h/p?a=1&%74ype=M%58&&flag&x=a+b%2&e=#frag"
        let items = try #require(URLParts(url)).queryItems
        #expect(items.map(\.name) == ["a", "type", "flag", "x", "e"])
        #expect(items.map(\.value) == ["1", "MX", nil, "a+b%2", ""])
        #expect(items.map(\.text) == ["a=1", "%74ype=M%58", "flag", "x=a+b%2", "e="])
        #expect(items[1].writtenName == "%74ype")
        let foundation = try #require(URLComponents(string: "http://h/p?a=1&%74ype=M%58&flag&e=")?.queryItems)
        #expect(foundation.map(\.name) == ["a", "type", "flag", "e"] && foundation.map(\.value) == ["1", "MX", nil, ""])
        #expect(URLParts("http://h/p")?.queryItems == [] && URLParts("http://h/p?")?.queryItems == [])
        // Split at bytes: an `&` or `=` followed by a combining mark still separates.
        let marked = try #require(URLParts("http://h/p?q=1&\u{301}token=x&k=\u{301}v")).queryItems
        #expect(marked.map(\.name) == ["q", "\u{301}token", "k"] && marked.map(\.value) == ["1", "x", "\u{301}v"])
        // An escape that is none stays as written; one that decodes to no UTF-8 reads U+FFFD.
        let odd = try #require(URLParts("http://h/p?%74oken%zz=1&%74oken%FF=2")).queryItems
        #expect(odd.map(\.name) == ["token%zz", "token\u{FFFD}"] && odd.map(\.writtenName) == ["%74oken%zz", "%74oken%FF"])
    }
}
