internal import CMicroHTTPD
import Foundation
import Synchronization

/// Closes connections that take too long to send a request, so that slow clients (slowloris: a
/// header line every few seconds) cannot hold every connection slot while `/metrics` and the
/// health endpoints wait.
///
/// libmicrohttpd's own connection timeout restarts on every byte, so it never fires for a client
/// that drips. This keeps, per connection, when it began waiting for its current request, and
/// shuts down the socket of one that has not delivered its headers (or its body) in time:
///
/// | connections open           | a request must arrive within |
/// | -------------------------- | ---------------------------- |
/// | below half the limit       | `requestDeadline` (10 s)     |
/// | half the limit or more     | `pressureDeadline` (1 s)     |
///
/// Under pressure the slowest clients make room, so a new connection (a Prometheus scrape) always
/// finds a slot. A request whose handler is running is never cut off.
final class ConnectionReaper: Sendable {
    private struct Entry {
        var fd: Int32
        /// When the connection began waiting for its current request; nil while a handler runs.
        var waitingSince: ContinuousClock.Instant?
    }

    let requestDeadline: Duration
    let pressureDeadline: Duration
    /// The connections the daemon accepts at once; set by the server when it starts, since the
    /// process's file limit may allow fewer than configured.
    let connectionLimit: Atomic<Int>
    private let entries = Mutex<[UInt: Entry]>([:])
    private let statistics: HTTPServerStatistics

    init(requestDeadline: Duration, pressureDeadline: Duration = .seconds(1), connectionLimit: Int, statistics: HTTPServerStatistics) {
        self.requestDeadline = requestDeadline
        self.pressureDeadline = pressureDeadline
        self.connectionLimit = Atomic(connectionLimit)
        self.statistics = statistics
    }

    var openCount: Int { entries.withLock { $0.count } }

    // Daemon thread: libmicrohttpd's notifications.

    func opened(_ connection: OpaquePointer) {
        let fd = lookout_mhd_connection_fd(connection)
        entries.withLock { $0[key(connection)] = Entry(fd: fd, waitingSince: .now) }
    }

    /// Called before libmicrohttpd closes the socket, under the same lock `reap` holds while it
    /// shuts sockets down, so `reap` never touches a descriptor that was closed and reused.
    func closed(_ connection: OpaquePointer) {
        _ = entries.withLock { $0.removeValue(forKey: key(connection)) }
    }

    /// The request's headers and body are in and its handler runs: no deadline now.
    func handling(_ connection: OpaquePointer) {
        entries.withLock { $0[key(connection)]?.waitingSince = nil }
    }

    /// The response went out; a kept-alive connection waits for its next request from now.
    func completed(_ connection: OpaquePointer) {
        entries.withLock { $0[key(connection)]?.waitingSince = .now }
    }

    /// Shuts down every connection past its deadline; returns how many.
    @discardableResult
    func reap(now: ContinuousClock.Instant = .now) -> Int {
        let count = entries.withLock { entries -> Int in
            let deadline = entries.count * 2 >= connectionLimit.load(ordering: .relaxed) ? pressureDeadline : requestDeadline
            var count = 0
            for (key, entry) in entries {
                guard let since = entry.waitingSince, now - since > deadline, entry.fd >= 0 else { continue }
                // The daemon sees end-of-stream on its next poll and closes the connection itself.
                shutdown(entry.fd, Int32(SHUT_RDWR))
                entries[key]?.waitingSince = nil
                count += 1
            }
            return count
        }
        if count > 0 { statistics.slowConnections.add(count, ordering: .relaxed) }
        return count
    }

    private func key(_ connection: OpaquePointer) -> UInt {
        UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(connection)))
    }
}

/// What an `HTTPServer` counts, readable while it runs (for a `/metrics` page served by that
/// same server: make this first, hand it to the page and to the server).
public final class HTTPServerStatistics: Sendable {
    let slowConnections = Atomic<Int>(0)

    /// Counters at zero.
    public init() {}

    /// Connections closed because they did not deliver a request in time (slowloris).
    public var slowConnectionsClosed: Int { slowConnections.load(ordering: .relaxed) }
}
