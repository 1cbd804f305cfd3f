import DomainRegistration
import Foundation
import Testing

@Suite("domain registration")
struct DomainRegistrationTests {
    @Test(arguments: [
        ("api.eu.acme.com", "acme.com"), ("www.bbc.co.uk", "bbc.co.uk"), ("ACME.COM.", "acme.com"), ("a.b.github.io", "b.github.io"),
        ("api.soon.test", "soon.test"),
    ])
    func findsTheRegistrableDomain(_ host: String, _ domain: String) {
        #expect(PublicSuffix.registrableDomain(of: host) == domain)
    }

    /// An address, a public suffix itself, a single label: no registration to watch.
    @Test(arguments: ["127.0.0.1", "::1", "[::1]", "co.uk", "localhost", "", "com", "a b.com"])
    func findsNoneWhereThereIsNone(_ host: String) {
        #expect(PublicSuffix.registrableDomain(of: host) == nil)
    }

    @Test func readsTheBootstrapFile() throws {
        let bootstrap = try RDAP.Bootstrap(
            json: Array(
                #"{"version": "1.0", "services": [[["com", "net"], ["http://rdap.example/", "https://rdap.verisign.test/com/v1/"]], [["test"], ["ftp://x/"]], "junk"]}"#
                    .utf8))
        #expect(bootstrap.servers(forTLD: "COM") == ["https://rdap.verisign.test/com/v1/", "http://rdap.example/"])
        #expect(bootstrap.servers(forTLD: "test").isEmpty)
        #expect(RDAP.domainURL(base: "https://rdap.verisign.test/com/v1", domain: "acme.com") == "https://rdap.verisign.test/com/v1/domain/acme.com")
        #expect(throws: RDAP.ReadError.self) { try RDAP.Bootstrap(json: Array(#"{"services": []}"#.utf8)) }
        #expect(throws: RDAP.ReadError.self) { try RDAP.Bootstrap(json: Array("[]".utf8)) }
    }

    @Test func readsTheExpirationEvent() throws {
        let now = Date(timeIntervalSince1970: 1_795_000_000)
        let answer =
            #"{"objectClassName": "domain", "events": [{"eventAction": "registration", "eventDate": "1997-09-15T04:00:00Z"}, {"eventAction": "expiration", "eventDate": "2028-09-14T04:00:00.123Z"}]}"#
        let date = try RDAP.expiration(json: Array(answer.utf8), now: now)
        #expect(abs(date.timeIntervalSince1970 - 1_852_516_800.123) < 0.01)
    }

    /// An answer that is no RDAP, names no expiration, or lies about it is "not known", never a
    /// date: never "expired".
    @Test(arguments: [
        ("<html>", "not an RDAP document"), (#"{"events": []}"#, "names no expiration"), (#"{"errorCode": 404, "title": "Not Found"}"#, "error 404: Not Found"),
        (#"{"events": [{"eventAction": "expiration", "eventDate": "soon"}]}"#, "is not a date"),
        (#"{"events": [{"eventAction": "expiration", "eventDate": "3000-01-01T00:00:00Z"}]}"#, "not believable"),
        (#"{"events": [{"eventAction": "expiration", "eventDate": "1970-01-01T00:00:00Z"}]}"#, "not believable"),
        (String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000), "not an RDAP document"),
    ])
    func refusesWhatIsNoExpiration(_ answer: String, _ message: String) {
        #expect {
            try RDAP.expiration(json: Array(answer.utf8), now: Date(timeIntervalSince1970: 1_795_000_000))
        } throws: { error in
            "\(error)".contains(message)
        }
    }
}
