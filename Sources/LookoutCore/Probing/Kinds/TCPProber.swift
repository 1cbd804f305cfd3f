import Foundation
import ResilientHTTP

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
/// on 587, 143 or 110 is watched as one on 465 is.
package enum TLSProber: EndpointProber {
    package static let kind = SourceKind.tls
    package static let summary = "a TLS handshake with a valid certificate at host:port (STARTTLS for smtp, imap, pop3)"
    static let scheme = "tls"
    static let transferScheme = "https"
    /// The schemes whose connections start in the clear and upgrade with STARTTLS.
    static let startTLSSchemes = ["smtp", "imap", "pop3"]

    package static func urlProblem(_ url: String) -> String? {
        if let scheme = startTLSScheme(url) { return EndpointURL.problem(url, scheme: scheme) }
        return EndpointURL.problem(url, scheme: scheme, usage: "tls://host:port, or smtp://, imap:// or pop3://host:port for STARTTLS")
    }

    package static func probe(_ source: SourceConfig, with prober: SourceProber, breakerCountsFailures: Bool) async -> ProbeResult {
        let startTLS = startTLSScheme(source.url) != nil
        return await prober.call(source, breakerCountsFailures: breakerCountsFailures) { transfer in
            transfer.url = startTLS ? source.url : EndpointURL.transferURL(source.url, scheme: transferScheme)
            transfer.connectOnly = true
            transfer.startTLS = startTLS
        }
    }

    /// `smtp`, `imap` or `pop3` when `url` names one of them.
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
        guard let components = URLComponents(string: text), components.scheme?.lowercased() == scheme,
            let host = components.host, !host.isEmpty
        else {
            return "\"\(text)\" is not a \(scheme):// address (use \(usage ?? "\(scheme)://host:port"))"
        }
        guard let port = components.port else { return "\"\(text)\" names no port (use \(scheme)://host:port)" }
        guard (1...65535).contains(port) else { return "\"\(text)\" names port \(port); a port is 1 to 65535" }
        guard components.path.isEmpty || components.path == "/", components.query == nil, components.user == nil else {
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
