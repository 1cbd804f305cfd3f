import ClientSocket
import Foundation
import ResilientHTTP
import TCPExchange

extension SourceKind {
    package static let tcp = SourceKind(declaring: "tcp")
    package static let tls = SourceKind(declaring: "tls")
}

/// `kind: tcp`, `url: tcp://host:port`: a TCP connection, nothing sent. The database and queue
/// ports behind an API, an SMTP relay: refused, timed out or unresolvable as HTTP sources are.
package enum TCPProber: EndpointProber {
    package static let kind = SourceKind.tcp
    package static let summary = "a TCP connection to host:port"
    static let scheme = "tcp"
    static let transferScheme = "http"
}

/// `kind: tls`, `url: tls://host:port`: a TCP connection and a TLS handshake, the certificate
/// verified for the host (against `ca_file` or the system's store), its expiry recorded:
/// expired, wrong-host and untrusted certificates fail as they do for https:// sources. With
/// `smtp://`, `imap://` or `pop3://host:port` the handshake follows the protocol's STARTTLS
/// (libcurl's connect phase: greeting, capabilities, STARTTLS), so a mail server's certificate
/// on 587, 143 or 110 is watched as one on 465 is. `postgres://host:port` asks a PostgreSQL
/// server for TLS as its clients do (`SSLRequest`), on a connection of Lookout's own: one
/// attempt, no retries, like the other kinds that are no HTTP request.
package enum TLSProber: EndpointProber {
    package static let kind = SourceKind.tls
    package static let summary = "a TLS handshake with a valid certificate at host:port (STARTTLS for smtp, imap, pop3, postgres)"
    static let scheme = "tls"
    static let transferScheme = "https"
    /// The schemes whose connections start in the clear and upgrade with STARTTLS.
    static let startTLSSchemes = ["smtp", "imap", "pop3", "postgres"]

    package static func urlProblem(_ url: String) -> String? {
        if let scheme = startTLSScheme(url) { return EndpointURL.problem(url, scheme: scheme) }
        return EndpointURL.problem(url, scheme: scheme, usage: "tls://host:port, or smtp://, imap://, pop3:// or postgres://host:port for STARTTLS")
    }

    package static func probe(_ source: SourceConfig, with prober: SourceProber, breakerCountsFailures: Bool) async -> ProbeResult {
        if startTLSScheme(source.url) == "postgres" { return await probePostgres(source, with: prober) }
        let startTLS = startTLSScheme(source.url) != nil
        return await prober.call(source, breakerCountsFailures: breakerCountsFailures) { transfer in
            transfer.url = startTLS ? source.url : EndpointURL.transferURL(source.url, scheme: transferScheme)
            transfer.connectOnly = true
            transfer.startTLS = startTLS
        }
    }

    static func probePostgres(_ source: SourceConfig, with prober: SourceProber) async -> ProbeResult {
        let started = ContinuousClock.now
        let startedMs = Timestamp.nowMs()
        let parts = URLParts(source.url)
        var settings = TLSSettings()
        settings.caFile = source.caFile
        let outcome = await TCPExchange.postgresTLS(
            host: parts?.bareHost ?? "", port: UInt16(clamping: parts?.port ?? 0),
            timeout: source.timeout, tls: settings)
        let seconds = (ContinuousClock.now - started).seconds
        var result = ProbeResult(source: source.name, timestampMs: startedMs, ok: outcome.problem == nil, durationSeconds: seconds)
        if let failure = Failure(outcome) {
            result.failure = failure
            result.callKind = .failedWithoutRetry
        } else {
            result.attemptSeconds = seconds
        }
        result.certificateExpiry = outcome.tls?.earliestExpiry.map { Date(timeIntervalSince1970: Double($0)) }
        prober.report(result, for: source)
        return result
    }

    /// `smtp`, `imap`, `pop3` or `postgres` when `url` names one of them.
    static func startTLSScheme(_ url: String) -> String? {
        guard let colon = url.range(of: "://") else { return nil }
        let scheme = url[..<colon.lowerBound].lowercased()
        return startTLSSchemes.contains(scheme) ? scheme : nil
    }
}

/// A kind that connects to `SCHEME://host:port` and sends nothing: libcurl connects to the same
/// host and port as `transferScheme` (https: with the TLS handshake) and stops there.
protocol EndpointProber: Prober {
    static var scheme: String { get }
    static var transferScheme: String { get }
}

extension EndpointProber {
    package static var isHTTPRequest: Bool { false }
    package static var usesTransferThreads: Bool { false }

    package static func urlProblem(_ url: String) -> String? {
        EndpointURL.problem(url, scheme: scheme)
    }

    package static func probe(_ source: SourceConfig, with prober: SourceProber, breakerCountsFailures: Bool) async -> ProbeResult {
        await prober.call(source, breakerCountsFailures: breakerCountsFailures) { transfer in
            transfer.url = EndpointURL.transferURL(source.url, scheme: transferScheme)
            transfer.connectOnly = true
        }
    }
}

/// `SCHEME://host:port` URLs of the kinds that are no HTTP request.
enum EndpointURL {
    /// A space or control character anywhere: what no kind's URL may hold.
    static func unprintableProblem(_ text: String) -> String? {
        guard text.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F }) else { return nil }
        return "\"\(PrintableText.escape(text))\" holds a space or a control character"
    }

    /// - Parameter usage: what to write instead, when the URL is not one of `scheme`.
    static func problem(_ text: String, scheme: String, usage: String? = nil) -> String? {
        if let problem = unprintableProblem(text) { return problem }
        guard let parts = URLParts(text), parts.scheme.lowercased() == scheme, let host = parts.host, !host.isEmpty else {
            return "\"\(text)\" is not a \(scheme):// address (use \(usage ?? "\(scheme)://host:port"))"
        }
        guard let port = parts.port else { return "\"\(text)\" names no port (use \(scheme)://host:port)" }
        guard (1...65535).contains(port) else { return "\"\(text)\" names port \(port); a port is 1 to 65535" }
        guard parts.decodedPath.isEmpty || parts.decodedPath == "/", parts.query == nil, parts.userInfo == nil else {
            return "\"\(text)\" has more than a host and a port"
        }
        return nil
    }

    /// The URL libcurl connects to: the same host and port under `scheme`.
    static func transferURL(_ url: String, scheme: String) -> String {
        guard let range = url.range(of: "://") else { return url }
        return scheme + url[range.lowerBound...]
    }
}

extension Failure {
    /// What went wrong in a conversation of Lookout's own (`TCPExchange`), in the terms an
    /// HTTP probe's failure would use; nil when nothing did.
    package init?(_ outcome: TCPExchange.Outcome) {
        guard let problem = outcome.problem else { return nil }
        let (category, reason): (ErrorCategory, String) =
            switch outcome.reason {
            case "resolve": (.networkUnreachable, "dns_failure")
            case "refused": (.transient, "connection_refused")
            case "timeout": (.timeout, "response_timeout")
            case "regex": (.invalidResponse, "expect_mismatch")
            case "tls": (.tlsError, "tls_handshake")
            case "tls_certificate": (.tlsError, "cert_invalid")
            case "tls_expired": (.tlsError, "cert_expired")
            case "starttls_unavailable": (.tlsError, "starttls_unavailable")
            case "protocol": (.invalidResponse, "unexpected_answer")
            case "line_too_long": (.invalidResponse, "line_too_long")
            case "answer_too_large": (.invalidResponse, "answer_too_large")
            case "send_too_large": (.invalidResponse, "send_too_large")
            default: (.transient, "connection_failed")
            }
        self.init(category: category, reason: reason, detail: problem)
    }
}
