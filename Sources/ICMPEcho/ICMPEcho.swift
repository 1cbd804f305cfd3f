import ClientSocket
import Foundation

/// One ICMP echo ("ping"): what `kind: icmp` sources and blackbox's `icmp` prober send.
public struct EchoRequest: Sendable, Equatable {
    /// An IPv4 or IPv6 address.
    public var address: String
    public var timeout: Duration
    /// Bytes after the 8-byte ICMP header; 0 sends blackbox_exporter's own 28-byte text.
    public var payloadSize: Int
    /// The outgoing TTL (hop limit); nil leaves the system's.
    public var ttl: Int?
    /// IPv4: set DF, so a packet too big for the path fails rather than fragments.
    public var dontFragment: Bool
    /// The local address to send from (an IP literal of the target's family); nil: any.
    public var source: String?

    public init(
        address: String, timeout: Duration = .seconds(5), payloadSize: Int = 0, ttl: Int? = nil, dontFragment: Bool = false, source: String? = nil
    ) {
        self.source = source
        self.address = address
        self.timeout = timeout
        self.payloadSize = payloadSize
        self.ttl = ttl
        self.dontFragment = dontFragment
    }
}

/// The reply, timed.
public struct EchoReply: Sendable, Equatable {
    /// From sending the request to reading its reply.
    public var rttSeconds: Double
    /// Making and setting up the socket.
    public var setupSeconds: Double
    /// The reply's TTL (IPv4) or hop limit (IPv6), when the socket tells it.
    public var hopLimit: Int?
}

public enum EchoError: Error, Sendable, Equatable {
    case badAddress(String)
    /// Neither an unprivileged ICMP socket nor a raw one may be opened.
    case notPermitted(String)
    /// No reply within the timeout.
    case timeout
    /// Sending failed: no route, network down.
    case network(String)
}

/// Sends ICMP echo requests: on an unprivileged ICMP socket where the kernel allows it
/// (`net.ipv4.ping_group_range`), on a raw socket otherwise (root or CAP_NET_RAW), each
/// request on `BlockingCall`'s threads.
public enum ICMPEcho {
    /// blackbox_exporter's payload when no size is given.
    static let defaultPayload = Array("Prometheus Blackbox Exporter".utf8)

    public static func send(_ request: EchoRequest) async -> Result<EchoReply, EchoError> {
        await BlockingCall.run { perform(request) }
    }

    /// The first address `host` resolves to, IPv6 first when `preferIPv6` (falling back to the
    /// other family), and how long resolving took; an address literal is itself. getaddrinfo
    /// blocks (a resolver may take seconds), so it runs on `BlockingCall`'s threads, not the caller's.
    public static func resolve(_ host: String, preferIPv6: Bool) async -> (address: String, seconds: Double)? {
        await BlockingCall.run { resolveBlocking(host, preferIPv6: preferIPv6) }
    }

