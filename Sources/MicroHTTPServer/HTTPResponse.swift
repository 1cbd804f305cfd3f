/// What a handler answers: a status, headers and a body that is either buffered or streamed.
///
/// ```swift
/// router.get("/hello") { _ in .text("hello\n") }
/// ```
public struct HTTPResponse: Sendable {
    /// The HTTP status code; not sent with a `.dropConnection` body.
    public var status: Int
    /// Fields sent as given; libmicrohttpd adds `Content-Length` or chunked encoding itself.
    public var headers: HTTPHeaders
    /// Buffered, owned, streamed, or no response at all.
    public var body: HTTPResponseBody
    /// Called on the daemon thread with the instant the response is handed to libmicrohttpd to
    /// send: with `HTTPRequest.receivedAt`, the server's whole time for the request, its own
    /// thread hand-overs included.
    public var onQueued: (@Sendable (ContinuousClock.Instant) -> Void)?

    /// An empty 200 unless told otherwise.
    public init(status: Int = 200, headers: HTTPHeaders = [:], body: HTTPResponseBody = .bytes([])) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A `text/plain; charset=utf-8` response.
    public static func text(_ text: String, status: Int = 200) -> HTTPResponse {
        HTTPResponse(status: status, headers: ["Content-Type": "text/plain; charset=utf-8"], body: .bytes(Array(text.utf8)))
    }

    /// A `text/html; charset=utf-8` response.
    public static func html(_ html: String, status: Int = 200) -> HTTPResponse {
        HTTPResponse(status: status, headers: ["Content-Type": "text/html; charset=utf-8"], body: .bytes(Array(html.utf8)))
    }

    /// An `application/json` response from already encoded bytes.
    public static func json(_ bytes: [UInt8], status: Int = 200) -> HTTPResponse {
        HTTPResponse(status: status, headers: ["Content-Type": "application/json"], body: .bytes(bytes))
    }

    /// An `application/json` response from a JSON text.
    public static func json(_ text: String, status: Int = 200) -> HTTPResponse {
        json(Array(text.utf8), status: status)
    }

    /// Closes the connection without sending anything (for fault injection).
    public static let dropConnection = HTTPResponse(status: 0, body: .dropConnection)
}

/// The body of a response.
public enum HTTPResponseBody: Sendable {
    /// The whole body, sent with a `Content-Length`.
    case bytes([UInt8])
    /// The whole body in a buffer the server takes over and sends without copying (for large
    /// bodies such as a 30 MB scrape).
    case owned(OwnedBytes)
    /// A body written piece by piece by `producer`; with a `contentLength` it is sent with that
    /// length, otherwise chunked. The producer may wait between writes without holding a thread.
    case stream(contentLength: UInt64?, producer: @Sendable (BodyWriter) async throws -> Void)
    /// No response at all: the connection is closed.
    case dropConnection
}

/// Hands the pieces of a streamed body to the server, waiting while the client is slow.
public struct BodyWriter: Sendable {
    let stream: ResponseStream

    /// Queues `bytes`; suspends while too much is queued. Throws when the client has gone.
    public func write(_ bytes: [UInt8]) async throws {
        try await stream.write(bytes)
    }

    /// Drops the connection after what has been sent so far (for fault injection).
    public func abort() {
        stream.abort()
    }
}

/// The client went away before the response was complete.
public struct ClientDisconnected: Error {}

/// Bytes in memory allocated with `UnsafeMutableRawPointer.allocate`, freed when the last
/// reference goes: the response keeps them until the daemon has sent them.
public final class OwnedBytes: @unchecked Sendable {
    // Never written after init; the daemon thread only reads them.
    /// The start of the buffer; valid while this object lives.
    public let pointer: UnsafeMutableRawPointer
    /// The buffer's length in bytes.
    public let count: Int
    private let release: (@Sendable (UnsafeMutableRawPointer) -> Void)?

    /// Takes over `pointer` (allocated with `allocate(byteCount:alignment:)` or
    /// `UnsafeMutablePointer.allocate`); when the object goes, `release` gets it back, or without
    /// one it is deallocated.
    public init(takingOwnershipOf pointer: UnsafeMutableRawPointer, count: Int, release: (@Sendable (UnsafeMutableRawPointer) -> Void)? = nil) {
        self.pointer = pointer
        self.count = count
        self.release = release
    }

    deinit {
        if let release { release(pointer) } else { pointer.deallocate() }
    }

    /// A copy, as an array.
    public var array: [UInt8] { Array(UnsafeRawBufferPointer(start: pointer, count: count)) }
}
