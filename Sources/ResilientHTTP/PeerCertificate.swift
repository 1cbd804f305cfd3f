internal import CLibCrypto
import Foundation
import Synchronization

/// The leaf certificate a server presented, described as blackbox_exporter's
/// `probe_ssl_last_chain_info` labels it: the SHA-256 of its DER, its subject and issuer as Go's
/// `pkix.Name.String()` writes them (`CN=example.com,O=Example,C=US`), and its DNS names.
public struct PeerCertificate: Sendable, Equatable {
    public var fingerprintSHA256: String
    public var subject: String
    public var issuer: String
    /// The DNS subject alternative names, comma-joined.
    public var dnsNames: String

    init(fingerprintSHA256: String, subject: String, issuer: String, dnsNames: String) {
        self.fingerprintSHA256 = fingerprintSHA256
        self.subject = subject
        self.issuer = issuer
        self.dnsNames = dnsNames
    }

    /// Reads a DER certificate; nil when it is not one.
    public init?(der: [UInt8]) {
        func parse() -> PeerCertificate? {
            guard let x509 = der.withUnsafeBufferPointer({ lookout_x509_from_der($0.baseAddress, $0.count) }) else { return nil }
            defer { lookout_x509_free(x509) }
            return PeerCertificate(x509, der: der)
        }
        guard let described = PeerCertificate.described(der, parse) else { return nil }
        self = described
    }

    /// The leaf certificate of a live connection (libcurl's `SSL*`), as OpenSSL already parsed it.
    init?(ssl: UnsafeMutableRawPointer) {
        guard let x509 = lookout_ssl_leaf(ssl) else { return nil }
        defer { lookout_x509_free(x509) }
        var bytes: UnsafeMutablePointer<UInt8>?
        let length = lookout_x509_der(x509, &bytes)
        defer { lookout_openssl_free(bytes) }
        guard length > 0, let bytes else { return nil }
        let der = Array(UnsafeBufferPointer(start: bytes, count: Int(length)))
        guard let described = PeerCertificate.described(der, { PeerCertificate(x509, der: der) }) else { return nil }
        self = described
    }

    /// The description of `der` kept in `recent`, or the one `describe` makes, then kept.
    private static func described(_ der: [UInt8], _ describe: () -> PeerCertificate?) -> PeerCertificate? {
        if let known = recent.certificate(der) { return known }
        guard let made = describe() else { return nil }
        recent.remember(made, der)
        return made
    }

    /// The certificates described lately, by their DER. A server presents the same certificate
    /// probe after probe, and describing it (its SHA-256, two Go-style names, its DNS names)
    /// cost about 84,000 instructions of an HTTPS probe, where looking it up here costs the
    /// hash of its bytes. Bounded by the bytes it holds (about 450 certificates), so that a
    /// server presenting a new certificate each time cannot grow it: when full, a certificate
    /// chosen at random makes room, so that with more certificates than it holds, probed in
    /// turn, it still finds its share of them.
    static let recent = Recent(byteLimit: 1 << 20)

    final class Recent: Sendable {
        /// A DER as a key: hashed as one run of bytes (an array of bytes hashes each byte on
        /// its own, 26,000 instructions for a certificate) and compared as one.
        private struct Key: Hashable {
            let der: [UInt8]

            func hash(into hasher: inout Hasher) {
                der.withUnsafeBytes { hasher.combine(bytes: $0) }
            }

            static func == (a: Key, b: Key) -> Bool {
                a.der.count == b.der.count
                    && a.der.withUnsafeBytes { a in b.der.withUnsafeBytes { b in a.count == 0 || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0 } }
            }
        }

        private struct State {
            var entries: [Key: (certificate: PeerCertificate, cost: Int)] = [:]
            var bytes = 0
        }
        private let state = Mutex(State())
        let byteLimit: Int

        init(byteLimit: Int) { self.byteLimit = byteLimit }

        /// What an entry holds: its DER, the text describing it, and about 256 bytes of the
        /// table's slot and the arrays' and strings' headers.
        static func cost(of certificate: PeerCertificate, der: [UInt8]) -> Int {
            256 + der.count + certificate.fingerprintSHA256.utf8.count + certificate.subject.utf8.count + certificate.issuer.utf8.count
                + certificate.dnsNames.utf8.count
        }

        func certificate(_ der: [UInt8]) -> PeerCertificate? {
            state.withLock { $0.entries[Key(der: der)]?.certificate }
        }

        func remember(_ certificate: PeerCertificate, _ der: [UInt8]) {
            let cost = Recent.cost(of: certificate, der: der)
            guard cost <= byteLimit else { return }
            let key = Key(der: der)
            state.withLock { state in
                guard state.entries[key] == nil else { return }
                while state.bytes + cost > byteLimit, let evicted = state.entries.randomElement() {
                    state.entries[evicted.key] = nil
                    state.bytes -= evicted.value.cost
                }
                state.entries[key] = (certificate, cost)
                state.bytes += cost
            }
        }

        var bytes: Int { state.withLock { $0.bytes } }
        var count: Int { state.withLock { $0.entries.count } }
    }

