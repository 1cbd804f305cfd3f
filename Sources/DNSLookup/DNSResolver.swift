internal import CLDNS
import ClientSocket
import Foundation

/// One DNS question to one server: what `kind: dns` sources and blackbox's `dns` prober ask.
public struct DNSQuery: Sendable, Equatable {
    /// The server, an IPv4 or IPv6 address (no name: resolving the resolver is not this query).
    public var server: String
    public var port: UInt16
    /// The name asked about, e.g. `example.com` (a final dot is added if missing).
    public var name: String
    /// The type's mnemonic: `A`, `AAAA`, `MX`, `SOA`, `TXT`...
    public var type: String
    /// The class's mnemonic, `IN` almost always.
    public var recordClass: String
    public var overTCP: Bool
    /// The RD bit: ask the server to recurse.
    public var recursionDesired: Bool
    public var timeout: Duration
    /// The local address to send from (an IP literal of the server's family); nil: any.
    public var source: String?
    /// DNS over TLS (RFC 7858): the message over TCP in TLS, set up as these say; nil: none.
    public var tls: TLSSettings?

    /// A query for `name` of `type` to `server`, over UDP with recursion desired.
    public init(
        server: String, port: UInt16 = 53, name: String, type: String = "A", recordClass: String = "IN", overTCP: Bool = false,
        recursionDesired: Bool = true, timeout: Duration = .seconds(5), source: String? = nil
    ) {
        self.source = source
        self.server = server
        self.port = port
        self.name = name
        self.type = type
        self.recordClass = recordClass
        self.overTCP = overTCP
        self.recursionDesired = recursionDesired
        self.timeout = timeout
    }
}

/// One record of an answer, as `name TTL CLASS TYPE RDATA` text (what blackbox_exporter's
/// `validate_*_rrs` expressions are matched against).
public struct DNSRecord: Sendable, Equatable {
    public var text: String
    /// The type number (1 A, 6 SOA, 28 AAAA...).
    public var type: Int
    /// An SOA record's serial.
    public var serial: UInt32?
}

/// The server's answer: its rcode and its three sections.
public struct DNSAnswer: Sendable, Equatable {
    /// 0 NOERROR, 2 SERVFAIL, 3 NXDOMAIN, 5 REFUSED...
    public var rcode: Int
    public var answer: [DNSRecord]
    public var authority: [DNSRecord]
    public var additional: [DNSRecord]
    /// From sending the question to the answer.
    public var seconds: Double
    /// Connecting and shaking hands before the question (DNS over TLS); 0 otherwise.
    public var connectSeconds: Double = 0

    /// The rcode's mnemonic (`NOERROR`, `NXDOMAIN`), or its number.
    public var rcodeName: String { DNSAnswer.name(ofRcode: rcode) }

    public static func name(ofRcode rcode: Int) -> String {
        lookout_dns_rcode_name(Int32(clamping: rcode)).map { String(cString: $0) } ?? "RCODE\(rcode)"
    }

    /// The serial of the first SOA record in the answer or authority section.
    public var serial: UInt32? {
        (answer + authority).lazy.compactMap(\.serial).first
    }
}

/// Why no answer came.
public enum DNSQueryError: Error, Sendable, Equatable {
    /// The query could not be put together: the server is not an address, the name not a name,
    /// the type or class unknown.
    case badQuery(String)
    /// Nothing came back within the timeout.
    case timeout
    /// Sending or receiving failed (a refused TCP connection, an unreachable network).
    case network(String)
    /// An answer came that is no well-formed DNS message (cut short, garbage, another ID).
    case malformed(String)
    /// The answer over UDP was cut to fit (TC), and asking again over TCP failed.
    case truncated(String)
    /// DNS over TLS: the handshake failed. `reason` is `cert_expired` (on the certificate's
    /// validity), `cert_invalid` (untrusted, another name) or `tls_handshake`.
    case tls(reason: String, detail: String)
}

extension DNSQueryError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .badQuery(let text), .network(let text), .malformed(let text), .truncated(let text): text
        case .timeout: "no answer in time"
        case .tls(_, let detail): detail
        }
    }
}

