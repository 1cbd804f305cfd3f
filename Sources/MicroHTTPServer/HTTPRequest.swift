/// A request as a handler sees it: the whole body has been read (within the size limit).
public struct HTTPRequest: Sendable {
    /// The method as sent, e.g. `GET`.
    public var method: String
    /// The decoded path without the query, e.g. `/api/v1/sources/acme`.
    public var path: String
    /// Decoded query parameters; when a name repeats, the last value wins.
    public var query: [String: String]
    /// The request's header fields as received.
    public var headers: HTTPHeaders
    /// The whole body; a body larger than the server's `maxRequestBodyBytes` is answered 413 and
    /// never reaches a handler.
    public var body: [UInt8]
    /// Values of the route's `:name` segments.
    public var pathParameters: [String: String]
    /// The peer's address, e.g. `127.0.0.1`.
    public var remoteAddress: String?
    /// When the daemon thread had the request's header (before the body and the handler): the
    /// start of the server's own clock for it.
    public var receivedAt: ContinuousClock.Instant

    /// Creates a request; the server makes its own, this is for tests and `Router.respond(to:)`.
    public init(
        method: String, path: String, query: [String: String] = [:], headers: HTTPHeaders = [:],
        body: [UInt8] = [], pathParameters: [String: String] = [:], remoteAddress: String? = nil,
        receivedAt: ContinuousClock.Instant = .now
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
        self.pathParameters = pathParameters
        self.remoteAddress = remoteAddress
        self.receivedAt = receivedAt
    }

    /// The body decoded as UTF-8.
    public var bodyText: String { String(decoding: body, as: UTF8.self) }
}
