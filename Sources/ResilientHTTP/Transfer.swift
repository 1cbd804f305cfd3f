// ResilientHTTP: the resilient HTTP client — libcurl transport, failure classification, retries,
// circuit breaking, rate limiting, auth and downloads. It knows nothing of Lookout's config or
// storage; it reports what happened through values and events the caller records.
import Foundation

/// One HTTP request for the transport: a single attempt, no retries.
public struct TransferRequest: Sendable {
    /// An http:// or https:// URL; other schemes fail as `bad_url`.
    public var url: String
    /// `GET` unless told otherwise; `HEAD` asks for no body.
    public var method: String
    /// Fields sent in order; a field here replaces libcurl's own (`User-Agent: Lookout/<version>`,
    /// `Accept-Encoding`).
    public var headers: [(name: String, value: String)]
    /// Sent with its length as `Content-Length`; nil sends no body.
    public var body: [UInt8]?
    /// The whole attempt, from start to last byte.
    public var timeout: Duration
    /// Connection set-up only; nil means libcurl's default (300 s), capped by `timeout`.
    public var connectTimeout: Duration?
    /// Follow 3xx answers; when false, the result's `redirectURL` says where one points.
    public var followRedirects: Bool
    /// Redirects followed before the attempt fails as `too_many_redirects`.
    public var maxRedirects: Int
    /// Send `headers` on a redirect to another origin too. Off by default: a source's
    /// `X-Api-Key` must not reach wherever its upstream points (libcurl itself drops only
    /// `Authorization` and `Cookie` there).
    public var forwardHeadersOnRedirect = false
    /// What `Accept-Encoding` asks for, the answer decoded as it arrives: "" (the default) asks
    /// for every encoding libcurl reads (deflate, gzip, br, zstd); nil sends no such field and
    /// keeps the body as it came, as blackbox_exporter does without `compression`.
    public var acceptEncoding: String? = ""
    /// Keep the body in `TransferResult.body`. When false it is counted (`bodyBytes`) as it
    /// arrives and dropped, with no size limit but the timeout: a `/probe` that checks nothing in
    /// the body holds none of it, however large or compressible.
    public var keepsBody = true
    /// The TLS versions allowed, by minor number (2 for TLS 1.2); nil leaves libcurl's.
    public var tlsMinimumMinor: Int?
    public var tlsMaximumMinor: Int?
    /// A client certificate and its key (PEM files), for servers that ask for one.
    public var clientCertificate: (certificate: String, key: String)?
    /// The name to send in SNI and verify the certificate for, instead of the URL's host (which
    /// is still connected to, and named in `Host`).
    public var tlsServerName: String?
    /// An HTTP proxy to go through (`http://proxy:3128`), the hosts that bypass it (`no_proxy`'s
    /// comma list), and fields for its CONNECT only.
    public var proxy: String?
    public var noProxy: String?
    public var proxyHeaders: [(name: String, value: String)] = []
    /// Resolve and connect over one IP version only (4 or 6); nil tries both (happy eyeballs).
    public var onlyIPVersion: Int?
    /// The IP version tried first where both are allowed (blackbox's `preferred_ip_protocol`,
    /// `ip6` unless told); only `localhost` is resolved by it (`LocalhostResolution`), other
    /// names by libcurl's happy eyeballs.
    public var preferredIPVersion: Int?
    /// The local address to connect from (an IP literal, blackbox's `source_ip_address`).
    public var localAddress: String?
    /// HTTP/1.1 only, even where the server offers h2 by ALPN.
    public var forbidsHTTP2 = false
    /// Speak HTTP/2 (gRPC): with prior knowledge over http://, by ALPN over https://. Trailers
    /// (`grpc-status`) arrive in the result's headers, after the others.
    public var requiresHTTP2 = false
    /// Connect (and for https:// complete the TLS handshake) and send nothing: a TCP or TLS
    /// probe. Success is a connection, with no HTTP status.
    public var connectOnly = false
    /// With `connectOnly`, an smtp://, imap:// or pop3:// URL: the server's greeting, STARTTLS
    /// and the TLS handshake (a server that offers no STARTTLS fails), then nothing more.
    public var startTLS = false
    /// Record the TLS version and describe the leaf certificate (`TransferResult.tlsVersion`,
    /// `peerCertificate`), for blackbox_exporter's TLS series; off by default (it parses the
    /// certificate).
    public var describesTLS = false
    /// Open a new connection and close it afterwards, so every probe measures DNS, connect and TLS.
    public var freshConnection: Bool
    /// Stop reading and fail the attempt past this many body bytes (kept, or with `keepsBody`
    /// false, counted).
    public var maxResponseBytes: Int?
    /// A PEM file of certificates to trust instead of the system's.
    public var caFile: String?
    /// Accept any certificate for any host (a `/probe` module's `insecure_skip_verify`).
    public var skipsCertificateVerification = false
    /// Receives a 200 or 206 body as it arrives instead of keeping it in memory (downloads).
    public var bodySink: (any BodySink)?