/// Sends DNS queries through ldns, on `BlockingCall`'s threads (ldns waits in the calling
/// thread; a query is short, and the transfer threads stay free).
public enum DNSResolver {
    public static func send(_ query: DNSQuery) async -> Result<DNSAnswer, DNSQueryError> {
        await BlockingCall.run { perform(query) }
    }

    static func perform(_ query: DNSQuery) -> Result<DNSAnswer, DNSQueryError> {
        if let settings = query.tls { return performOverTLS(query, settings: settings) }
        let name = query.name.hasSuffix(".") ? query.name : query.name + "."
        let timeoutMs = Int32(clamping: max(1, query.timeout.components.seconds * 1000 + query.timeout.components.attoseconds / 1_000_000_000_000_000))
        var packet: UnsafeMutablePointer<ldns_pkt>?
        let started = ContinuousClock.now
        // Never 0: a stream of zero bytes must not pass for the answer.
        let id = UInt16.random(in: 1...UInt16.max)
        let status = lookout_dns_query(
            query.server, query.port, query.source, name, query.type.uppercased(), query.recordClass.uppercased(), query.overTCP ? 1 : 0,
            query.recursionDesired ? 1 : 0, timeoutMs, id, &packet)
        let elapsed = ContinuousClock.now - started
        switch status {
        case LOOKOUT_DNS_BAD_SERVER: return .failure(.badQuery("\(query.server) is not an IP address"))
        case LOOKOUT_DNS_BAD_NAME: return .failure(.badQuery("\(query.name) is not a domain name"))
        case LOOKOUT_DNS_BAD_TYPE: return .failure(.badQuery("\(query.type) is not a record type"))
        case LOOKOUT_DNS_BAD_CLASS: return .failure(.badQuery("\(query.recordClass) is not a record class"))
        case LOOKOUT_DNS_BAD_SOURCE: return .failure(.badQuery("\(query.source ?? "") is not an IP address to send from"))
        case LOOKOUT_DNS_OTHER_ID: return .failure(.malformed("the answer is for another question (its ID differs): a forged or stray answer"))
        default: break
        }
        guard status == 0, let packet else {
            // ldns reports a timeout as a network error: tell them apart by the time taken.
            if elapsed >= query.timeout { return .failure(.timeout) }
            let text = lookout_dns_status_text(status).map { String(cString: $0) } ?? "ldns status \(status)"
            if lookout_dns_status_is_malformed(status) == 1 { return .failure(.malformed(text)) }
            return .failure(.network(text))
        }
        defer { lookout_dns_packet_free(packet) }
        if !query.overTCP, lookout_dns_truncated(packet) == 1 {
            // What a resolver does with a truncated answer (RFC 7766 section 5): ask over TCP,
            // in the time left.
            var again = query
            again.overTCP = true
            again.timeout = query.timeout - elapsed
            guard again.timeout > .zero else { return .failure(.truncated("the answer over UDP was truncated, and no time was left to ask over TCP")) }
            switch perform(again) {
            case .success(let answer): return .success(answer)
            case .failure(let error): return .failure(.truncated("the answer over UDP was truncated, and over TCP: \(error)"))
            }
        }
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return .success(answer(of: packet, seconds: seconds))
    }

    /// An answer read from the wire (what a server sent), or nil when it is not a DNS message:
    /// the same reading as a query's answer gets, for tests and the fuzzer.
    public static func answer(wire: [UInt8]) -> DNSAnswer? {
        guard let packet = lookout_dns_parse(wire, wire.count) else { return nil }
        defer { lookout_dns_packet_free(packet) }
        return answer(of: packet, seconds: 0)
    }

    static func answer(of packet: UnsafeMutablePointer<ldns_pkt>, seconds: Double) -> DNSAnswer {
        func records(_ section: Int32) -> [DNSRecord] {
            (0..<lookout_dns_count(packet, section)).map { index in
                let text = lookout_dns_record_text(packet, section, index)
                defer { free(text) }
                let serial = lookout_dns_soa_serial(packet, section, index)
                return DNSRecord(
                    text: text.map { String(cString: $0) } ?? "", type: Int(lookout_dns_record_type(packet, section, index)),
                    serial: serial >= 0 ? UInt32(truncatingIfNeeded: serial) : nil)
            }
        }
        return DNSAnswer(rcode: Int(lookout_dns_rcode(packet)), answer: records(0), authority: records(1), additional: records(2), seconds: seconds)
    }
}

