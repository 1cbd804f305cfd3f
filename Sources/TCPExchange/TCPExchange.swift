import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A line-based conversation with a TCP server — blackbox_exporter's `query_response`: expect a
/// line matching a regular expression (what it captured may be sent back, `${1}`), send a line,
/// upgrade to TLS (STARTTLS) — in TLS from the start if asked, on a thread of its own, with
/// every call bounded by one deadline. Knows nothing of Lookout.
///
/// ```swift
/// let outcome = await TCPExchange.run(host: "127.0.0.1", port: 25, steps: [.init(expect: "^220 ")], timeout: .seconds(5))
/// print(outcome.problem ?? "ok")
/// ```
public enum TCPExchange {
    /// One exchange: a line to wait for, then a line to send (either may be absent), then, with
    /// `startTLS`, a TLS handshake on the connection; what follows is read and sent over TLS.
    public struct Step: Sendable {
        public var expect: String?
        public var send: String?
        public var startTLS: Bool

        public init(expect: String? = nil, send: String? = nil, startTLS: Bool = false) {
            self.expect = expect
            self.send = send
            self.startTLS = startTLS
        }
    }

    public struct Outcome: Sendable {
        /// The address connected to, as text; nil when no connection was made.
        public var peer: String?
        /// Seconds spent resolving the host.
        public var resolveSeconds: Double = 0
        /// What went wrong, for people; nil when every step passed.
        public var problem: String?
        /// What kind of problem: `resolve`, `refused`, `timeout`, `closed`, `regex`, `io`, `tls`
        /// (the handshake failed), `tls_certificate` (on the certificate), `tls_expired` (on its
        /// validity period).
        public var reason: String?
        /// The TLS handshake that completed (from the start, or the last STARTTLS).
        public var tls: TLSHandshake?
        /// An `expect` found no matching line before the connection ended.
        public var failedDueToRegex = false
        public var ipVersion: Int?
    }

    /// A line longer than this ends the conversation (a peer that sends an endless line).
    public static let maxLine = 64 << 10
    /// At most this much is read over the whole conversation (an endless banner).
    public static let maxRead = 1 << 20

