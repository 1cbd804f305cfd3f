import Foundation

/// A blocking TCP client for the cases a real HTTP client refuses to produce: silence and garbage.
public final class RawSocket {
    public let fd: Int32

    public init(port: UInt16) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        if withLoopbackAddress(port: port, { connect(fd, $0, $1) }) != 0 { throw POSIXError(.ECONNREFUSED) }
    }

    deinit { close(fd) }

    public func send(_ text: String) {
        _ = text.withCString { Glibc.send(fd, $0, strlen($0), 0) }
    }

    /// Sends all of `bytes`, blocking while the peer's window is full; false when the peer
    /// closed or reset the connection first (no SIGPIPE).
    public func send(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent <= 0 { return false }
            offset += sent
        }
        return true
    }

    /// Reads until the peer closes or `deadline` passes; returns what arrived and whether it closed.
    /// Waits between polls with `Task.sleep`, so a waiting test holds no thread of the pool.
    public func readUntilClosed(deadline: ContinuousClock.Instant) async -> (text: String, closed: Bool) {
        var received = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while ContinuousClock.now < deadline {
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 0) > 0 else {
                try? await Task.sleep(for: .milliseconds(20))
                continue
            }
            let count = recv(fd, &buffer, buffer.count, 0)
            if count <= 0 { return (String(decoding: received, as: UTF8.self), true) }
            received.append(contentsOf: buffer[0..<count])
        }
        return (String(decoding: received, as: UTF8.self), false)
    }
}

/// Calls `body` with 127.0.0.1:`port` as a `sockaddr` and its length (for bind and connect).
public func withLoopbackAddress<T>(port: UInt16, _ body: (UnsafePointer<sockaddr>, socklen_t) -> T) -> T {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    inet_pton(AF_INET, "127.0.0.1", &address.sin_addr)
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
}

/// Calls `body` with a loopback port that refuses every connection until `body` returns: a
/// socket bound to it and never listening. Unlike a port found free and let go, no other test's
/// server or outgoing connection can take it meanwhile, so a connection to it is always refused.
public func withRefusingPort<T>(_ body: (UInt16) async throws -> T) async rethrows -> T {
    let (fd, address) = boundLoopbackSocket()
    defer { close(fd) }
    return try await body(UInt16(bigEndian: address.sin_port))
}

/// A loopback server that answers every connection with the same bytes, whatever was asked, and
/// closes it: for answers no HTTP server library would send (a bad status line, bad chunking).
public final class CannedServer: Sendable {
    public let port: UInt16
    private let fd: Int32

    public init(answer: [UInt8]) {
        let (fd, address) = boundLoopbackSocket()
        listen(fd, 16)
        self.fd = fd
        port = UInt16(bigEndian: address.sin_port)
        Thread {
            while true {
                let client = accept(fd, nil, nil)
                guard client >= 0 else { return }  // closed by `stop`
                var request = [UInt8](repeating: 0, count: 8192)
                _ = recv(client, &request, request.count, 0)
                _ = answer.withUnsafeBytes { Glibc.send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                close(client)
            }
        }.start()
    }

    public func stop() {
        shutdown(fd, Int32(SHUT_RDWR))
        close(fd)
    }
}
