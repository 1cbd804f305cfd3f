internal import CMicroHTTPD
import Foundation
import Synchronization

/// Limits and address of an `HTTPServer`.
public struct HTTPServerConfiguration: Sendable {
    /// IPv4 or IPv6 address to bind, e.g. `127.0.0.1` or `::1`.
    public var host: String
    /// 0 picks a free port; `HTTPServer.port` tells which.
    public var port: UInt16
    /// Connections served at once; more are refused by libmicrohttpd.
    public var connectionLimit: Int
    /// A connection idle for this long (for example a client that sends nothing) is closed.
    public var connectionTimeoutSeconds: Int
    /// A connection must deliver a whole request (headers and body) this soon after it opens or
    /// after its last response, however steadily it drips bytes; one second while half the
    /// connection slots are taken (see `ConnectionReaper`).
    public var requestDeadlineSeconds: Int
    /// Larger request bodies are answered 413.
    public var maxRequestBodyBytes: Int
    /// PEM text of a private key and certificate: serve HTTPS instead of HTTP.
    public var tls: (keyPEM: String, certificatePEM: String)?

    /// Defaults: 127.0.0.1 on a free port, 2048 connections, 10 s idle timeout and request
    /// deadline, 1 MiB request bodies, plain HTTP.
    public init(
        host: String = "127.0.0.1", port: UInt16 = 0, connectionLimit: Int = 2048,
        connectionTimeoutSeconds: Int = 10, requestDeadlineSeconds: Int = 10, maxRequestBodyBytes: Int = 1 << 20,
        tls: (keyPEM: String, certificatePEM: String)? = nil
    ) {
        self.host = host
        self.port = port
        self.connectionLimit = connectionLimit
        self.connectionTimeoutSeconds = connectionTimeoutSeconds
        self.requestDeadlineSeconds = requestDeadlineSeconds
        self.maxRequestBodyBytes = maxRequestBodyBytes
        self.tls = tls
    }

