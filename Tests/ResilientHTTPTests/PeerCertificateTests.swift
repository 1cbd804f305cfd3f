import Foundation
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
}
