import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Why a connection, a read, a write or a handshake failed: words for people, and a reason a
/// caller maps to its own vocabulary — `resolve`, `refused`, `timeout`, `io`, `tls` (the
/// handshake failed), `tls_certificate` (on the certificate), `tls_expired` (on its validity).
public struct SocketFailure: Error, Sendable, Equatable {
    public var message: String
    public var reason: String

    public init(_ message: String, reason: String) {
        self.message = message
        self.reason = reason
    }
}

/// One TCP client connection under one deadline, in TLS once asked (OpenSSL, `TLSClient`):
/// what a line conversation (TCPExchange) and DNS over TLS (DNSLookup) speak through. Blocking
/// in the calling thread, every call bounded by the deadline; owns its socket and its SSL*.
///
/// ```swift
/// var attempt = ClientConnection.Attempt()
/// let connection = try ClientConnection.open(host: "127.0.0.1", port: 853, deadline: .now + .seconds(5), attempt: &attempt).get()
/// if let failure = connection.startTLS(host: "127.0.0.1", settings: TLSSettings()) { print(failure.message) }
/// ```
public final class ClientConnection {
    /// What opening learnt, kept when it fails too: the address tried, how long resolving took.
    public struct Attempt: Sendable {
        public var resolveSeconds: Double = 0
        /// The address connected (or tried), as text.
        public var peer: String?
        public var ipVersion: Int?

        public init() {}
    }

    /// What a read got.
    public enum Read: Equatable {
        /// This many bytes, at the start of the buffer.
        case data(Int)
        case closed
        case timedOut
    }

    public let deadline: ContinuousClock.Instant
    /// The TLS handshake, once one completed.
    public private(set) var handshake: TLSHandshake?
    private let fd: Int32
    private var tls: TLSClient?

    private init(fd: Int32, deadline: ContinuousClock.Instant) {
        self.fd = fd
        self.deadline = deadline
    }

    deinit {
        tls = nil  // the SSL* goes before the socket it reads
        close(fd)
    }

    /// Milliseconds left before the deadline, for poll.
    public var remainingMs: Int32 { ClientConnection.milliseconds(until: deadline) }

    static func milliseconds(until deadline: ContinuousClock.Instant) -> Int32 {
        let left = deadline - ContinuousClock.now
        let ms = left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000
        return Int32(clamping: max(0, ms))
    }

    /// Resolves `host` (its `preferIPv6` family first), connects from `source` if given (an IP
    /// literal), all before `deadline`.
    public static func open(
        host: String, port: UInt16, preferIPv6: Bool = false, source: String? = nil, deadline: ContinuousClock.Instant, attempt: inout Attempt
    ) -> Result<ClientConnection, SocketFailure> {
        let resolveStart = ContinuousClock.now
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_family = AF_UNSPEC
        var list: UnsafeMutablePointer<addrinfo>?
        let resolved = getaddrinfo(host, String(port), &hints, &list)
        attempt.resolveSeconds = (ContinuousClock.now - resolveStart).seconds
        guard resolved == 0, let list else { return .failure(SocketFailure("cannot resolve \(host)", reason: "resolve")) }
        defer { freeaddrinfo(list) }
        var candidates: [UnsafeMutablePointer<addrinfo>] = []
        var next: UnsafeMutablePointer<addrinfo>? = list
        while let entry = next {
            candidates.append(entry)
            next = entry.pointee.ai_next
        }
        let wanted = preferIPv6 ? AF_INET6 : AF_INET
        candidates.sort { ($0.pointee.ai_family == wanted ? 0 : 1) < ($1.pointee.ai_family == wanted ? 0 : 1) }
        guard let chosen = candidates.first else { return .failure(SocketFailure("cannot resolve \(host)", reason: "resolve")) }
        let fd = socket(chosen.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return .failure(SocketFailure("cannot open a socket: \(String(cString: strerror(errno)))", reason: "io")) }
        let connection = ClientConnection(fd: fd, deadline: deadline)  // closes the socket when it goes
        attempt.ipVersion = chosen.pointee.ai_family == AF_INET6 ? 6 : 4
        attempt.peer = address(chosen.pointee.ai_addr, length: chosen.pointee.ai_addrlen)
        if let source, !bind(fd, to: source, family: chosen.pointee.ai_family) {
            return .failure(SocketFailure("cannot connect from \(source): \(String(cString: strerror(errno)))", reason: "io"))
        }
        if connect(fd, chosen.pointee.ai_addr, chosen.pointee.ai_addrlen) != 0 && errno != EINPROGRESS {
            return .failure(failure(errno))
        }
        guard wait(fd, events: Int16(POLLOUT), ms: connection.remainingMs) else {
            return .failure(SocketFailure("no connection within the timeout", reason: "timeout"))
        }
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
        if error != 0 { return .failure(failure(error)) }
        return .success(connection)
    }