    private init(_ x509: OpaquePointer, der: [UInt8]) {
        fingerprintSHA256 = SHA256.hex(der)
        subject = PeerCertificate.goName(PeerCertificate.attributes(x509, issuer: false))
        issuer = PeerCertificate.goName(PeerCertificate.attributes(x509, issuer: true))
        var buffer = [CChar](repeating: 0, count: 8192)
        let written = lookout_x509_dns_names(x509, &buffer, Int32(buffer.count))
        dnsNames = written > 0 ? String(decoding: buffer.prefix(Int(written)).map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
    }

    /// The DER bytes of the first certificate in PEM text (libcurl's certinfo `Cert:` entry).
    public static func der(fromPEM pem: String) -> [UInt8]? {
        guard let begin = pem.range(of: "-----BEGIN CERTIFICATE-----"),
            let end = pem.range(of: "-----END CERTIFICATE-----", range: begin.upperBound..<pem.endIndex)
        else { return nil }
        let base64 = pem[begin.upperBound..<end.lowerBound].filter { !$0.isWhitespace }
        return Data(base64Encoded: String(base64)).map { Array($0) }
    }

    struct Attribute {
        var oid: String
        var type: Int32
        var value: [UInt8]

        var text: String {
            // BMPString is UTF-16BE; the string types certificates use otherwise read as UTF-8.
            guard type == 30 else { return String(decoding: value, as: UTF8.self) }
            let units = stride(from: 0, to: value.count - 1, by: 2).map { UInt16(value[$0]) << 8 | UInt16(value[$0 + 1]) }
            return String(decoding: units, as: UTF16.self)
        }
    }

    static func attributes(_ x509: OpaquePointer, issuer: Bool) -> [Attribute] {
        let count = lookout_x509_name_count(x509, issuer ? 1 : 0)
        guard count > 0 else { return [] }
        return (0..<count).compactMap { index in
            var oid = [CChar](repeating: 0, count: 128)
            var type: Int32 = 0
            var value: UnsafePointer<UInt8>?
            var length: Int32 = 0
            guard lookout_x509_name_entry(x509, issuer ? 1 : 0, index, &oid, Int32(oid.count), &type, &value, &length) != 0 else { return nil }
            let bytes = value.map { Array(UnsafeBufferPointer(start: $0, count: Int(max(0, length)))) } ?? []
            return Attribute(oid: String(cString: oid), type: type, value: bytes)
        }
    }

    /// Go's `pkix.Name.String()`: the attributes it knows, grouped in its fixed order (C, ST, L,
    /// STREET, POSTALCODE, O, OU, then the last CN and SERIALNUMBER), after any others, and the
    /// whole sequence written last to first; values of several of one kind joined by `+`.
    static func goName(_ attributes: [Attribute]) -> String {
        let names = ["2.5.4.6": "C", "2.5.4.8": "ST", "2.5.4.7": "L", "2.5.4.9": "STREET", "2.5.4.17": "POSTALCODE", "2.5.4.10": "O", "2.5.4.11": "OU"]
        var rdns: [[String]] = attributes.filter { names[$0.oid] == nil && $0.oid != "2.5.4.3" && $0.oid != "2.5.4.5" }.map {
            ["\($0.oid)=#" + der($0).hexString]
        }
        for oid in ["2.5.4.6", "2.5.4.8", "2.5.4.7", "2.5.4.9", "2.5.4.17", "2.5.4.10", "2.5.4.11"] {
            let values = attributes.filter { $0.oid == oid }.map { "\(names[oid]!)=" + escape($0.text) }
            if !values.isEmpty { rdns.append(values) }
        }
        if let common = attributes.last(where: { $0.oid == "2.5.4.3" }), !common.value.isEmpty { rdns.append(["CN=" + escape(common.text)]) }
        if let serial = attributes.last(where: { $0.oid == "2.5.4.5" }), !serial.value.isEmpty { rdns.append(["SERIALNUMBER=" + escape(serial.text)]) }
        return rdns.reversed().map { $0.joined(separator: "+") }.joined(separator: ",")
    }

    /// RFC 2253 escaping as Go does it: `,+"\<>;` anywhere, a space first or last, `#` first.
    static func escape(_ value: String) -> String {
        let bytes = Array(value.utf8)
        var escaped = ""
        var offset = 0
        for character in value.unicodeScalars {
            var needs = ",+\"\\<>;".unicodeScalars.contains(character)
            if character == " " { needs = offset == 0 || offset == bytes.count - 1 }
            if character == "#" { needs = offset == 0 }
            if needs { escaped.append("\\") }
            escaped.unicodeScalars.append(character)
            offset += String(character).utf8.count
        }
        return escaped
    }

    /// The value as Go's asn1.Marshal encodes a string: PrintableString when every character
    /// allows it, UTF8String otherwise.
    static func der(_ attribute: Attribute) -> [UInt8] {
        let text = Array(attribute.text.utf8)
        let printable = text.allSatisfy { byte in
            (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x30 && byte <= 0x39) || " '()+,-./:=?".utf8.contains(byte)
        }
        var length: [UInt8]
        if text.count < 128 {
            length = [UInt8(text.count)]
        } else {
            var count = text.count
            var digits: [UInt8] = []
            while count > 0 {
                digits.insert(UInt8(count & 0xFF), at: 0)
                count >>= 8
            }
            length = [0x80 | UInt8(digits.count)] + digits
        }
        return [printable ? 19 : 12] + length + text
    }
}