    /// A GET with a 10 s timeout, up to 10 redirects, a fresh connection and a 16 MiB body limit
    /// unless told otherwise.
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

    /// Whether the caller set a header named `name`, compared case-insensitively.
    func hasHeader(_ name: String) -> Bool {
        headers.contains { ASCII.equalIgnoringCase($0.name, name) }
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
    /// Name resolution.
    public var dns: Double
    /// The TCP connect, after name resolution.
    public var connect: Double
    /// The TLS handshake, after the connect; 0 for http://.
    public var tls: Double
    /// From the request sent to the first response byte (server processing).
    public var ttfb: Double
    /// From the first response byte to the last.
    public var transfer: Double

    /// Creates timings; phases not given are 0.
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
    /// The final response's fields in order; those of redirects and `100 Continue` are dropped.
    public var headers: [(name: String, value: String)]
    /// The final response's body, decompressed; empty when a `bodySink` took it.
    public var body: [UInt8]
    /// Where the attempt's time went.
    public var phases: PhaseTimings
    /// libcurl's total time for the attempt, redirects included, in seconds.
    public var totalSeconds: Double
    /// Redirects followed to reach the final response.
    public var redirects: Int
    /// "1.1", "2" or "3"; nil without a response.
    public var httpVersion: String?
    /// Body bytes libcurl delivered (decompressed), those handed to a `bodySink` included.
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
    /// With `describesTLS`: the protocol as Go names it ("TLS 1.3"), and the leaf certificate.
    public var tlsVersion: String?
    /// The request was `connectOnly`: no HTTP status is expected.
    public var connectOnly = false
    public var peerCertificate: PeerCertificate?

    /// Creates a result; `primaryIP`, `contentLength` and `redirectURL` are set afterwards.
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
        headers.first { ASCII.equalIgnoringCase($0.name, name) }?.value
    }

    /// The body as UTF-8 text.
    public var bodyText: String { String(decoding: body, as: UTF8.self) }
}

/// ASCII comparisons without the allocations of `lowercased()`: these run on every response.
package enum ASCII {
    /// Whether `a` and `b` are equal, ASCII letters compared case-insensitively.
    package static func equalIgnoringCase(_ a: String, _ b: String) -> Bool {
        a.utf8.count == b.utf8.count && hasPrefixIgnoringCase(a, b)
    }

    /// Whether `text` starts with `prefix`, ASCII letters compared case-insensitively.
    package static func hasPrefixIgnoringCase(_ text: String, _ prefix: String) -> Bool {
        bytes(text) { text in bytes(prefix) { prefix in text.count >= prefix.count && matches(text, at: 0, prefix) } }
    }

    /// Whether `text` ends with `suffix`, ASCII letters compared case-insensitively.
    package static func hasSuffixIgnoringCase(_ text: String, _ suffix: String) -> Bool {
        bytes(text) { text in bytes(suffix) { suffix in text.count >= suffix.count && matches(text, at: text.count - suffix.count, suffix) } }
    }

    /// Whether `needle` occurs in `text`, ASCII letters compared case-insensitively.
    package static func containsIgnoringCase(_ text: String, _ needle: String) -> Bool {
        bytes(text) { text in
            bytes(needle) { needle in
                guard let first = needle.first.map(lower) else { return true }
                guard text.count >= needle.count else { return false }
                // Only where the first byte matches is the rest compared.
                var start = 0
                while start <= text.count - needle.count {
                    if lower(text[start]) == first && matches(text, at: start, needle) { return true }
                    start += 1
                }
                return false
            }
        }
    }

    /// Whether `needle` occurs in `text` at `start`, which leaves room for it.
    private static func matches(_ text: UnsafeBufferPointer<UInt8>, at start: Int, _ needle: UnsafeBufferPointer<UInt8>) -> Bool {
        for offset in 0..<needle.count where lower(text[start + offset]) != lower(needle[offset]) { return false }
        return true
    }

    /// `body` over the string's UTF-8 bytes, in place for a native string (Substring views and
    /// iterators cost 50 ns a position: 12 % of start-up at 1,000 sources, in `Redaction.url`).
    package static func bytes<Result>(_ text: String, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        if let result = text.utf8.withContiguousStorageIfAvailable(body) { return result }
        return Array(text.utf8).withUnsafeBufferPointer(body)
    }

    /// The byte with an ASCII capital letter made small; every other byte as it is.
    package static func lower(_ byte: UInt8) -> UInt8 {
        byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
    }
}
