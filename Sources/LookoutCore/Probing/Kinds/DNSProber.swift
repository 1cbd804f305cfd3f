import ClientSocket
import DNSLookup
import Foundation
import ResilientHTTP

extension SourceKind {
    package static let dns = SourceKind(declaring: "dns")
}

/// `kind: dns`, `url: dns://SERVER[:PORT]/NAME[?type=A&transport=udp&recursion=true]`: one
/// question to one DNS server, which passes when the server answers NOERROR with at least one
/// record. The resolvers everything depends on, and the names a product is reached by.
/// `transport=tls` asks over DNS over TLS (port 853 unless given), the certificate checked for
/// the server's address against `ca_file` or the system's store.
///
/// A query is one attempt: no retries, no circuit breaker (a DNS server is asked about one name
/// per interval, and a monitor keeps asking).
package enum DNSProber: Prober {
    package static let kind = SourceKind.dns
    package static let summary = "a DNS answer (NOERROR, at least one record) from a given server"
    package static let isHTTPRequest = false
    package static let usesTransferThreads = false

    package static func urlProblem(_ url: String) -> String? {
        switch DNSTarget.parse(url) {
        case .success: nil
        case .failure(let problem): problem.message
        }
    }

    package static func probe(_ source: SourceConfig, with prober: SourceProber, breakerCountsFailures: Bool) async -> ProbeResult {
        let startedMs = Timestamp.nowMs()
        guard case .success(let target) = DNSTarget.parse(source.url) else {
            return ProbeResult(source: source.name, timestampMs: startedMs, ok: false, failure: Failure(category: .clientError, reason: "dns_bad_query"))
        }
        let query = target.query(timeout: source.timeout, caFile: source.caFile)
        let outcome = await DNSResolver.send(query)
        var result = ProbeResult(source: source.name, timestampMs: startedMs, ok: false)
        switch outcome {
        case .failure(let error):
            result.failure = failure(error, query)
            result.durationSeconds = Double(Timestamp.nowMs() - startedMs) / 1000
        case .success(let answer):
            result.durationSeconds = answer.seconds
            result.attemptSeconds = answer.seconds
            result.failure = failure(answer, query, module: source.module?.dns)
            result.ok = result.failure == nil
        }
        if result.failure != nil { result.callKind = .failedWithoutRetry }
        prober.report(result, for: source)
        return result
    }

    package static func failure(_ error: DNSQueryError, _ query: DNSQuery) -> Failure {
        switch error {
        case .timeout:
            Failure(category: .timeout, reason: "dns_timeout", detail: "no answer from \(query.server):\(query.port) in time")
        case .network(let text):
            Failure(category: .transient, reason: "dns_unreachable", detail: "\(query.server):\(query.port): \(text)")
        case .malformed(let text):
            Failure(category: .invalidResponse, reason: "dns_malformed", detail: "the DNS server \(query.server):\(query.port) answered badly: \(text)")
        case .truncated(let text):
            Failure(category: .invalidResponse, reason: "dns_truncated", detail: "\(query.server):\(query.port): \(text)")
        case .tls(let reason, let text):
            Failure(category: .tlsError, reason: reason, detail: "\(query.server):\(query.port): \(text)")
        case .badQuery(let text):
            Failure(category: .clientError, reason: "dns_bad_query", detail: text)
        }
    }

    /// With a dns `module`, what it says passes (`valid_rcodes: [NXDOMAIN]` for a name that
    /// must not exist; its record checks); an rcode it accepts is no failure even with no record.
    static func failure(_ answer: DNSAnswer, _ query: DNSQuery, module: DNSModuleSettings?) -> Failure? {
        guard let module else { return failure(answer, query) }
        guard let problem = module.problem(answer) else { return nil }
        guard module.validRcodes.contains(answer.rcodeName) else {
            return failure(answer, query) ?? Failure(category: .invalidResponse, reason: "dns_rcode", detail: problem)
        }
        return Failure(category: .invalidResponse, reason: "dns_record_mismatch", detail: "\(query.name) \(query.type): \(problem)")
    }

    /// Nil when the answer is NOERROR with a record; otherwise what is wrong, in the server's terms.
    static func failure(_ answer: DNSAnswer, _ query: DNSQuery) -> Failure? {
        let asked = "\(query.name) \(query.type)"
        switch answer.rcode {
        case 0:
            guard answer.answer.isEmpty else { return nil }
            return Failure(category: .invalidResponse, reason: "dns_no_answer", detail: "the DNS server has no \(query.type) record for \(query.name)")
        case 2:
            return Failure(category: .serverError, reason: "dns_servfail", detail: "the DNS server failed to answer \(asked) (SERVFAIL)")
        case 3:
            return Failure(category: .invalidResponse, reason: "dns_nxdomain", detail: "the DNS server says \(query.name) does not exist (NXDOMAIN)")
        case 5:
            return Failure(category: .clientError, reason: "dns_refused", detail: "the DNS server refused to answer \(asked) (REFUSED)")
        default:
            return Failure(
                category: .invalidResponse, reason: "dns_\(answer.rcodeName.lowercased())", detail: "the DNS server answered \(asked) with \(answer.rcodeName)")
        }
    }
}

