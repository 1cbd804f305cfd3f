import Testing

@testable import LookoutCore

/// What a source's URL shows on the page, in the API and in the database: no password, no
/// secret-looking query value, and every other URL exactly as written.
@Suite("redaction of URLs")
struct RedactionTests {
    @Test(arguments: [
        ("https://user:pw@api.example.com/v1", "https://REDACTED@api.example.com/v1"),
        ("https://api.example.com/v1?api_key=abc&page=2", "https://api.example.com/v1?api_key=REDACTED&page=2"),
        ("https://api.example.com/v1?Session=abc", "https://api.example.com/v1?Session=REDACTED"),
        // A name spelled with percent-escapes is the same name.
        ("https://api.example.com/v1?%74oken=abc", "https://api.example.com/v1?token=REDACTED"),
    ])
    func secretsAreHidden(url: String, shown: String) {
        #expect(Redaction.url(url) == shown)
    }

    @Test(arguments: [
        "https://api.example.com/v1", "http://127.0.0.1:8080/ok?s=12", "https://api.example.com/feed?format=atom&x=%41",
        "https://api.example.com/v1?page=2#tokens",
    ])
    func otherURLsStayAsWritten(url: String) {
        #expect(Redaction.url(url) == url)
    }
}
