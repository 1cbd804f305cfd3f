import Foundation
import ICMPEcho
import ResilientHTTP

extension SourceKind {
    package static let icmp = SourceKind(declaring: "icmp")
}

/// `kind: icmp`, `url: icmp://HOST`: one echo request ("ping"), which passes when its reply
/// comes back within the timeout. A host with nothing to connect to, or the path to one.
///
/// Sent on an unprivileged ICMP socket where the kernel allows it (`net.ipv4.ping_group_range`),
/// on a raw one otherwise (root or CAP_NET_RAW); when neither may be opened, the probe fails
/// saying so. One attempt per probe, as for DNS.
package enum ICMPProber: Prober {
    package static let kind = SourceKind.icmp
    package static let summary = "an ICMP echo reply from host"
    package static let isHTTPRequest = false
    package static let usesTransferThreads = false

    package static func urlProblem(_ url: String) -> String? {
        if let problem = EndpointURL.unprintableProblem(url) { return problem }
        guard let parts = URLParts(url), parts.scheme.lowercased() == "icmp", let host = parts.host, !host.isEmpty else {
            return "\"\(url)\" is not an icmp:// address (use icmp://host, e.g. icmp://10.0.0.1 or icmp://db.internal)"
        }
        guard parts.port == nil, parts.decodedPath.isEmpty || parts.decodedPath == "/", parts.query == nil, parts.userInfo == nil else {
            return "\"\(url)\" has more than a host (use icmp://host)"
        }
        return nil
    }

    /// The host of an `icmp://` URL, without IPv6 brackets.
    static func host(_ url: String) -> String {
        URLParts(url)?.bareHost ?? ""
    }

    package static func probe(_ source: SourceConfig, with prober: SourceProber, breakerCountsFailures: Bool) async -> ProbeResult {
        let startedMs = Timestamp.nowMs()
        let started = ContinuousClock.now
        let host = host(source.url)
        var result = ProbeResult(source: source.name, timestampMs: startedMs, ok: false)
        if let (address, _) = await ICMPEcho.resolve(host, preferIPv6: false) {
            switch await ICMPEcho.send(EchoRequest(address: address, timeout: source.timeout)) {
            case .success(let reply):
                result.ok = true
                result.attemptSeconds = reply.rttSeconds
            case .failure(let error):
                result.failure = failure(error, host: host)
            }
        } else {
            result.failure = Failure(category: .networkUnreachable, reason: "dns_failure", detail: "\(host) does not resolve")
        }
        let elapsed = ContinuousClock.now - started
        result.durationSeconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        if result.failure != nil { result.callKind = .failedWithoutRetry }
        prober.report(result, for: source)
        return result
    }

    package static func failure(_ error: EchoError, host: String) -> Failure {
        switch error {
        case .timeout: Failure(category: .timeout, reason: "icmp_timeout", detail: "no echo reply from \(host) in time")
        case .network(let text): Failure(category: .networkUnreachable, reason: "network_unreachable", detail: "\(host): \(text)")
        case .notPermitted(let text): Failure(category: .clientError, reason: "icmp_not_permitted", detail: text)
        case .badAddress(let text): Failure(category: .clientError, reason: "icmp_bad_address", detail: "\(text) is not an address")
        }
    }
}
