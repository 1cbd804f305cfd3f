import Foundation
import ResilientHTTP

/// A `/probe` module (blackbox_exporter style): what kind of probe, how long it may take, and
/// which targets it may be pointed at.
package struct ProbeModule: Sendable, Equatable {
    package var kind: SourceKind
    package var timeout: Duration
    /// Regular expressions; a target must match one as a whole (see `allows(_:)`).
    package var allow: [String]
    /// Follow redirects, checking every hop against `allow` (blackbox_exporter follows them too).
    package var followRedirects: Bool
    package var maxRedirects: Int
    /// The `Accept-Encoding` asked for (blackbox_exporter's `compression`); nil asks for none
    /// and counts the body as it arrives, as blackbox_exporter does without it.
    package var compression: String?
    /// The request, as blackbox_exporter's `http` module gives it.
    package var method = "GET"
    package var headers: [HeaderField] = []
    package var body: String?
    /// Statuses that pass; nil means 200–299.
    package var validStatusCodes: Set<Int>?
    package var failIfSSL = false
    package var failIfNotSSL = false
    /// Regular expressions the body must not match, and must match.
    package var failIfBodyMatches: [String] = []
    package var failIfBodyNotMatches: [String] = []
    /// A response header's values against a regular expression (blackbox's
    /// `fail_if_header_matches` / `fail_if_header_not_matches`).
    package struct HeaderRegex: Sendable, Equatable {
        package var header: String
        package var regexp: String
        /// A missing header passes (by default it fails either check).
        package var allowMissing = false

        package init(header: String, regexp: String, allowMissing: Bool = false) {
            self.header = header
            self.regexp = regexp
            self.allowMissing = allowMissing
        }
    }
    package var failIfHeaderMatches: [HeaderRegex] = []
    package var failIfHeaderNotMatches: [HeaderRegex] = []
    /// The protocols an answer may come in (`HTTP/1.1`, `HTTP/2.0`); empty: any.
    package var validHTTPVersions: [String] = []
    package var caFile: String?
    /// blackbox's `tls_config.insecure_skip_verify`: certificates are not verified.
    package var insecureSkipVerify = false
    /// The rest of blackbox's `tls_config`: versions (minor numbers: 2 for TLS12), a client
    /// certificate, another server name.
    package var tlsMinimumMinor: Int?
    package var tlsMaximumMinor: Int?
    package var clientCertificate: ClientCertificate?
    package var serverName: String?
    /// blackbox's `proxy_url`, `no_proxy` and `proxy_connect_header`.
    package var proxyURL: String?
    package var noProxy: String?
    package var proxyHeaders: [HeaderField] = []
    /// blackbox's `proxy_from_environment`: `HTTP_PROXY`/`HTTPS_PROXY`/`NO_PROXY`, as Go reads
    /// them. Without it (and without `proxy_url`) a module uses no proxy, whatever the
    /// environment says, as in blackbox.
    package var proxyFromEnvironment = false
    /// blackbox's `enable_http2: false`: HTTP/1.1 even where the server offers h2.
    package var forbidsHTTP2 = false
    /// blackbox's `oauth2` (client credentials): a token fetched for each probe.
    package var oauth2: OAuth2ClientCredentials?
    /// blackbox's `preferred_ip_protocol` with `ip_protocol_fallback: false`: only that family
    /// (4 or 6); nil tries both.
    package var onlyIPVersion: Int?
    /// blackbox's `preferred_ip_protocol` with its fallback (4 or 6): the version tried first.
    package var preferredIPVersion: Int?

    package struct ClientCertificate: Sendable, Equatable {
        package var certificate: String
        package var key: String

        package init(certificate: String, key: String) {
            self.certificate = certificate
            self.key = key
        }
    }
    /// The most body bytes read (blackbox_exporter's `body_size_limit`): past it the probe fails.
    /// nil: no limit for a body only counted, 16 MiB for one a regex reads.
    package var bodySizeLimit: Int?
    /// Probes any target: a module from a blackbox_exporter file, as blackbox_exporter does,
    /// unless `probe_allow` narrows it (then `allow` holds those patterns).
    package var anyTarget = false
    /// blackbox's `dns` prober: the question and what the answer must be (kind `dns`).
    package var dns: DNSModuleSettings?
    /// blackbox's `icmp` prober: the echo request's shape (kind `icmp`).
    package var icmp: ICMPModuleSettings?
    /// blackbox's `grpc` prober: the service whose health to ask for (kind `grpc`).
    package var grpc: GRPCModuleSettings?
    /// The local address a tcp, dns or icmp probe goes from (`source_ip_address`).
    package var sourceAddress: String?
    /// blackbox's `tcp` prober with `tls: true`: a TLS handshake after the connection.
    package var tcpTLS = false
    /// blackbox's `tcp` `query_response`: lines to expect (a regular expression) and to send.
    package var tcpQueryResponse: [TCPQueryStep] = []

    /// One `query_response` item: wait for a line matching `expect`, then send `send` (which
    /// may name what `expect` captured, `${1}`), then with `starttls` shake hands.
    package struct TCPQueryStep: Sendable, Equatable {
        package var expect: String?
        package var send: String?
        package var startTLS = false

        package init(expect: String? = nil, send: String? = nil, startTLS: Bool = false) {
            self.expect = expect
            self.send = send
            self.startTLS = startTLS
        }
    }
    /// Where the module was written (`probe_modules.NAME` or `FILE: modules.NAME`), for errors.
    package var origin = ""

    package init(kind: SourceKind = .http, timeout: Duration = .seconds(5), allow: [String] = [], followRedirects: Bool = true, maxRedirects: Int = 10) {
        self.kind = kind
        self.timeout = timeout
        self.allow = allow
        self.followRedirects = followRedirects
        self.maxRedirects = maxRedirects
    }

    /// Whether some `allow` pattern matches the whole of `target`, anchored at both ends the way
    /// Prometheus anchors relabel regexes: `127\.0\.0\.1` alone allows nothing but that text, and
    /// `http://other.host/?127.0.0.1` does not slip through a pattern meant for one host.
    ///
    /// ```swift
    /// ProbeModule(allow: [#"http://127\.0\.0\.1:[0-9]+/.*"#]).allows("http://127.0.0.1:9480/ok")  // true
    /// ```
    package func allows(_ target: String) -> Bool {
        if anyTarget { return true }
        return allow.contains { ProbeModule.matchesWhole($0, target) }
    }

    static func matchesWhole(_ pattern: String, _ text: String) -> Bool {
        RegexCache.matchesWhole(pattern, text)
    }

    /// Whether `pattern` lets through URLs of hosts nobody named: it matches made-up targets on
    /// unrelated hosts. `check-config` warns about such a pattern.
    package static func allowsAnyHost(_ pattern: String) -> Bool {
        let strangers = ["http://lookout-unrelated-host.invalid/", "https://203.0.113.77:8443/anything?x=1"]
        return strangers.contains { matchesWhole(pattern, $0) }
    }
}