    /// - Parameters:
    ///   - source: the local address to connect from (an IP literal), or any.
    ///   - tls: how TLS is set up, for a step's `startTLS` and for `tlsFromStart`.
    ///   - tlsFromStart: shake hands as soon as the connection is made (blackbox's `tls: true`).
    public static func run(
        host: String, port: UInt16, steps: [Step], timeout: Duration, preferIPv6: Bool = false, source: String? = nil, tls: TLSSettings = TLSSettings(),
        tlsFromStart: Bool = false
    ) async -> Outcome {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(
                    returning: perform(
                        host: host, port: port, steps: steps, timeout: timeout, preferIPv6: preferIPv6, source: source, tls: tls, tlsFromStart: tlsFromStart))
            }
        }
    }

    static func perform(
        host: String, port: UInt16, steps: [Step], timeout: Duration, preferIPv6: Bool, source: String? = nil, tls settings: TLSSettings = TLSSettings(),
        tlsFromStart: Bool = false
    ) -> Outcome {
        var outcome = Outcome()
        let deadline = ContinuousClock.now + timeout
        func remainingMs() -> Int32 {
            let left = deadline - ContinuousClock.now
            let ms = left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000
            return Int32(clamping: max(0, ms))
        }
        // Resolve.
        let resolveStart = ContinuousClock.now
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_family = AF_UNSPEC
        var list: UnsafeMutablePointer<addrinfo>?
        let resolved = getaddrinfo(host, String(port), &hints, &list)
        let resolveTime = ContinuousClock.now - resolveStart
        outcome.resolveSeconds = Double(resolveTime.components.seconds) + Double(resolveTime.components.attoseconds) / 1e18
        guard resolved == 0, let list else {
            outcome.problem = "cannot resolve \(host)"
            outcome.reason = "resolve"
            return outcome
        }
        defer { freeaddrinfo(list) }
        var candidates: [UnsafeMutablePointer<addrinfo>] = []
        var next: UnsafeMutablePointer<addrinfo>? = list
        while let entry = next {
            candidates.append(entry)
            next = entry.pointee.ai_next
        }
        let wanted = preferIPv6 ? AF_INET6 : AF_INET
        candidates.sort { ($0.pointee.ai_family == wanted ? 0 : 1) < ($1.pointee.ai_family == wanted ? 0 : 1) }
        guard let chosen = candidates.first else {
            outcome.problem = "cannot resolve \(host)"
            outcome.reason = "resolve"
            return outcome
        }
        // Connect, non-blocking, within the deadline.
        let fd = socket(chosen.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else {
            outcome.problem = "cannot open a socket: \(String(cString: strerror(errno)))"
            outcome.reason = "io"
            return outcome
        }
        defer { close(fd) }
        outcome.ipVersion = chosen.pointee.ai_family == AF_INET6 ? 6 : 4
        outcome.peer = address(chosen.pointee.ai_addr, length: chosen.pointee.ai_addrlen)
        if let source, !bind(fd, to: source, family: chosen.pointee.ai_family) {
            outcome.problem = "cannot connect from \(source): \(String(cString: strerror(errno)))"
            outcome.reason = "io"
            return outcome
        }
        if connect(fd, chosen.pointee.ai_addr, chosen.pointee.ai_addrlen) != 0 && errno != EINPROGRESS {
            return failed(&outcome, errno)
        }
        guard wait(fd, events: Int16(POLLOUT), ms: remainingMs()) else {
            outcome.problem = "no connection within the timeout"
            outcome.reason = "timeout"
            return outcome
        }
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
        if error != 0 { return failed(&outcome, error) }

        var tls: TLSClient?
        /// Shakes hands on the connection; false (with the problem) when that failed.
        func startTLS() -> Bool {
            switch TLSClient.connect(fd: fd, host: host, settings: settings, remainingMs: remainingMs) {
            case .success(let (client, handshake)):
                tls = client
                outcome.tls = handshake
                return true
            case .failure(.timeout):
                outcome.problem = "no TLS handshake within the timeout"
                outcome.reason = "timeout"
            case .failure(.setup(let reason)):
                outcome.problem = "cannot set up TLS: \(reason)"
                outcome.reason = "tls"
            case .failure(.handshake(let reason, let cause)):
                outcome.problem = "the TLS handshake failed: \(reason)"
                outcome.reason = cause == .expired ? "tls_expired" : cause == .certificate ? "tls_certificate" : "tls"
            }
            return false
        }
        if tlsFromStart && !startTLS() { return outcome }

        var buffer: [UInt8] = []
        var readTotal = 0
        var closed = false
        /// The next line (without its \n and a \r before it), or nil at the end or the deadline.
        func nextLine() -> String? {
            while true {
                if let newline = buffer.firstIndex(of: 0x0A) {
                    var line = Array(buffer[..<newline])
                    buffer.removeFirst(newline + 1)
                    if line.last == 0x0D { line.removeLast() }
                    return String(decoding: line, as: UTF8.self)
                }
                if closed || buffer.count > maxLine || readTotal > maxRead {
                    guard !buffer.isEmpty, buffer.count <= maxLine else { return nil }
                    defer { buffer.removeAll() }
                    return String(decoding: buffer, as: UTF8.self)
                }
                var chunk = [UInt8](repeating: 0, count: 4096)
                if let tls {
                    // OpenSSL may hold decrypted bytes the socket no longer shows: read first.
                    guard let count = tls.read(&chunk, remainingMs: remainingMs) else { return nil }
                    if count > 0 {
                        buffer += chunk[..<count]
                        readTotal += count
                    } else {
                        closed = true
                    }
                    continue
                }
                guard wait(fd, events: Int16(POLLIN), ms: remainingMs()) else { return nil }
                let count = recv(fd, &chunk, chunk.count, 0)
                if count > 0 {
                    buffer += chunk[..<count]
                    readTotal += count
                } else if count == 0 || (errno != EAGAIN && errno != EINTR) {
                    closed = true
                }
            }
        }
        for step in steps {
            var send = step.send
            if let pattern = step.expect {
                guard let regex = try? NSRegularExpression(pattern: pattern) else {
                    outcome.problem = "the expect pattern \(pattern) is not a regular expression"
                    outcome.reason = "regex"
                    return outcome
                }
                var matched = false
                while let line = nextLine() {
                    let range = NSRange(line.startIndex..., in: line)
                    if let match = regex.firstMatch(in: line, range: range) {
                        matched = true
                        if let text = send { send = expand(text, match: match, in: line) }
                        break
                    }
                }
                guard matched else {
                    // As blackbox_exporter: a regex failure when the peer ended the conversation
                    // without the line; a read that timed out is a timeout, not a regex failure.
                    outcome.failedDueToRegex = closed
                    outcome.problem = closed ? "the server closed the connection without a line matching \(pattern)" : "no line matched \(pattern) in time"
                    outcome.reason = closed ? "regex" : "timeout"
                    return outcome
                }
            }
            if let send, let tls {
                guard tls.write(Array((send + "\n").utf8), remainingMs: remainingMs) else {
                    outcome.problem = "could not send over TLS within the timeout"
                    outcome.reason = "timeout"
                    return outcome
                }
            } else if let send {
                let bytes = Array((send + "\n").utf8)
                var sent = 0
                while sent < bytes.count {
                    guard wait(fd, events: Int16(POLLOUT), ms: remainingMs()) else {
                        outcome.problem = "could not send within the timeout"
                        outcome.reason = "timeout"
                        return outcome
                    }
                    let count = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                    if count < 0 {
                        if errno == EAGAIN || errno == EINTR { continue }
                        return failed(&outcome, errno)
                    }
                    sent += count
                }
            }
            if step.startTLS {
                // What the server sent before the handshake is not read over TLS (as blackbox
                // starts a new scanner on the TLS connection).
                buffer.removeAll()
                closed = false
                guard startTLS() else { return outcome }
            }
        }
        return outcome
    }

    /// `${1}`, `$1`, `${name}` in `template` replaced by what the match captured, as Go's
    /// `Regexp.Expand` does (an unknown group is empty).
    static func expand(_ template: String, match: NSTextCheckingResult, in line: String) -> String {
        var out = ""
        var rest = Substring(template)
        func group(_ name: String) -> String {
            let range: NSRange
            if let number = Int(name) {
                guard number < match.numberOfRanges else { return "" }
                range = match.range(at: number)
            } else {
                range = match.range(withName: name)
            }
            guard range.location != NSNotFound, let swiftRange = Range(range, in: line) else { return "" }
            return String(line[swiftRange])
        }
        while let dollar = rest.firstIndex(of: "$") {
            out += rest[..<dollar]
            rest = rest[rest.index(after: dollar)...]
            if rest.first == "$" {
                out += "$"
                rest = rest.dropFirst()
            } else if rest.first == "{", let close = rest.firstIndex(of: "}") {
                out += group(String(rest[rest.index(after: rest.startIndex)..<close]))
                rest = rest[rest.index(after: close)...]
            } else {
                let name = rest.prefix { $0.isLetter || $0.isNumber || $0 == "_" }
                out += group(String(name))
                rest = rest.dropFirst(name.count)
            }
        }
        return out + rest
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

    static func wait(_ fd: Int32, events: Int16, ms: Int32) -> Bool {
        var descriptor = pollfd(fd: fd, events: events, revents: 0)
        while true {
            let ready = poll(&descriptor, 1, ms)
            if ready < 0 && errno == EINTR { continue }
            return ready > 0
        }
    }

    static func failed(_ outcome: inout Outcome, _ code: Int32) -> Outcome {
        outcome.problem = String(cString: strerror(code))
        outcome.reason = code == ECONNREFUSED ? "refused" : code == ETIMEDOUT ? "timeout" : "io"
        return outcome
    }

    static func address(_ pointer: UnsafeMutablePointer<sockaddr>?, length: socklen_t) -> String? {
        guard let pointer else { return nil }
        var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        guard getnameinfo(pointer, length, &host, socklen_t(host.count), nil, 0, NI_NUMERICHOST) == 0 else { return nil }
        return String(cString: host)
    }
}
