internal import CMicroHTTPD
import Synchronization

/// One request on one connection, from its first byte to its completion. libmicrohttpd calls the
/// access handler several times per request; this object carries the state between the calls.
final class RequestContext: @unchecked Sendable {
    // `body`, `bodyTooLarge`, `answered` and `dispatched` are touched only on the daemon thread; what handler
    // tasks share with it lives in `shared`, behind a Mutex.
    private struct Shared {
        var response: HTTPResponse?
        var suspended = false
        var task: Task<Void, Never>?
        var stream: ResponseStream?
    }

    let server: HTTPServer
    let connection: ConnectionHandle
    let method: String
    let path: String
    let headers: HTTPHeaders
    let query: [String: String]
    let remoteAddress: String?
    let receivedAt = ContinuousClock.now
    var body: [UInt8] = []
    /// The body went past the server's limit; the rest is read and dropped, then 413 answers.
    var bodyTooLarge = false
    private(set) var answered = false
    private(set) var dispatched = false
    private let shared = Mutex(Shared())

    init(server: HTTPServer, connection: ConnectionHandle, method: String, path: String) {
        self.server = server
        self.connection = connection
        self.method = method
        self.path = path
        self.headers = RequestContext.values(of: connection, kind: lookout_mhd_header_kind()).reduce(into: HTTPHeaders()) {
            $0.add($1.0, $1.1)
        }
        self.query = RequestContext.values(of: connection, kind: lookout_mhd_query_kind()).reduce(into: [:]) {
            $0[$1.0] = $1.1
        }
        var address = [CChar](repeating: 0, count: 64)
        let found = lookout_mhd_client_address(connection.pointer, &address, 64) == 1
        self.remoteAddress = found ? String(decoding: address.prefix { $0 != 0 }.map(UInt8.init), as: UTF8.self) : nil
    }

    /// Suspends the connection and runs `handler` in a task (on `executor` when given);
    /// `complete(with:)` resumes it.
    func dispatch(_ handler: @escaping Router.Handler, parameters: [String: String], executor: (any TaskExecutor)? = nil) {
        dispatched = true
        server.reaper.handling(connection.pointer)
        let request = HTTPRequest(
            method: method, path: path, query: query, headers: headers, body: body,
            pathParameters: parameters, remoteAddress: remoteAddress, receivedAt: receivedAt)
        shared.withLock { $0.suspended = true }
        server.suspensions.increment()
        MHD_suspend_connection(connection.pointer)
        let task = Task(executorPreference: executor) { [self] in
            let response = await handler(request)
            complete(with: response)
        }
        shared.withLock { $0.task = task }
    }

    /// Hands the response to the daemon thread; the first call wins.
    func complete(with response: HTTPResponse) {
        let resume = shared.withLock { shared -> Bool in
            guard shared.suspended else { return false }
            shared.suspended = false
            shared.response = response
            return true
        }
        if resume {
            MHD_resume_connection(connection.pointer)
            server.suspensions.decrement()
        }
    }

    func takeResponse() -> HTTPResponse? {
        shared.withLock { shared in
            defer { shared.response = nil }
            return shared.response
        }
    }

    func cancel() {
        let (task, stream) = shared.withLock { ($0.task, $0.stream) }
        task?.cancel()
        stream?.abort()
    }

    func connectionClosed() {
        server.reaper.completed(connection.pointer)
        let (task, stream) = shared.withLock { ($0.task, $0.stream) }
        task?.cancel()
        stream?.close()
        server.finished(self)
    }

    func reject(status: Int, _ limit: Int) -> MHD_Result {
        refuse(status: status, "request body is larger than \(limit) bytes\n")
    }

    /// Answers `status` with `message` and closes the connection after it (daemon thread only).
    func refuse(status: Int, _ message: String) -> MHD_Result {
        var response = HTTPResponse.text(message, status: status)
        response.headers.set("Connection", "close")
        return queue(response)
    }

    /// Queues `response` on the connection (daemon thread only).
    func queue(_ response: HTTPResponse) -> MHD_Result {
        answered = true
        response.onQueued?(.now)
        let mhdResponse: OpaquePointer?
        switch response.body {
        case .dropConnection:
            return lookout_mhd_result(0)
        case .bytes(let bytes):
            mhdResponse = bytes.withUnsafeBytes { raw in
                MHD_create_response_from_buffer(
                    raw.count, UnsafeMutableRawPointer(mutating: raw.baseAddress), lookout_mhd_copy_mode())
            }
        case .owned(let bytes):
            // The daemon sends straight from the buffer and releases it when the response is freed.
            let retained = Unmanaged.passRetained(bytes)
            mhdResponse = MHD_create_response_from_buffer_with_free_callback_cls(
                bytes.count, bytes.pointer, { cls in Unmanaged<OwnedBytes>.fromOpaque(cls!).release() }, retained.toOpaque())
            if mhdResponse == nil { retained.release() }
        case .stream(let contentLength, let producer):
            let stream = ResponseStream(connection: connection, suspensions: server.suspensions)
            let retained = Unmanaged.passRetained(stream)
            mhdResponse = MHD_create_response_from_callback(
                contentLength ?? UInt64.max, 32 * 1024,
                { cls, _, buffer, max in
                    let stream = Unmanaged<ResponseStream>.fromOpaque(cls!).takeUnretainedValue()
                    return stream.read(into: buffer!, max: max)
                },
                retained.toOpaque(),
                { cls in Unmanaged<ResponseStream>.fromOpaque(cls!).release() })
            guard mhdResponse != nil else {
                retained.release()
                return lookout_mhd_result(0)
            }
            let task = Task {
                do {
                    try await producer(BodyWriter(stream: stream))
                    stream.finish()
                } catch {
                    stream.abort()
                }
            }
            shared.withLock {
                $0.stream = stream
                $0.task = task
            }
        }
        guard let mhdResponse else { return lookout_mhd_result(0) }
        for (name, value) in response.headers {
            MHD_add_response_header(mhdResponse, name, value)
        }
        let result = MHD_queue_response(connection.pointer, UInt32(response.status), mhdResponse)
        MHD_destroy_response(mhdResponse)
        return result
    }

    private final class Collected {
        var pairs: [(String, String)] = []
    }

    private static func values(of connection: ConnectionHandle, kind: MHD_ValueKind) -> [(String, String)] {
        let collected = Collected()
        _ = lookout_mhd_values(
            connection.pointer, kind,
            { cls, _, key, keySize, value, valueSize in
                let collected = Unmanaged<Collected>.fromOpaque(cls!).takeUnretainedValue()
                func text(_ pointer: UnsafePointer<CChar>?, _ count: Int) -> String {
                    guard let pointer else { return "" }
                    return pointer.withMemoryRebound(to: UInt8.self, capacity: count) {
                        String(decoding: UnsafeBufferPointer(start: $0, count: count), as: UTF8.self)
                    }
                }
                if key != nil {
                    collected.pairs.append((text(key, keySize), text(value, valueSize)))
                }
                return lookout_mhd_result(1)
            }, Unmanaged.passUnretained(collected).toOpaque())
        return collected.pairs
    }
}