/// A `dns://` source URL, read.
struct DNSTarget: Equatable {
    var server: String
    var port: UInt16
    var name: String
    var type = "A"
    var recordClass = "IN"
    var overTCP = false
    /// DNS over TLS (`transport=tls`).
    var overTLS = false
    var recursionDesired = true

    struct Problem: Error {
        let message: String
    }

    static let types: Set<String> = ["A", "AAAA", "CNAME", "MX", "NS", "PTR", "SOA", "SRV", "TXT", "CAA", "DS", "DNSKEY", "HTTPS", "SVCB"]

    func query(timeout: Duration, caFile: String? = nil) -> DNSQuery {
        var query = DNSQuery(
            server: server, port: port, name: name, type: type, recordClass: recordClass, overTCP: overTCP || overTLS, recursionDesired: recursionDesired,
            timeout: timeout)
        if overTLS {
            var settings = TLSSettings()
            settings.caFile = caFile
            query.tls = settings
        }
        return query
    }

    static func parse(_ text: String) -> Result<DNSTarget, Problem> {
        let usage = "(use dns://SERVER[:PORT]/NAME?type=A, e.g. dns://9.9.9.9/example.com?type=MX)"
        if let problem = EndpointURL.unprintableProblem(text) { return .failure(Problem(message: problem)) }
        guard let parts = URLParts(text), ASCII.equalIgnoringCase(parts.scheme, "dns"), let host = parts.host, !host.isEmpty, let server = parts.bareHost
        else {
            return .failure(Problem(message: "\"\(text)\" is not a dns:// address \(usage)"))
        }
        guard IPAddress.isLiteral(server) else {
            return .failure(Problem(message: "\"\(text)\": the server must be an IP address, not \(host) (a name would need a resolver of its own)"))
        }
        let items = parts.queryItems
        let tls = items.contains { $0.name == "transport" && $0.value?.lowercased() == "tls" }
        let port = parts.port ?? (tls ? 853 : 53)
        guard (1...65535).contains(port) else { return .failure(Problem(message: "\"\(text)\" names port \(port); a port is 1 to 65535")) }
        // A path whose escapes decode to no UTF-8 names no domain (`%FF`), as Foundation's nil path did.
        let name = parts.path.removingPercentEncoding.map { String($0.dropFirst()) } ?? ""
        guard !name.isEmpty, name.count <= 253, !name.contains("/") else {
            return .failure(Problem(message: "\"\(text)\" names no domain to ask about \(usage)"))
        }
        var target = DNSTarget(server: server, port: UInt16(port), name: name)
        for item in items {
            let value = item.value ?? ""
            switch item.name {
            case "type":
                guard types.contains(value.uppercased()) else {
                    return .failure(Problem(message: "\"\(value)\" is not a record type Lookout asks for (use \(types.sorted().joined(separator: ", ")))"))
                }
                target.type = value.uppercased()
            case "class":
                guard ["IN", "CH"].contains(value.uppercased()) else { return .failure(Problem(message: "\"\(value)\" is not a class (use IN or CH)")) }
                target.recordClass = value.uppercased()
            case "transport":
                guard ["udp", "tcp", "tls"].contains(value.lowercased()) else {
                    return .failure(Problem(message: "\"\(value)\" is not a transport (use udp, tcp or tls)"))
                }
                target.overTCP = value.lowercased() == "tcp"
                target.overTLS = value.lowercased() == "tls"
            case "recursion":
                guard ["true", "false"].contains(value.lowercased()) else { return .failure(Problem(message: "recursion must be true or false")) }
                target.recursionDesired = value.lowercased() == "true"
            default:
                return .failure(Problem(message: "\"\(item.name)\" is not a dns:// option (use type, class, transport or recursion)"))
            }
        }
        return .success(target)
    }
}

/// IP address literals, checked by the C library.
enum IPAddress {
    static func isLiteral(_ text: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, text, &v4) == 1 || inet_pton(AF_INET6, text, &v6) == 1
    }
}