/// DNS over TLS (RFC 7858): ldns builds the question and reads the answer; the connection and
/// its TLS are ClientSocket's, since ldns speaks no TLS.
extension DNSResolver {
    /// The largest answer read: a DNS message over TCP says its length in two bytes.
    static let maxMessage = 65_535

    static func performOverTLS(_ query: DNSQuery, settings: TLSSettings) -> Result<DNSAnswer, DNSQueryError> {
        let name = query.name.hasSuffix(".") ? query.name : query.name + "."
        let id = UInt16.random(in: 0...UInt16.max)
        var status: Int32 = 0
        guard
            let question = lookout_dns_question(
                name, query.type.uppercased(), query.recordClass.uppercased(), query.recursionDesired ? 1 : 0, id, &status)
        else {
            switch status {
            case LOOKOUT_DNS_BAD_TYPE: return .failure(.badQuery("\(query.type) is not a record type"))
            case LOOKOUT_DNS_BAD_CLASS: return .failure(.badQuery("\(query.recordClass) is not a record class"))
            default: return .failure(.badQuery("\(query.name) is not a domain name"))
            }
        }
        var wire: UnsafeMutablePointer<UInt8>?
        var length = 0
        let built = lookout_dns_wire(question, &wire, &length)
        lookout_dns_packet_free(question)
        guard built != 0, let wire, length <= maxMessage else {
            free(wire)
            return .failure(.badQuery("\(query.name) does not fit in a DNS message"))
        }
        let message = [UInt8(length >> 8), UInt8(length & 0xFF)] + Array(UnsafeBufferPointer(start: wire, count: length))
        free(wire)

        let started = ContinuousClock.now
        var attempt = ClientConnection.Attempt()
        let connection: ClientConnection
        switch ClientConnection.open(host: query.server, port: query.port, source: query.source, deadline: started + query.timeout, attempt: &attempt) {
        case .success(let open): connection = open
        case .failure(let failure): return .failure(DNSQueryError(failure))
        }
        if let failure = connection.startTLS(host: query.server, settings: settings) { return .failure(DNSQueryError(failure)) }
        let asked = ContinuousClock.now
        if let failure = connection.write(message) { return .failure(DNSQueryError(failure)) }
        // Two bytes of length, then the message; nothing past the largest one is read.
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while received.count < 2 || received.count < 2 + (Int(received[0]) << 8 | Int(received[1])) {
            switch connection.read(&chunk) {
            case .data(let count): received += chunk[..<count]
            case .closed: return .failure(.malformed("the server closed the connection before a whole answer"))
            case .timedOut: return .failure(.timeout)
            }
            if received.count > 2 + maxMessage { break }
        }
        let answered = ContinuousClock.now
        let size = Int(received[0]) << 8 | Int(received[1])
        let body = Array(received[2..<(2 + size)])
        guard let packet = lookout_dns_parse(body, body.count) else { return .failure(.malformed("the answer is not a DNS message")) }
        defer { lookout_dns_packet_free(packet) }
        guard lookout_dns_id(packet) == id else { return .failure(.malformed("the answer is for another question (its ID differs)")) }
        var answer = answer(of: packet, seconds: (answered - asked).seconds)
        answer.connectSeconds = (asked - started).seconds
        return .success(answer)
    }
}

extension DNSQueryError {
    /// What a DNS over TLS connection's failure means for the query.
    init(_ failure: SocketFailure) {
        switch failure.reason {
        case "timeout": self = .timeout
        case "tls_expired": self = .tls(reason: "cert_expired", detail: failure.message)
        case "tls_certificate": self = .tls(reason: "cert_invalid", detail: failure.message)
        case "tls": self = .tls(reason: "tls_handshake", detail: failure.message)
        default: self = .network(failure.message)
        }
    }
}

extension Duration {
    fileprivate var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
