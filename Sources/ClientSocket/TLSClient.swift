internal import CLibCrypto
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// How a conversation's TLS is set up (blackbox's `tls_config`): whom to trust, which name the
/// certificate must carry, which versions are allowed, and a client certificate.
public struct TLSSettings: Sendable, Hashable {
    /// The name sent in SNI and checked against the certificate (an IP address is checked
    /// against its IP addresses); nil: the target's host.
    public var serverName: String?
    /// PEM certificates to trust instead of the system's.
    public var caFile: String?
    public var certificateFile: String?
    public var keyFile: String?
    /// false accepts any certificate for any name (`insecure_skip_verify`).
    public var verify = true
    /// The versions allowed, by minor number (2 for TLS 1.2); nil: OpenSSL's.
    public var minimumMinor: Int?
    public var maximumMinor: Int?

    public init() {}
}

/// What a completed handshake showed, for blackbox's TLS series.
public struct TLSHandshake: Sendable, Equatable {
    /// As Go names it: "TLS 1.3".
    public var version: String
    /// The leaf certificate, DER.
    public var leafDER: [UInt8]
    /// The earliest expiry (Unix seconds) of the certificates the server presented.
    public var earliestExpiry: Int64?
    /// The earliest expiry of the chain that was verified; nil when none was (no verification).
    public var verifiedChainExpiry: Int64?
}

/// One TLS client connection on a socket the caller owns (non-blocking), its calls bounded by
/// the caller's deadline: OpenSSL's SSL*, owned here and freed with this object.
final class TLSClient {
    private let ssl: OpaquePointer
    private let fd: Int32

    private init(ssl: OpaquePointer, fd: Int32) {
        self.ssl = ssl
        self.fd = fd
    }

    deinit { lookout_tls_free(ssl) }

    enum Failure: Error {
        /// The settings could not be used (a CA file that does not parse).
        case setup(String)
        /// The handshake failed: on the certificate (`certificate`), on its validity period
        /// (`expired`), or otherwise.
        case handshake(String, Cause)
        case timeout

        enum Cause { case expired, certificate, other }
    }

    /// Shakes hands on `fd` as `settings` say, checking the certificate for `host` unless told
    /// another name. `remainingMs` says how long is left.
    static func connect(fd: Int32, host: String, settings: TLSSettings, remainingMs: () -> Int32) -> Result<(TLSClient, TLSHandshake), Failure> {
        let context: OpaquePointer
        switch ContextCache.shared.context(for: settings) {
        case .success(let found): context = found
        case .failure(let failure): return .failure(failure)
        }
        defer { lookout_tls_context_free(context) }
        let name = settings.serverName ?? host
        guard let ssl = lookout_tls_client(context, fd, name) else { return .failure(.setup("cannot start a TLS connection")) }
        let client = TLSClient(ssl: ssl, fd: fd)
        while true {
            let step = lookout_tls_connect(ssl)
            if step == 1 { return .success((client, client.handshake())) }
            if let ready = client.waitIfAsked(step, remainingMs: remainingMs) {
                guard ready else { return .failure(.timeout) }
            } else {
                var text = [CChar](repeating: 0, count: 256)
                lookout_tls_failure(ssl, &text, Int32(text.count))
                let reason = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                let cause: Failure.Cause =
                    switch lookout_tls_verify_outcome(ssl) {
                    case 1: .expired
                    case 2: .certificate
                    default: .other
                    }
                return .failure(.handshake(reason, cause))
            }
        }
    }

    private func handshake() -> TLSHandshake {
        var der: UnsafeMutablePointer<UInt8>?
        let length = lookout_ssl_leaf_der(UnsafeMutableRawPointer(ssl), &der)
        var leaf: [UInt8] = []
        if length > 0, let der {
            leaf = Array(UnsafeBufferPointer(start: der, count: Int(length)))
            lookout_openssl_free(der)
        }
        let version = lookout_ssl_version(UnsafeMutableRawPointer(ssl)).map { String(cString: $0) } ?? ""
        let earliest = lookout_ssl_earliest_expiry(UnsafeMutableRawPointer(ssl))
        let verified = lookout_ssl_verified_chain_expiry(ssl)
        return TLSHandshake(
            version: version, leafDER: leaf, earliestExpiry: earliest >= 0 ? earliest : nil,
            verifiedChainExpiry: verified >= 0 ? verified : nil)
    }

