// ResilientHTTP: the resilient HTTP client — libcurl transport, failure classification, retries,
// circuit breaking, rate limiting, auth and downloads. It knows nothing of Lookout's config or
// storage; it reports what happened through values and events the caller records.
import Foundation

/// One HTTP request for the transport: a single attempt, no retries.
public struct TransferRequest: Sendable {
    public var url: String
    public var method: String
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]?
    /// The whole attempt, from start to last byte.
    public var timeout: Duration
    /// Connection set-up only; nil means libcurl's default (300 s), capped by `timeout`.
    public var connectTimeout: Duration?
    public var followRedirects: Bool
    public var maxRedirects: Int
    /// Open a new connection and close it afterwards, so every probe measures DNS, connect and TLS.
    public var freshConnection: Bool
    /// Stop reading and fail the attempt past this many body bytes.
    public var maxResponseBytes: Int?
    /// A PEM file of certificates to trust instead of the system's.
    public var caFile: String?
    /// Receives a 200 or 206 body as it arrives instead of keeping it in memory (downloads).
    public var bodySink: (any BodySink)?

    public init(
        url: String, method: String = "GET", headers: [(name: String, value: String)] = [],
        body: [UInt8]? = nil, timeout: Duration = .seconds(10), connectTimeout: Duration? = nil,
        followRedirects: Bool = true, maxRedirects: Int = 10, freshConnection: Bool = true,
        maxResponseBytes: Int? = 16 << 20, caFile: String? = nil, bodySink: (any BodySink)? = nil
    ) {
        self.url = url
        self.method = method
        self.headers = headers
        self.body = body
        self.timeout = timeout
        self.connectTimeout = connectTimeout
        self.followRedirects = followRedirects
        self.maxRedirects = maxRedirects
        self.freshConnection = freshConnection
        self.maxResponseBytes = maxResponseBytes
        self.caFile = caFile
        self.bodySink = bodySink
    }
}

/// Takes a response body piece by piece on the transport's thread, for bodies too large to keep.
public protocol BodySink: AnyObject, Sendable {
    /// A 200 or 206 body begins. Return false to keep this body in memory instead.
    func begin(status: Int, headers: [(name: String, value: String)]) -> Bool
    /// The next bytes; return false to stop the transfer (it fails as `too_large`).
    func write(_ bytes: UnsafeRawBufferPointer) -> Bool
}

/// Where the time of one attempt went, in seconds, as libcurl measured it.
public struct PhaseTimings: Sendable, Equatable, Codable {
    public var dns: Double
    public var connect: Double
    public var tls: Double
    /// From the request sent to the first response byte (server processing).
    public var ttfb: Double
    public var transfer: Double

    public init(dns: Double = 0, connect: Double = 0, tls: Double = 0, ttfb: Double = 0, transfer: Double = 0) {
        self.dns = dns
        self.connect = connect
        self.tls = tls
        self.ttfb = ttfb
        self.transfer = transfer
    }
}

/// What one attempt produced: either a response (any status) or a transport failure.
public struct TransferResult: Sendable {
    /// libcurl's result code; 0 when a response arrived.
    public var curlCode: Int32
    /// libcurl's own explanation when `curlCode` is not 0.
    public var curlMessage: String
    /// The final response's status, nil when none arrived.
    public var httpStatus: Int?
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]
    public var phases: PhaseTimings
    public var totalSeconds: Double
    public var redirects: Int
    /// "1.1", "2" or "3"; nil without a response.
    public var httpVersion: String?
    public var bodyBytes: Int
    /// The body went past `maxResponseBytes` and reading stopped.
    public var exceededSizeLimit: Bool
    /// The calling task was cancelled and the transfer aborted.
    public var cancelled: Bool
    /// The operating system's errno behind a connection failure (ECONNREFUSED, ENETUNREACH...).
    public var osErrno: Int32
    /// When the first of the peer's TLS certificates expires (https only).
    public var certificateExpiry: Date?
    /// The address the final connection went to, e.g. `127.0.0.1`.
    public var primaryIP: String?
    /// The size the server announced in `Content-Length`, or -1.
    public var contentLength: Int64 = -1
    /// Where a redirect that was not followed (`followRedirects: false`) points, resolved against
    /// the request's URL by libcurl; nil for other answers.
    public var redirectURL: String?

    public init(
        curlCode: Int32 = 0, curlMessage: String = "", httpStatus: Int? = nil,
        headers: [(name: String, value: String)] = [], body: [UInt8] = [], phases: PhaseTimings = .init(),
        totalSeconds: Double = 0, redirects: Int = 0, httpVersion: String? = nil, bodyBytes: Int = 0,
        exceededSizeLimit: Bool = false, cancelled: Bool = false, osErrno: Int32 = 0,
        certificateExpiry: Date? = nil
    ) {
        self.curlCode = curlCode
        self.curlMessage = curlMessage
        self.httpStatus = httpStatus
        self.headers = headers
        self.body = body
        self.phases = phases
        self.totalSeconds = totalSeconds
        self.redirects = redirects
        self.httpVersion = httpVersion
        self.bodyBytes = bodyBytes
        self.exceededSizeLimit = exceededSizeLimit
        self.cancelled = cancelled
        self.osErrno = osErrno
        self.certificateExpiry = certificateExpiry
    }

    /// The first header named `name`, compared case-insensitively.
    public func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        return headers.first { $0.name.lowercased() == wanted }?.value
    }

    /// The body as UTF-8 text.
    public var bodyText: String { String(decoding: body, as: UTF8.self) }
}
