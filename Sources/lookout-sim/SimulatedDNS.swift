internal import CLDNS
import Foundation

/// An authoritative DNS server for the zone `lookout.test.` on UDP and TCP (same port), with
/// answers that stand for what a resolver can do wrong:
///
/// | name | answer |
/// | --- | --- |
/// | `lookout.test.` | SOA (serial 2026112701), NS |
/// | `ok.lookout.test.` | A 127.0.0.1, AAAA ::1, TXT "v=ok"; other types: no data |
/// | `two.lookout.test.` | A 127.0.0.1 and 127.0.0.2 |
/// | `mail.lookout.test.` | MX 10 mx.lookout.test., its A in the additional section |
/// | `nodata.lookout.test.` | NOERROR, no records, the SOA in authority |
/// | `servfail.lookout.test.` / `refused.lookout.test.` | SERVFAIL / REFUSED |
/// | `slow.lookout.test.` | A 127.0.0.1, after 3 s |
/// | `drop.lookout.test.` | nothing at all |
/// | anything else in the zone | NXDOMAIN, the SOA in authority |
/// | outside the zone | REFUSED |
final class SimulatedDNS: Sendable {
    let port: UInt16
    private let udp: Int32
    private let tcp: Int32

    static let soa = "lookout.test. 300 IN SOA ns.lookout.test. admin.lookout.test. 2026112701 3600 600 86400 300"

    /// Binds UDP and TCP on `host` (IPv4) and `port` (0: a free one, the same for both).
    init(host: String, port: UInt16) throws {
        func bound(_ type: Int32, _ port: UInt16) -> (Int32, UInt16)? {
            let fd = socket(AF_INET, type, 0)
            guard fd >= 0 else { return nil }
            var yes: Int32 = 1
            setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            inet_pton(AF_INET, host, &address.sin_addr)
            let result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard result == 0 else {
                close(fd)
                return nil
            }
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
            return (fd, UInt16(bigEndian: address.sin_port))
        }
        for _ in 0..<20 {
            guard let (udp, chosen) = bound(Int32(SOCK_DGRAM.rawValue), port) else { break }
            guard let (tcp, _) = bound(Int32(SOCK_STREAM.rawValue), chosen) else {
                close(udp)
                if port != 0 { break }
                continue
            }
            listen(tcp, 64)
            self.udp = udp
            self.tcp = tcp
            self.port = chosen
            return
        }
        throw ValidationFailure("cannot listen for DNS on \(host):\(port)")
    }

    struct ValidationFailure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// Serves until the process ends, on two threads of its own (and one per slow answer).
    func start() {
        Thread.detachNewThread { [self] in serveUDP() }
        Thread.detachNewThread { [self] in serveTCP() }
    }