    /// Reads what is there into `chunk`: the count (0 when the peer closed), or nil at the deadline
    /// or on an error.
    func read(_ chunk: inout [UInt8], remainingMs: () -> Int32) -> Int? {
        while true {
            var moved: Int32 = 0
            let step = chunk.withUnsafeMutableBytes { lookout_tls_read(ssl, $0.baseAddress, Int32($0.count), &moved) }
            if step == 1 { return Int(moved) }
            guard let ready = waitIfAsked(step, remainingMs: remainingMs) else { return 0 }  // closed, or an abrupt end, read as closed
            guard ready else { return nil }
        }
    }

    /// Writes all of `bytes`; false at the deadline or on an error.
    func write(_ bytes: [UInt8], remainingMs: () -> Int32) -> Bool {
        var sent = 0
        while sent < bytes.count {
            var moved: Int32 = 0
            let step = bytes[sent...].withUnsafeBytes { lookout_tls_write(ssl, $0.baseAddress, Int32($0.count), &moved) }
            if step == 1 {
                sent += Int(moved)
            } else if waitIfAsked(step, remainingMs: remainingMs) != true {
                return false
            }
        }
        return true
    }

    /// For a step OpenSSL says must wait (-1 to read, -2 to write): whether the socket got ready
    /// before the deadline; nil for any other step (done, closed, failed).
    private func waitIfAsked(_ step: Int32, remainingMs: () -> Int32) -> Bool? {
        switch step {
        case -1: ClientConnection.wait(fd, events: Int16(POLLIN), ms: remainingMs())
        case -2: ClientConnection.wait(fd, events: Int16(POLLOUT), ms: remainingMs())
        default: nil
        }
    }

    /// One OpenSSL context per setting, kept 5 minutes: building one reads its CA file, and the
    /// system's bundle takes about 26 ms of CPU to parse. A CA file changed in place is read
    /// again when its context is rebuilt.
    final class ContextCache: Sendable {
        static let shared = ContextCache()
        static let lifetime: Duration = .seconds(300)

        /// An SSL_CTX is reference-counted and safe to share between threads once built.
        private struct Entry: @unchecked Sendable {
            var context: OpaquePointer
            var built: ContinuousClock.Instant
        }
        private let entries = Mutex<[TLSSettings: Entry]>([:])

        /// A context for `settings` with a reference the caller frees.
        func context(for settings: TLSSettings) -> Result<OpaquePointer, Failure> {
            let now = ContinuousClock.now
            if let found = entries.withLock({ entries -> Entry? in
                guard let entry = entries[settings], now - entry.built < ContextCache.lifetime else { return nil }
                lookout_tls_context_up_ref(entry.context)
                return entry
            }) {
                return .success(found.context)
            }
            var error = [CChar](repeating: 0, count: 256)
            let version = { (minor: Int?) -> Int32 in minor.map { Int32(clamping: 0x301 + max(0, min($0, 3))) } ?? 0 }
            guard
                let built = lookout_tls_client_context(
                    settings.caFile, settings.certificateFile, settings.keyFile, settings.verify ? 1 : 0, version(settings.minimumMinor),
                    version(settings.maximumMinor), &error, Int32(error.count))
            else {
                return .failure(.setup(String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)))
            }
            lookout_tls_context_up_ref(built)
            let entry = Entry(context: built, built: now)
            let replaced = entries.withLock { entries -> Entry? in
                let old = entries[settings]
                entries[settings] = entry
                return old
            }
            if let replaced { lookout_tls_context_free(replaced.context) }
            return .success(built)
        }
    }
}
