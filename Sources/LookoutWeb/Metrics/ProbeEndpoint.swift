import Foundation
import LookoutCore
import MicroHTTPServer
import ResilientHTTP
import Synchronization

/// `GET /probe?target=URL&module=NAME`: one probe now, answered with blackbox_exporter's http
/// prober metric names, so a blackbox_exporter user can switch by changing the scrape address.
/// Targets must match the module's `allow` patterns; the timeout follows Prometheus'
/// `X-Prometheus-Scrape-Timeout-Seconds` (less half a second, as blackbox_exporter does).
package struct ProbeEndpoint: Sendable {
    package let context: LookoutContext
    /// `/probe` calls running now through this endpoint.
    private let running = Running()
    /// At most this many `/probe` calls run at once; past it a request is answered 503 with
    /// `Retry-After: 1` (each holds up to 16 MiB of body: the limit bounds what requests can make
    /// Lookout hold, where only the 2,048 connection slots did).
    package let concurrencyLimit: Int
    /// `/probe` calls refused past the limit, since the start (`lookout_probe_endpoint_refused_total`).
    package static let refused = Atomic<Int>(0)
    package static let defaultConcurrencyLimit = 32

    private final class Running: Sendable {
        let count = Atomic<Int>(0)
    }

    /// The client `/probe` calls go through (one attempt each, no breaker kept per target).
    let client: ResilientClient

    package init(context: LookoutContext, concurrencyLimit: Int = ProbeEndpoint.defaultConcurrencyLimit) {
        self.context = context
        self.client = context.monitor.client
        self.concurrencyLimit = concurrencyLimit
    }

    package func handle(_ request: HTTPRequest) async -> HTTPResponse {
        guard running.count.wrappingAdd(1, ordering: .relaxed).newValue <= concurrencyLimit else {
            running.count.wrappingSubtract(1, ordering: .relaxed)
            ProbeEndpoint.refused.wrappingAdd(1, ordering: .relaxed)
            var response = HTTPResponse.text("Too many /probe calls at once (at most \(concurrencyLimit)); retry in a second\n", status: 503)
            response.headers.set("Retry-After", "1")
            return response
        }
        defer { running.count.wrappingSubtract(1, ordering: .relaxed) }
        return await probeNow(request)
    }

    private func probeNow(_ request: HTTPRequest) async -> HTTPResponse {
        let config = context.monitor.config
        let moduleName = request.query["module"] ?? "http_2xx"
        guard let module = config.probeModules[moduleName] else {
            let known = config.probeModules.keys.sorted().joined(separator: ", ")
            return .text("Unknown module \"\(moduleName)\"; configured: \(known.isEmpty ? "none (add probe_modules to the config)" : known)\n", status: 400)
        }
        guard var target = request.query["target"], !target.isEmpty else {
            return .text("Target parameter is missing\n", status: 400)
        }
        if module.kind == .tcp { return await probeTCP(target, module: module, moduleName: moduleName, request: request) }
        if module.kind == .dns { return await probeDNS(target, module: module, moduleName: moduleName, request: request) }
        if module.kind == .icmp { return await probeICMP(target, module: module, moduleName: moduleName, request: request) }
        if module.kind == .grpc { return await probeGRPC(target, module: module, moduleName: moduleName, request: request) }
        if !ASCII.containsIgnoringCase(target, "://") { target = "http://" + target }
        if let problem = ProbeURL.problem(target) { return .text("Bad target: \(problem)\n", status: 400) }
        guard module.allows(target) else {
            return .text("Target \(target) is not allowed by module \(moduleName)\n", status: 403)
        }
        let timeout = ProbeEndpoint.timeout(module, request)
        let started = ContinuousClock.now
        let outcome = await ProbeEndpoint.probe(target, module: module, timeout: timeout, client: client)
        let duration = (ContinuousClock.now - started).seconds
        return HTTPResponse(
            headers: ["Content-Type": "text/plain; version=0.0.4; charset=utf-8"],
            body: .bytes(ProbeEndpoint.render(outcome, module: module, target: target, duration: duration).bytes))
    }

    /// The statuses a module without `valid_status_codes` accepts, and with the redirects it
    /// follows: built once, not for every probe.
    static let success = Set(200...299)
    static let successOrRedirect = Set(200...399)

    /// The module's timeout, or Prometheus' scrape timeout less half a second when shorter.
    static func timeout(_ module: ProbeModule, _ request: HTTPRequest) -> Duration {
        guard let header = request.headers["X-Prometheus-Scrape-Timeout-Seconds"], let seconds = Double(header),
            let scrapeTimeout = Duration.clamping(seconds: max(0.5, seconds - 0.5))
        else { return module.timeout }
        return min(module.timeout, scrapeTimeout)
    }

    /// Probes `target` without keeping anything: a one-off call (no breaker, counters or rows for
    /// arbitrary targets, so 20,000 distinct targets leave nothing behind). Redirects are followed
    /// hop by hop, each hop checked against the module's `allow` patterns before it is requested.
    static func probe(_ target: String, module: ProbeModule, timeout: Duration, client: ResilientClient) async -> Probed {
        // Each target is an upstream of its own, without a breaker or limiter: a scrape always probes.
        var source = SourceConfig(name: "probe", kind: module.kind, url: target, interval: timeout, timeout: timeout)
        // One attempt, as blackbox_exporter makes: a 500 or a refused connection fails in
        // milliseconds, not after backoff waits that made slow-probe alerts fire too.
        source.policy.retry = .none
        // blackbox's oauth2: a client-credentials token fetched for this probe.
        source.policy.auth = module.oauth2.map { .oauth2($0) }
        let validate = ResponseCheck.validator(for: source)
        let clock = ContinuousClock()
        let started = clock.now
        var url = target
        var hops = 0
        var phases = PhaseTimings()
        var attempts: [AttemptRecord] = []
        /// Requests made, one per hop: `probe_retries` counts the attempts past these.
        var requests = 0
        while true {
            let left = timeout - (clock.now - started)
            var transfer = TransferRequest(
                url: url, method: module.method, headers: module.headers.map { ($0.name, $0.value) }, body: module.body.map { Array($0.utf8) },
                timeout: max(.milliseconds(1), left), followRedirects: false, maxResponseBytes: 16 << 20)
            module.applyConnection(to: &transfer)
            // blackbox_exporter never asks for an encoding: `compression` only says how to decode
            // the answer. libcurl decodes what it is told to accept, so the field it would send
            // is taken out again (an empty `Accept-Encoding:` removes it).
            // Nothing reads the body of a plain http module: it is counted and dropped, so 32
            // concurrent probes of a large or compressible target hold none of it.
            transfer.keepsBody = module.kind != .http || !module.failIfBodyMatches.isEmpty || !module.failIfBodyNotMatches.isEmpty
            // A body a regex reads is kept, 16 MiB at most whatever `body_size_limit` says; one
            // only counted stops at `body_size_limit` alone. Past either the probe fails.
            transfer.maxResponseBytes = transfer.keepsBody ? min(module.bodySizeLimit ?? .max, 16 << 20) : module.bodySizeLimit
            transfer.acceptEncoding = module.compression
            transfer.describesTLS = true
            if module.compression != nil, !module.headers.contains(where: { $0.name.lowercased() == "accept-encoding" }) {
                transfer.headers.append(("Accept-Encoding", ""))
            }
            let hop = url
            // A redirect to follow is no verdict yet; the answer that ends the probe is judged by
            // the module's statuses, TLS and body checks, then by its kind's.
            let valid = module.validStatusCodes ?? ProbeEndpoint.success
            let accepted = module.followRedirects ? module.validStatusCodes.map { $0.union(300...399) } ?? ProbeEndpoint.successOrRedirect : valid
            var outcome = await client.callOnce(
                CallRequest(
                    transfer, acceptedStatuses: accepted, deadline: max(.milliseconds(1), left),
                    validate: { result in
                        if module.followRedirects && isRedirect(result) { return nil }
                        return module.check(result, url: hop) ?? validate?(result)
                    }, singleFlight: false),
                policy: source.policy, label: "/probe")
            attempts += outcome.attempts
            requests += 1
            if let final = outcome.final {
                phases = phases.adding(final.phases)
            }
            func finish(_ failure: Failure?) -> Probed {
                if let failure { outcome.failure = failure }
                outcome.url = url  // the last hop's: probe_http_ssl follows the redirects
                outcome.attempts = attempts
                outcome.final?.redirects = hops
                outcome.final?.phases = phases
                return Probed(call: outcome, retries: max(0, attempts.count - requests))
            }
            guard let final = outcome.final, isRedirect(final) else { return finish(nil) }
            let status = final.httpStatus ?? 0
            // blackbox_exporter counts the redirect it declines, not followed or one too many
            // (a loop reads 11 with the default 10; follow_redirects: false reads 1).
            guard module.followRedirects, let next = final.redirectURL else {
                hops += 1
                // A redirect the module lists in valid_status_codes is the answer it wants.
                guard !outcome.ok else { return finish(nil) }
                return finish(
                    Failure(
                        category: .clientError, reason: "redirect_not_followed", httpStatus: status,
                        detail: "the server answered \(status) and module does not follow redirects"))
            }
            guard outcome.ok else { return finish(nil) }
            guard hops < module.maxRedirects else {
                hops += 1
                return finish(
                    Failure(
                        category: .clientError, reason: "too_many_redirects", httpStatus: status,
                        detail: "more than \(module.maxRedirects) redirects; the last one pointed to \(next)"))
            }
            guard ProbeURL.problem(next) == nil, module.allows(next) else {
                return finish(
                    Failure(
                        category: .clientError, reason: "redirect_not_allowed", httpStatus: status,
                        detail: "the server redirected to \(next), which the module's allow patterns do not allow"))
            }
            hops += 1
            url = next
        }
    }

    /// A `/probe` call: the last hop's outcome (with every hop's attempts and phases), and the
    /// retries made beyond one request per hop.
    struct Probed {
        var call: CallOutcome
        var retries: Int
    }

    /// `probe_ip_protocol`'s value for an address: 6 when it is IPv6 (it holds a `:`), else 4.
    static func ipProtocol(_ ip: String) -> Double {
        ip.utf8.contains(UInt8(ascii: ":")) ? 6 : 4
    }

    /// blackbox_exporter's `probe_ip_addr_hash`: FNV-1a (32 bits) over the address's bytes, 4
    /// for IPv4 and 16 for IPv6, so the same address reads the same in both (127.0.0.1 →
    /// 3668918509). An address that does not parse hashes its text.
    static func addressHash(_ ip: String) -> UInt32 {
        var bytes = [UInt8](repeating: 0, count: 16)
        let count: Int
        if inet_pton(AF_INET, ip, &bytes) == 1 {
            count = 4
        } else if inet_pton(AF_INET6, ip, &bytes) == 1 {
            count = 16
        } else {
            bytes = Array(ip.utf8)
            count = bytes.count
        }
        var hash: UInt32 = 2_166_136_261
        for byte in bytes.prefix(count) {
            hash ^= UInt32(byte)
            hash = hash &* 16_777_619
        }
        return hash
    }

    /// Whether `host` is an IPv4 or IPv6 address rather than a name.
    static func isAddress(_ host: String) -> Bool {
        var bytes = [UInt8](repeating: 0, count: 16)
        return inet_pton(AF_INET, host, &bytes) == 1 || inet_pton(AF_INET6, host, &bytes) == 1
    }

    private static func isRedirect(_ result: TransferResult) -> Bool {
        (300...399).contains(result.httpStatus ?? 0)
    }

    /// The blackbox_exporter http prober's metrics, plus `probe_retries` and `probe_failure_info`.
    static func render(_ probed: Probed, module: ProbeModule, target: String, duration: Double) -> ExpositionWriter {
        let outcome = probed.call
        let result = outcome.final
        let phases = result?.phases ?? PhaseTimings()
        let writer = ExpositionWriter()
        func gauge(_ name: String, _ help: String, _ value: Double) {
            writer.single(name, type: .gauge, help: help, value: value)
        }
        gauge("probe_dns_lookup_time_seconds", "Returns the time taken for probe dns lookup in seconds", phases.dns)
        gauge("probe_duration_seconds", "Returns how long the probe took to complete in seconds", duration)
        // A body past `body_size_limit` cannot be matched: blackbox_exporter counts that as a
        // regex failure when the module has regexes.
        let hasRegexes = !module.failIfBodyMatches.isEmpty || !module.failIfBodyNotMatches.isEmpty
        let regexFailed =
            outcome.failure?.reason == "body_mismatch" || outcome.failure?.reason == "header_mismatch"
            || (hasRegexes && result?.exceededSizeLimit == true)
        gauge("probe_failed_due_to_regex", "Indicates if probe failed due to regex", regexFailed ? 1 : 0)
        // No answer at all is 0 in blackbox_exporter's output; an answer without a length, -1.
        let contentLength = result?.httpStatus == nil ? 0 : result?.contentLength ?? -1
        gauge("probe_http_content_length", "Length of http content response", Double(contentLength))
        writer.family("probe_http_duration_seconds", type: .gauge, help: "Duration of http request by phase, summed over all redirects")
        for (phase, value) in [
            ("connect", phases.connect), ("processing", phases.ttfb), ("resolve", phases.dns), ("tls", phases.tls), ("transfer", phases.transfer),
        ] {
            writer.sample("probe_http_duration_seconds", labels: [("phase", phase)], value: value)
        }
        if let text = result?.header("Last-Modified"), let modified = HTTPDate.parse(text) {
            gauge("probe_http_last_modified_timestamp_seconds", "Returns the Last-Modified HTTP response header in unixtime", modified)
        }
        gauge("probe_http_redirects", "The number of redirects", Double(result?.redirects ?? 0))
        let ssl = ASCII.hasPrefixIgnoringCase(outcome.url, "https://") && result?.httpStatus != nil
        gauge("probe_http_ssl", "Indicates if SSL was used for the final redirect", ssl ? 1 : 0)
        gauge("probe_http_status_code", "Response HTTP status code", Double(result?.httpStatus ?? 0))
        // A redirect that ends the probe (not followed, or one too many) is not read as the
        // answer's body: blackbox_exporter 0.23 gives 0 whatever the redirect carried.
        let endedOnRedirect = result?.httpStatus.map { (300...399).contains($0) } ?? false
        let bodyRead = outcome.failure?.reason != "compression_mismatch" && !endedOnRedirect
        // What was read, up to `body_size_limit` (a reader stops there).
        let bodyLength = min(result?.bodyBytes ?? 0, module.bodySizeLimit ?? .max)
        gauge("probe_http_uncompressed_body_length", "Length of uncompressed response body", Double(bodyRead ? bodyLength : 0))
        let version = result?.httpVersion.flatMap(Double.init) ?? 0
        gauge("probe_http_version", "Returns the version of HTTP of the probe response", version)
        writeAddress(outcome, into: writer)
        // Only with an answer over TLS, as blackbox_exporter (its `resp.TLS`): a handshake that
        // failed verification (wrong host, expired) leaves no TLS series, however far it got.
        if ssl, let result { writeTLS(result, module: module, into: writer) }
        writeVerdict(probed, into: writer)
        return writer
    }

    /// The TLS series of an answer over TLS (http) or a handshake (tcp), as blackbox_exporter
    /// writes them: a handshake that failed verification (wrong host, expired) leaves none.
    static func writeTLS(_ result: TransferResult, module: ProbeModule, into writer: ExpositionWriter) {
        // Its last-chain expiry is the earliest expiry of the verified chain; libcurl shows the
        // chain the server presented, which is the same unless the trust store supplies a
        // certificate that expires first.
        let expiry = result.certificateExpiry.map { $0.timeIntervalSince1970.rounded() }
        guard let certificate = result.peerCertificate, let version = result.tlsVersion else {
            if let expiry { writer.single("probe_ssl_earliest_cert_expiry", type: .gauge, help: "Returns last SSL chain expiry in unixtime", value: expiry) }
            return
        }
        writeTLS(earliestExpiry: expiry, lastChainExpiry: expiry, certificate: certificate, version: version, module: module, into: writer)
    }

    /// blackbox's TLS series after a handshake: the presented chain's earliest expiry, the
    /// verified chain's, the leaf and the protocol.
    static func writeTLS(
        earliestExpiry: Double?, lastChainExpiry: Double?, certificate: PeerCertificate, version: String, module: ProbeModule, into writer: ExpositionWriter
    ) {
        func gauge(_ name: String, _ help: String, _ value: Double) {
            writer.single(name, type: .gauge, help: help, value: value)
        }
        if let earliestExpiry {
            gauge("probe_ssl_earliest_cert_expiry", "Returns last SSL chain expiry in unixtime", earliestExpiry)
        }
        // Unverified (insecure_skip_verify), there is no verified chain: Go reports its zero
        // time, 0001-01-01, as blackbox_exporter does.
        if module.insecureSkipVerify {
            gauge("probe_ssl_last_chain_expiry_timestamp_seconds", "Returns last SSL chain expiry in timestamp", -62_135_596_800)
        } else if let lastChainExpiry {
            gauge("probe_ssl_last_chain_expiry_timestamp_seconds", "Returns last SSL chain expiry in timestamp", lastChainExpiry)
        }
        writer.family("probe_ssl_last_chain_info", type: .gauge, help: "Contains SSL leaf certificate information")
        writer.sample(
            "probe_ssl_last_chain_info",
            labels: [
                ("fingerprint_sha256", certificate.fingerprintSHA256), ("issuer", certificate.issuer), ("subject", certificate.subject),
                ("subjectalternative", certificate.dnsNames),
            ], value: 1)
        writer.family("probe_tls_version_info", type: .gauge, help: "Returns the TLS version used or NaN when unknown")
        writer.sample("probe_tls_version_info", labels: [("version", version)], value: 1)
    }

    /// `probe_ip_addr_hash` and `probe_ip_protocol`. A refused connection has no peer address,
    /// but a literal one is known (blackbox_exporter resolves before it connects, so it reports
    /// one either way).
    static func writeAddress(_ outcome: CallOutcome, into writer: ExpositionWriter) {
        // The URL is parsed only when libcurl connected nowhere (Foundation's parser is not free).
        func literal() -> String? {
            URLParts(outcome.url)?.bareHost.flatMap { ProbeEndpoint.isAddress($0) ? $0 : nil }
        }
        if let ip = outcome.final?.primaryIP ?? literal() {
            writer.single(
                "probe_ip_addr_hash", type: .gauge, help: "Specifies the hash of IP address. It's useful to detect if the IP address changes.",
                value: Double(ProbeEndpoint.addressHash(ip)))
            writer.single(
                "probe_ip_protocol", type: .gauge, help: "Specifies whether probe ip protocol is IP4 or IP6", value: ProbeEndpoint.ipProtocol(ip)
            )
        } else {
            // The name did not resolve (or not in the one family allowed): blackbox writes zeros.
            writer.single(
                "probe_ip_addr_hash", type: .gauge, help: "Specifies the hash of IP address. It's useful to detect if the IP address changes.", value: 0)
            writer.single("probe_ip_protocol", type: .gauge, help: "Specifies whether probe ip protocol is IP4 or IP6", value: 0)
        }
    }

    /// `probe_success`, and Lookout's `probe_retries` and `probe_failure_info`.
    static func writeVerdict(_ probed: Probed, into writer: ExpositionWriter) {
        writer.single("probe_success", type: .gauge, help: "Displays whether or not the probe was a success", value: probed.call.ok ? 1 : 0)
        writer.single("probe_retries", type: .gauge, help: "Retries made by Lookout's resilient client during this probe", value: Double(probed.retries))
        writer.family("probe_failure_info", type: .gauge, help: "Why the probe failed (Lookout's category and reason); absent on success")
        if let failure = probed.call.failure {
            writer.sample("probe_failure_info", labels: [("category", failure.category.rawValue), ("reason", failure.reason)], value: 1)
        }
    }
}

/// The dates of HTTP fields (RFC 9110 section 5.6.7): the preferred IMF-fixdate and the two
/// obsolete forms senders still use.
enum HTTPDate {
    /// Behind a lock: a formatter is not safe to use from two threads at once.
    private static let formatters = Mutex(
        ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"].map { format in
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = format
            return formatter
        })

    /// Seconds since 1970, or nil when `text` is none of the three forms.
    static func parse(_ text: String) -> Double? {
        formatters.withLock { formatters in
            for formatter in formatters {
                if let date = formatter.date(from: text) { return date.timeIntervalSince1970 }
            }
            return nil
        }
    }
}
