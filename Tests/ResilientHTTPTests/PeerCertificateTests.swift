import Foundation
import TestSupport
import Testing

@testable import ResilientHTTP

/// The leaf certificate described as blackbox_exporter (Go's crypto/x509) writes it.
@Suite("peer certificate")
struct PeerCertificateTests {
    typealias Attribute = PeerCertificate.Attribute

    func attribute(_ oid: String, _ text: String, type: Int32 = 12) -> Attribute {
        Attribute(oid: oid, type: type, value: Array(text.utf8))
    }

    /// Go writes the attributes it knows in its own order, last first (CN before OU before O
    /// before C, whatever the certificate's order), several of a kind joined by `+`, and any
    /// other attribute as its OID and the hex of its DER value, at the end.
    @Test func namesAreWrittenInGosOrder() {
        let attributes = [
            attribute("2.5.4.3", "api.example"), attribute("2.5.4.6", "DE"), attribute("2.5.4.11", "a"), attribute("2.5.4.11", "b"),
            attribute("1.2.840.113549.1.9.1", "ops@example", type: 22), attribute("2.5.4.10", "Example, Inc."), attribute("2.5.4.8", "Berlin"),
        ]
        #expect(
            PeerCertificate.goName(attributes)
                == #"CN=api.example,OU=a+OU=b,O=Example\, Inc.,ST=Berlin,C=DE,1.2.840.113549.1.9.1=#0c0b6f7073406578616d706c65"#)
        // Only the last CN counts, as in Go.
        #expect(PeerCertificate.goName([attribute("2.5.4.3", "first"), attribute("2.5.4.3", "second")]) == "CN=second")
        #expect(PeerCertificate.goName([]) == "")
    }

    @Test func valuesAreEscapedAsRFC2253() {
        #expect(PeerCertificate.escape(#"a,b+c"d\e<f>g;h"#) == #"a\,b\+c\"d\\e\<f\>g\;h"#)
        #expect(PeerCertificate.escape(" lead and trail ") == #"\ lead and trail\ "#)
        #expect(PeerCertificate.escape("#first, #not") == ##"\#first\, #not"##)
        #expect(PeerCertificate.escape("plain") == "plain")
    }

    @Test func anythingButACertificateIsNone() {
        #expect(PeerCertificate(der: []) == nil)
        #expect(PeerCertificate(der: Array("not a certificate".utf8)) == nil)
        #expect(PeerCertificate.der(fromPEM: "no markers") == nil)
        #expect(PeerCertificate.der(fromPEM: "-----BEGIN CERTIFICATE-----\n!!!\n-----END CERTIFICATE-----") == nil)
    }

    /// A certificate seen again is looked up, not described again; what is looked up is what
    /// describing it gives.
    @Test func aCertificateSeenAgainIsLookedUp() throws {
        let directory = try makeTemporaryDirectory("peer-certificate")
        defer { try? FileManager.default.removeItem(at: directory) }
        let ca = try TestCA(in: directory)
        let der = try #require(PeerCertificate.der(fromPEM: String(contentsOfFile: ca.certificate, encoding: .utf8)))
        let first = try #require(PeerCertificate(der: der))
        #expect(first.subject == "CN=Lookout Test CA,O=Lookout Test CA")
        #expect(first.fingerprintSHA256 == SHA256.hex(der))
        #expect(PeerCertificate.recent.certificate(der) == first)
        // Another certificate is another entry.
        let leaf = try ca.issue("leaf.test", notBefore: Date(), notAfter: Date().addingTimeInterval(86_400), alternativeNames: "DNS:leaf.test")
        let leafDER = try #require(PeerCertificate.der(fromPEM: String(contentsOfFile: leaf.cert, encoding: .utf8)))
        let second = try #require(PeerCertificate(der: leafDER))
        #expect(second.dnsNames == "leaf.test")
        #expect(PeerCertificate.recent.certificate(leafDER) == second)
        #expect(PeerCertificate.recent.certificate(der) == first)
    }

    /// The cache holds at most its byte limit: past it, a certificate makes room; one larger
    /// than the whole limit is not kept at all.
    @Test func theCacheMakesRoomWhenFull() {
        let a = PeerCertificate(fingerprintSHA256: "aa", subject: "CN=a", issuer: "CN=ca", dnsNames: "")
        let b = PeerCertificate(fingerprintSHA256: "bb", subject: "CN=b", issuer: "CN=ca", dnsNames: "")
        let derA = [UInt8](repeating: 1, count: 100)
        let derB = [UInt8](repeating: 2, count: 100)
        let cost = PeerCertificate.Recent.cost(of: a, der: derA)
        let recent = PeerCertificate.Recent(byteLimit: 2 * cost - 1)
        recent.remember(a, derA)
        #expect(recent.certificate(derA) == a)
        #expect(recent.bytes == cost)
        recent.remember(b, derB)
        #expect(recent.count == 1)
        #expect(recent.certificate(derA) == nil)
        #expect(recent.certificate(derB) == b)
        #expect(recent.bytes == cost)
        // Remembered again, nothing changes.
        recent.remember(b, derB)
        #expect(recent.bytes == cost)
        recent.remember(a, [UInt8](repeating: 3, count: 2 * cost))
        #expect(recent.certificate([UInt8](repeating: 3, count: 2 * cost)) == nil)
        #expect(recent.certificate(derB) == b)
        // With room for three, a fourth evicts one of them, never itself.
        let roomy = PeerCertificate.Recent(byteLimit: 3 * cost)
        for byte in UInt8(1)...4 { roomy.remember(a, [UInt8](repeating: byte, count: 100)) }
        #expect(roomy.count == 3)
        #expect(roomy.certificate([UInt8](repeating: 4, count: 100)) == a)
        #expect(roomy.bytes == 3 * cost)
    }
}