    /// Parses `HOST:PORT` (`[::1]:9464` for IPv6).
    public static func parseAddress(_ text: String) -> (host: String, port: UInt16)? {
        guard let colon = text.lastIndex(of: ":"), let port = UInt16(text[text.index(after: colon)...]) else {
            return nil
        }
        var host = String(text[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host.isEmpty || host == "localhost" { host = "127.0.0.1" }
        return (host, port)
    }
}

/// Why `HTTPServer.start()` failed.
public enum HTTPServerError: Error, CustomStringConvertible {
    case badAddress(String)
    case cannotListen(String, reason: String)

    /// A one-line explanation for logs and the command line.
    public var description: String {
        switch self {
        case .badAddress(let host): return "\(host) is not an IPv4 or IPv6 address"
        case .cannotListen(let address, let reason): return "cannot listen on \(address): \(reason)"
        }
    }
}

/// An HTTP server on libmicrohttpd. One daemon thread does all network work; every request is
/// handed to its handler in a Swift task while its connection is suspended, so a slow handler
/// never holds up the others.
///
/// ```swift
/// var router = Router()
/// router.get("/-/healthy") { _ in .text("OK\n") }
/// let server = HTTPServer(configuration: .init(port: 0), router: router)
/// try server.start()
/// print(server.port)
/// await server.stop()
/// ```
public final class HTTPServer: Sendable {
    /// The configuration as given; `start()` may serve fewer connections if the file limit is
    /// lower.
    public let configuration: HTTPServerConfiguration
    let router: Router
    let suspensions = SuspensionCounter()
    let reaper: ConnectionReaper
    private let reaping = Mutex<Task<Void, Never>?>(nil)
    private let daemon = Mutex<DaemonHandle?>(nil)
    private let inFlight = Mutex<[ObjectIdentifier: RequestContext]>([:])
    private let boundPort = Mutex<UInt16>(0)

    /// Counters readable while the server runs, e.g. by its own `/metrics` handler.
    public let statistics: HTTPServerStatistics

    /// Creates the server without binding anything; `start()` binds.
    public init(configuration: HTTPServerConfiguration, router: Router, statistics: HTTPServerStatistics = HTTPServerStatistics()) {
        self.configuration = configuration
        self.router = router
        self.statistics = statistics
        self.reaper = ConnectionReaper(
            requestDeadline: .seconds(configuration.requestDeadlineSeconds), connectionLimit: configuration.connectionLimit,
            statistics: statistics)
    }

    deinit {
        reaping.withLock { $0?.cancel() }
        if let handle = daemon.withLock({ $0 }) { MHD_stop_daemon(handle.pointer) }
    }

    /// The port the server listens on (the chosen one when configured with port 0).
    public var port: UInt16 { boundPort.withLock { $0 } }

    /// Binds and starts serving.
    public func start() throws {
        let host = configuration.host
        let address = host.contains(":") ? "[\(host)]:\(configuration.port)" : "\(host):\(configuration.port)"
        var storage = sockaddr_storage()
        let isIPv6 = host.contains(":")
        let parsed = withUnsafeMutableBytes(of: &storage) { raw -> Bool in
            if isIPv6 {
                let sin6 = raw.baseAddress!.assumingMemoryBound(to: sockaddr_in6.self)
                sin6.pointee.sin6_family = sa_family_t(AF_INET6)
                sin6.pointee.sin6_port = configuration.port.bigEndian
                return inet_pton(AF_INET6, host, &sin6.pointee.sin6_addr) == 1
            }
            let sin = raw.baseAddress!.assumingMemoryBound(to: sockaddr_in.self)
            sin.pointee.sin_family = sa_family_t(AF_INET)
            sin.pointee.sin_port = configuration.port.bigEndian
            return inet_pton(AF_INET, host, &sin.pointee.sin_addr) == 1
        }
        guard parsed else { throw HTTPServerError.badAddress(host) }
        if configuration.tls != nil && lookout_mhd_supports_tls() == 0 {
            throw HTTPServerError.cannotListen(address, reason: "this libmicrohttpd was built without TLS")
        }
        // Each connection takes a descriptor: never promise more slots than the file limit allows
        // (keeping 128 for the database, libcurl and logs), or the pressure deadline never starts.
        let files = HTTPServer.raiseFileLimit(to: configuration.connectionLimit + 256)
        let connectionLimit = min(configuration.connectionLimit, max(16, files - 128))
        reaper.connectionLimit.store(connectionLimit, ordering: .relaxed)
        let context = Unmanaged.passUnretained(self).toOpaque()
        let pointer = withUnsafePointer(to: &storage) { raw in
            raw.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                lookout_mhd_start(
                    isIPv6 ? 1 : 0, sa,
                    { cls, connection, url, method, _, uploadData, uploadSize, connectionContext in
                        let server = Unmanaged<HTTPServer>.fromOpaque(cls!).takeUnretainedValue()
                        return server.handle(
                            connection: connection!, url: url, method: method, uploadData: uploadData,
                            uploadSize: uploadSize!, slot: connectionContext!)
                    },
                    context,
                    { _, _, connectionContext, _ in
                        guard let slot = connectionContext, let raw = slot.pointee else { return }
                        let request = Unmanaged<RequestContext>.fromOpaque(raw).takeRetainedValue()
                        request.connectionClosed()
                        slot.pointee = nil
                    },
                    context,
                    { cls, connection, _, code in
                        let server = Unmanaged<HTTPServer>.fromOpaque(cls!).takeUnretainedValue()
                        if lookout_mhd_notify_started(code) == 1 { server.reaper.opened(connection!) } else { server.reaper.closed(connection!) }
                    },
                    context,
                    UInt32(connectionLimit),
                    UInt32(configuration.connectionTimeoutSeconds),
                    64 * 1024, configuration.tls?.keyPEM, configuration.tls?.certificatePEM)
            }
        }
        guard let pointer else {
            throw HTTPServerError.cannotListen(address, reason: String(cString: strerror(errno)))
        }
        daemon.withLock { $0 = DaemonHandle(pointer: pointer) }
        boundPort.withLock { $0 = lookout_mhd_bound_port(pointer) }
        let reaper = self.reaper
        reaping.withLock {
            $0 = Task.detached {
                while !Task.isCancelled {
                    try? await Task.sleep(for: .milliseconds(250))
                    reaper.reap()
                }
            }
        }
    }

    /// Raises this process's open-file limit towards `wanted` (within the hard limit): each
    /// connection takes a descriptor, and the default soft limit of 1024 is below the connection
    /// limit. Returns the limit in force.
    static func raiseFileLimit(to wanted: Int) -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return wanted }
        if limit.rlim_cur < rlim_t(wanted) {
            limit.rlim_cur = min(rlim_t(wanted), limit.rlim_max)
            _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
            _ = getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
        return limit.rlim_cur > rlim_t(Int.max) ? Int.max : Int(limit.rlim_cur)
    }