    static func resolveBlocking(_ host: String, preferIPv6: Bool) -> (address: String, seconds: Double)? {
        let started = ContinuousClock.now
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &list) == 0, let list else { return nil }
        defer { freeaddrinfo(list) }
        var found: [String: String] = [:]
        var node: UnsafeMutablePointer<addrinfo>? = list
        while let entry = node {
            var text = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            if getnameinfo(entry.pointee.ai_addr, entry.pointee.ai_addrlen, &text, socklen_t(text.count), nil, 0, NI_NUMERICHOST) == 0 {
                let family = entry.pointee.ai_family == AF_INET6 ? "6" : "4"
                if found[family] == nil { found[family] = String(decoding: text.prefix { $0 != 0 }.map(UInt8.init), as: UTF8.self) }
            }
            node = entry.pointee.ai_next
        }
        let seconds = (ContinuousClock.now - started).seconds
        let order = preferIPv6 ? ["6", "4"] : ["4", "6"]
        return order.lazy.compactMap { found[$0] }.first.map { ($0, seconds) }
    }

    static func perform(_ request: EchoRequest) -> Result<EchoReply, EchoError> {
        let v6 = request.address.contains(":")
        guard let destination = socketAddress(request.address, v6: v6) else { return .failure(.badAddress(request.address)) }
        var storage = destination.0
        let length = destination.1
        let setupStarted = ContinuousClock.now
        let family = v6 ? AF_INET6 : AF_INET
        let proto = v6 ? Int32(IPPROTO_ICMPV6) : Int32(IPPROTO_ICMP)
        var raw = false
        var fd = socket(family, Int32(SOCK_DGRAM.rawValue), proto)
        if fd < 0 {
            fd = socket(family, Int32(SOCK_RAW.rawValue), proto)
            raw = true
        }
        guard fd >= 0 else {
            return .failure(
                .notPermitted(
                    "cannot open an ICMP socket (\(String(cString: strerror(errno)))): run Lookout with CAP_NET_RAW, or allow unprivileged ping with sysctl net.ipv4.ping_group_range"
                ))
        }
        defer { close(fd) }
        if let source = request.source {
            guard let local = socketAddress(source, v6: v6) else { return .failure(.badAddress(source)) }
            var address = local.0
            let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, local.1) } }
            guard bound == 0 else { return .failure(.network("cannot send from \(source): \(String(cString: strerror(errno)))")) }
        }
        var one: Int32 = 1
        if v6 {
            setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_RECVHOPLIMIT, &one, socklen_t(MemoryLayout<Int32>.size))
            if var ttl = request.ttl.map(Int32.init) { setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_UNICAST_HOPS, &ttl, socklen_t(MemoryLayout<Int32>.size)) }
        } else {
            setsockopt(fd, Int32(IPPROTO_IP), IP_RECVTTL, &one, socklen_t(MemoryLayout<Int32>.size))
            if var ttl = request.ttl.map(Int32.init) { setsockopt(fd, Int32(IPPROTO_IP), IP_TTL, &ttl, socklen_t(MemoryLayout<Int32>.size)) }
            if request.dontFragment {
                var mode = Int32(IP_PMTUDISC_DO)
                setsockopt(fd, Int32(IPPROTO_IP), IP_MTU_DISCOVER, &mode, socklen_t(MemoryLayout<Int32>.size))
            }
        }
        let identifier = UInt16.random(in: 1...UInt16.max)
        let sequence = UInt16.random(in: 1...UInt16.max)
        let payload = request.payloadSize > 0 ? (0..<min(request.payloadSize, 65_000)).map { UInt8(truncatingIfNeeded: $0) } : defaultPayload
        var packet: [UInt8] = [v6 ? 128 : 8, 0, 0, 0, UInt8(identifier >> 8), UInt8(identifier & 0xff), UInt8(sequence >> 8), UInt8(sequence & 0xff)] + payload
        if !v6 {
            let sum = checksum(packet)
            packet[2] = UInt8(sum >> 8)
            packet[3] = UInt8(sum & 0xff)
        }
        let setup = (ContinuousClock.now - setupStarted).seconds
        let sent = ContinuousClock.now
        let written = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(fd, packet, packet.count, 0, $0, length) }
        }
        guard written == packet.count else { return .failure(.network(String(cString: strerror(errno)))) }
        let deadline = sent + request.timeout
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var control = [UInt8](repeating: 0, count: 256)
        while true {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return .failure(.timeout) }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let milliseconds = Int32(clamping: left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1)
            let ready = poll(&poller, 1, milliseconds)
            if ready < 0 {
                if errno == EINTR { continue }
                return .failure(.network(String(cString: strerror(errno))))
            }
            guard ready > 0 else { return .failure(.timeout) }
            var from = sockaddr_storage()
            let (count, hopLimit) = buffer.withUnsafeMutableBytes { bytes in
                control.withUnsafeMutableBytes { controlBytes in
                    withUnsafeMutablePointer(to: &from) { fromPointer in
                        var vector = iovec(iov_base: bytes.baseAddress, iov_len: bytes.count)
                        return withUnsafeMutablePointer(to: &vector) { vectorPointer in
                            var message = msghdr()
                            message.msg_name = UnsafeMutableRawPointer(fromPointer)
                            message.msg_namelen = socklen_t(MemoryLayout<sockaddr_storage>.size)
                            message.msg_iov = vectorPointer
                            message.msg_iovlen = 1
                            message.msg_control = controlBytes.baseAddress
                            message.msg_controllen = controlBytes.count
                            let count = recvmsg(fd, &message, 0)
                            return (count, count > 0 ? hopLimitOf(&message) : nil)
                        }
                    }
                }
            }
            guard count > 0 else { continue }
            var reply = Array(buffer.prefix(count))
            var ttl = hopLimit
            if raw && !v6 {
                // A raw IPv4 socket reads the IP header too: its TTL, then the ICMP message.
                guard let first = reply.first else { continue }
                let headerLength = Int(first & 0x0f) * 4
                guard reply.count >= headerLength + 8 else { continue }
                ttl = ttl ?? Int(reply[8])
                reply = Array(reply[headerLength...])
            }
            guard reply.count >= 8, reply[0] == (v6 ? 129 : 0), sameAddress(from, storage, v6: v6) else { continue }
            // An unprivileged socket's kernel sets the identifier itself: match on the sequence.
            let replySequence = UInt16(reply[6]) << 8 | UInt16(reply[7])
            let replyIdentifier = UInt16(reply[4]) << 8 | UInt16(reply[5])
            guard replySequence == sequence, !raw || replyIdentifier == identifier else { continue }
            return .success(EchoReply(rttSeconds: (ContinuousClock.now - sent).seconds, setupSeconds: setup, hopLimit: ttl))
        }
    }

    /// The TTL or hop limit a control message carries (IP_RECVTTL, IPV6_RECVHOPLIMIT).
    private static func hopLimitOf(_ message: inout msghdr) -> Int? {
        guard message.msg_controllen >= MemoryLayout<cmsghdr>.size, let control = message.msg_control else { return nil }
        var offset = 0
        while offset + MemoryLayout<cmsghdr>.size <= message.msg_controllen {
            let header = control.load(fromByteOffset: offset, as: cmsghdr.self)
            guard header.cmsg_len >= MemoryLayout<cmsghdr>.size else { return nil }
            let isTTL = header.cmsg_level == Int32(IPPROTO_IP) && header.cmsg_type == IP_TTL
            let isHopLimit = header.cmsg_level == Int32(IPPROTO_IPV6) && header.cmsg_type == IPV6_HOPLIMIT
            if isTTL || isHopLimit {
                return Int(control.load(fromByteOffset: offset + MemoryLayout<cmsghdr>.size, as: Int32.self))
            }
            offset += (Int(header.cmsg_len) + MemoryLayout<Int>.size - 1) & ~(MemoryLayout<Int>.size - 1)
        }
        return nil
    }

    private static func sameAddress(_ a: sockaddr_storage, _ b: sockaddr_storage, v6: Bool) -> Bool {
        var a = a
        var b = b
        if v6 {
            let x = withUnsafeBytes(of: &a) { $0.load(as: sockaddr_in6.self).sin6_addr }
            let y = withUnsafeBytes(of: &b) { $0.load(as: sockaddr_in6.self).sin6_addr }
            return withUnsafeBytes(of: x) { Array($0) } == withUnsafeBytes(of: y) { Array($0) }
        }
        let x = withUnsafeBytes(of: &a) { $0.load(as: sockaddr_in.self).sin_addr.s_addr }
        let y = withUnsafeBytes(of: &b) { $0.load(as: sockaddr_in.self).sin_addr.s_addr }
        return x == y
    }

    /// The Internet checksum (RFC 1071).
    /// `address` (an IP literal of the family) as a socket address, port 0; nil when it is not one.
    static func socketAddress(_ address: String, v6: Bool) -> (sockaddr_storage, socklen_t)? {
        var storage = sockaddr_storage()
        if v6 {
            var native = sockaddr_in6()
            native.sin6_family = sa_family_t(AF_INET6)
            guard inet_pton(AF_INET6, address, &native.sin6_addr) == 1 else { return nil }
            withUnsafeMutableBytes(of: &storage) { $0.copyBytes(from: withUnsafeBytes(of: native) { Array($0) }) }
            return (storage, socklen_t(MemoryLayout<sockaddr_in6>.size))
        }
        var native = sockaddr_in()
        native.sin_family = sa_family_t(AF_INET)
        guard inet_pton(AF_INET, address, &native.sin_addr) == 1 else { return nil }
        withUnsafeMutableBytes(of: &storage) { $0.copyBytes(from: withUnsafeBytes(of: native) { Array($0) }) }
        return (storage, socklen_t(MemoryLayout<sockaddr_in>.size))
    }

    static func checksum(_ bytes: [UInt8]) -> UInt16 {
        var sum: UInt32 = 0
        var index = 0
        while index + 1 < bytes.count {
            sum += UInt32(bytes[index]) << 8 | UInt32(bytes[index + 1])
            index += 2
        }
        if index < bytes.count { sum += UInt32(bytes[index]) << 8 }
        while sum >> 16 != 0 { sum = (sum & 0xffff) + (sum >> 16) }
        return ~UInt16(sum)
    }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