    /// Shakes hands as `settings` say, checking the certificate for `host` unless they name
    /// another; what follows is read and written in TLS. nil when it completed.
    public func startTLS(host: String, settings: TLSSettings) -> SocketFailure? {
        switch TLSClient.connect(fd: fd, host: host, settings: settings, remainingMs: { self.remainingMs }) {
        case .success(let (client, handshake)):
            tls = client
            self.handshake = handshake
            return nil
        case .failure(.timeout):
            return SocketFailure("no TLS handshake within the timeout", reason: "timeout")
        case .failure(.setup(let reason)):
            return SocketFailure("cannot set up TLS: \(reason)", reason: "tls")
        case .failure(.handshake(let reason, let cause)):
            return SocketFailure(
                "the TLS handshake failed: \(reason)", reason: cause == .expired ? "tls_expired" : cause == .certificate ? "tls_certificate" : "tls")
        }
    }

    /// Reads what arrives into the start of `chunk`.
    public func read(_ chunk: inout [UInt8]) -> Read {
        if let tls {
            // OpenSSL may hold decrypted bytes the socket no longer shows: read first.
            guard let count = tls.read(&chunk, remainingMs: { self.remainingMs }) else { return .timedOut }
            return count > 0 ? .data(count) : .closed
        }
        while true {
            guard ClientConnection.wait(fd, events: Int16(POLLIN), ms: remainingMs) else { return .timedOut }
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 { return .data(count) }
            if count == 0 || (errno != EAGAIN && errno != EINTR) { return .closed }
        }
    }

    /// Writes all of `bytes`; nil when they went.
    public func write(_ bytes: [UInt8]) -> SocketFailure? {
        if let tls {
            return tls.write(bytes, remainingMs: { self.remainingMs }) ? nil : SocketFailure("could not send over TLS within the timeout", reason: "timeout")
        }
        var sent = 0
        while sent < bytes.count {
            guard ClientConnection.wait(fd, events: Int16(POLLOUT), ms: remainingMs) else {
                return SocketFailure("could not send within the timeout", reason: "timeout")
            }
            let count = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if count < 0 {
                if errno == EAGAIN || errno == EINTR { continue }
                return ClientConnection.failure(errno)
            }
            sent += count
        }
        return nil
    }

    /// Binds the socket to a local IP literal of the connection's family, any port.
    static func bind(_ fd: Int32, to source: String, family: Int32) -> Bool {
        if family == AF_INET6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            guard inet_pton(AF_INET6, source, &address.sin6_addr) == 1 else { return false }
            return withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) == 0 }
            }
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        guard inet_pton(AF_INET, source, &address.sin_addr) == 1 else { return false }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }

    /// Waits until `fd` is ready for `events`; false at the end of `ms`.
    static func wait(_ fd: Int32, events: Int16, ms: Int32) -> Bool {
        var descriptor = pollfd(fd: fd, events: events, revents: 0)
        while true {
            let ready = poll(&descriptor, 1, ms)
            if ready < 0 && errno == EINTR { continue }
            return ready > 0
        }
    }

    static func failure(_ code: Int32) -> SocketFailure {
        SocketFailure(String(cString: strerror(code)), reason: code == ECONNREFUSED ? "refused" : code == ETIMEDOUT ? "timeout" : "io")
    }

    static func address(_ pointer: UnsafeMutablePointer<sockaddr>?, length: socklen_t) -> String? {
        guard let pointer else { return nil }
        var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        guard getnameinfo(pointer, length, &host, socklen_t(host.count), nil, 0, NI_NUMERICHOST) == 0 else { return nil }
        return String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

extension Duration {
    fileprivate var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