    /// Cancels running handlers, answers what is still waiting with 503, and stops the daemon.
    /// Waits at most two seconds for handlers to notice cancellation and five in all.
    public func stop() async {
        reaping.withLock { $0?.cancel() }
        for request in inFlight.withLock({ Array($0.values) }) { request.cancel() }
        let started = ContinuousClock.now
        let deadline = started + .seconds(2)
        while !inFlight.withLock({ $0.isEmpty }) && ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(5))
        }
        for request in inFlight.withLock({ Array($0.values) }) {
            request.complete(with: .text("server is stopping\n", status: 503))
        }
        // Give the 503s time to go out, even on a loaded machine; a client that reads nothing is
        // cut off when the daemon stops.
        let drained = started + .seconds(5)
        while (suspensions.value > 0 || !inFlight.withLock({ $0.isEmpty })) && ContinuousClock.now < drained {
            try? await Task.sleep(for: .milliseconds(5))
        }
        guard
            let handle = daemon.withLock({ state -> DaemonHandle? in
                defer { state = nil }
                return state
            })
        else {
            return
        }
        MHD_stop_daemon(handle.pointer)
    }

    /// The request's response has been sent, or its connection closed.
    func finished(_ request: RequestContext) {
        _ = inFlight.withLock { $0.removeValue(forKey: ObjectIdentifier(request)) }
    }

    // MARK: - Daemon thread

    private func handle(
        connection: OpaquePointer, url: UnsafePointer<CChar>?, method: UnsafePointer<CChar>?,
        uploadData: UnsafePointer<CChar>?, uploadSize: UnsafeMutablePointer<Int>,
        slot: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    ) -> MHD_Result {
        guard let raw = slot.pointee else {
            let request = RequestContext(
                server: self, connection: ConnectionHandle(pointer: connection),
                method: method.map { String(cString: $0) } ?? "GET",
                path: url.map { String(cString: $0) } ?? "/")
            slot.pointee = Unmanaged.passRetained(request).toOpaque()
            let length: Int?
            switch request.headers.bodyFraming {
            case .failure(let problem): return request.refuse(status: problem.status, problem.message + "\n")
            case .success(let announced): length = announced
            }
            if let length, length > configuration.maxRequestBodyBytes {
                // Answering now and closing resets a client still sending, and the reset throws
                // away the answer in its receive buffer: most clients send the body before they
                // read. So read and drop a body worth draining and answer at its end, as nginx's
                // lingering close does; answer at once a client that waits for `100 Continue`
                // (it sends nothing more) and a body over 64 times the limit.
                let waits = request.headers["Expect"]?.lowercased() == "100-continue"
                if waits || length / 64 > configuration.maxRequestBodyBytes {
                    return request.reject(status: 413, configuration.maxRequestBodyBytes)
                }
                request.bodyTooLarge = true
            }
            return lookout_mhd_result(1)
        }
        let request = Unmanaged<RequestContext>.fromOpaque(raw).takeUnretainedValue()
        if uploadSize.pointee > 0 {
            let count = uploadSize.pointee
            uploadSize.pointee = 0
            guard !request.answered else { return lookout_mhd_result(1) }
            if request.bodyTooLarge || request.body.count + count > configuration.maxRequestBodyBytes {
                // A body past the limit: libmicrohttpd 0.9 cannot answer while a body is being
                // read, so read and drop the rest, then answer 413. A body that goes on and
                // on is cut off by the request deadline (`ConnectionReaper`), not by a byte count.
                request.body = []
                request.bodyTooLarge = true
                return lookout_mhd_result(1)
            }
            uploadData!.withMemoryRebound(to: UInt8.self, capacity: count) { bytes in
                request.body.append(contentsOf: UnsafeBufferPointer(start: bytes, count: count))
            }
            return lookout_mhd_result(1)
        }
        if request.answered { return lookout_mhd_result(1) }
        if request.bodyTooLarge {
            return request.reject(status: 413, configuration.maxRequestBodyBytes)
        }
        if let response = request.takeResponse() {
            return request.queue(response)
        }
        if request.dispatched { return lookout_mhd_result(1) }
        switch router.match(method: request.method, path: request.path) {
        case .notFound:
            return request.queue(router.finishing(router.notFound(request.path)))
        case .methodNotAllowed(let allowed):
            return request.queue(router.finishing(Router.methodNotAllowed(request.method, request.path, allowed: allowed)))
        case .found(let handler, let parameters, let executor):
            inFlight.withLock { $0[ObjectIdentifier(request)] = request }
            request.dispatch(handler, parameters: parameters, executor: executor?())
            return lookout_mhd_result(1)
        }
    }
}

struct DaemonHandle: @unchecked Sendable {
    // Only start() and stop()/deinit touch the daemon pointer, under the server's Mutex.
    let pointer: OpaquePointer
}