    private func serveUDP() {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            var peer = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let count = withUnsafeMutablePointer(to: &peer) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { recvfrom(udp, &buffer, buffer.count, 0, $0, &length) }
            }
            guard count > 0 else { continue }
            let query = Array(buffer.prefix(count))
            let (reply, delay) = SimulatedDNS.reply(to: query)
            guard let reply else { continue }
            // The peer's address as bytes, so a slow answer's thread can take it along.
            let address = withUnsafeBytes(of: &peer) { Array($0.prefix(Int(length))) }
            let send: @Sendable () -> Void = { [udp] in
                _ = address.withUnsafeBytes {
                    sendto(udp, reply, reply.count, 0, $0.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(address.count))
                }
            }
            if let delay {
                Thread.detachNewThread {
                    Thread.sleep(forTimeInterval: delay)
                    send()
                }
            } else {
                send()
            }
        }
    }

    private func serveTCP() {
        while true {
            let connection = accept(tcp, nil, nil)
            guard connection >= 0 else { continue }
            Thread.detachNewThread {
                defer { close(connection) }
                while let query = SimulatedDNS.readFramed(connection) {
                    let (reply, delay) = SimulatedDNS.reply(to: query)
                    guard let reply else { return }
                    if let delay { Thread.sleep(forTimeInterval: delay) }
                    let framed = [UInt8(reply.count >> 8), UInt8(reply.count & 0xff)] + reply
                    guard framed.withUnsafeBytes({ send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == framed.count else { return }
                }
            }
        }
    }

    /// One length-prefixed message (RFC 1035 4.2.2), or nil at the end of the connection.
    private static func readFramed(_ fd: Int32) -> [UInt8]? {
        func read(_ count: Int) -> [UInt8]? {
            var bytes = [UInt8](repeating: 0, count: count)
            var done = 0
            while done < count {
                let got = bytes.withUnsafeMutableBytes { recv(fd, $0.baseAddress! + done, count - done, 0) }
                guard got > 0 else { return nil }
                done += got
            }
            return bytes
        }
        guard let prefix = read(2) else { return nil }
        let length = Int(prefix[0]) << 8 | Int(prefix[1])
        return length == 0 ? nil : read(length)
    }

    /// The answer's bytes (nil: do not answer) and how long to wait before sending them.
    static func reply(to query: [UInt8]) -> ([UInt8]?, TimeInterval?) {
        guard let packet = lookout_dns_parse(query, query.count) else { return (nil, nil) }
        defer { lookout_dns_packet_free(packet) }
        let nameText = lookout_dns_question_name(packet)
        defer { free(nameText) }
        let name = nameText.map { String(cString: $0) } ?? ""
        let type = Int(lookout_dns_question_type(packet))
        let (rcode, answer, authority, additional) = records(name: name, type: type)
        if name == "drop.lookout.test." { return (nil, nil) }
        guard let response = lookout_dns_response(packet, Int32(rcode)) else { return (nil, nil) }
        defer { lookout_dns_packet_free(response) }
        for (section, texts) in [(Int32(0), answer), (1, authority), (2, additional)] {
            for text in texts { _ = lookout_dns_add(response, section, text) }
        }
        var data: UnsafeMutablePointer<UInt8>?
        var length = 0
        guard lookout_dns_wire(response, &data, &length) == 1, let data else { return (nil, nil) }
        defer { free(data) }
        return (Array(UnsafeBufferPointer(start: data, count: length)), name == "slow.lookout.test." ? 3 : nil)
    }

    /// The zone: (rcode, answer, authority, additional) for a name and a type number.
    static func records(name: String, type: Int) -> (Int, [String], [String], [String]) {
        let a = 1
        let ns = 2
        let soaType = 6
        let mx = 15
        let txt = 16
        let aaaa = 28
        let noData = (0, [String](), [soa], [String]())
        switch name {
        case "lookout.test.":
            if type == soaType { return (0, [soa], [], []) }
            if type == ns { return (0, ["lookout.test. 300 IN NS ns.lookout.test."], [], ["ns.lookout.test. 300 IN A 127.0.0.1"]) }
            return noData
        case "ok.lookout.test.", "slow.lookout.test.":
            if type == a { return (0, ["\(name) 300 IN A 127.0.0.1"], [], []) }
            if type == aaaa { return (0, ["\(name) 300 IN AAAA ::1"], [], []) }
            if type == txt { return (0, ["\(name) 300 IN TXT \"v=ok\""], [], []) }
            return noData
        case "two.lookout.test.":
            return type == a ? (0, ["\(name) 300 IN A 127.0.0.1", "\(name) 300 IN A 127.0.0.2"], [], []) : noData
        case "mail.lookout.test.":
            return type == mx ? (0, ["\(name) 300 IN MX 10 mx.lookout.test."], [], ["mx.lookout.test. 300 IN A 127.0.0.3"]) : noData
        case "mx.lookout.test.":
            return type == a ? (0, ["\(name) 300 IN A 127.0.0.3"], [], []) : noData
        case "nodata.lookout.test.", "drop.lookout.test.":
            return noData
        case "servfail.lookout.test.":
            return (2, [], [], [])
        case "refused.lookout.test.":
            return (5, [], [], [])
        case let other where other.hasSuffix(".lookout.test."):
            return (3, [], [soa], [])
        default:
            return (5, [], [], [])
        }
    }
}
