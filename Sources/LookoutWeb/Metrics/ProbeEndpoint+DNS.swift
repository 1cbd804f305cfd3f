import ClientSocket
import DNSLookup
import Foundation
import LookoutCore
import MicroHTTPServer
import ResilientHTTP

/// blackbox_exporter's `dns` prober at `/probe`: `target=SERVER[:PORT]` (an IP address; port 53
/// by default), one question, its series and values as blackbox_exporter 0.23 writes them.
extension ProbeEndpoint {
    func probeDNS(_ target: String, module: ProbeModule, moduleName: String, request: HTTPRequest) async -> HTTPResponse {
        guard let settings = module.dns else { return .text("Module \(moduleName) has no dns settings\n", status: 400) }
        guard let (server, port) = ProbeEndpoint.dnsServer(target, defaultPort: settings.overTLS ? 853 : 53) else {
            return .text("Bad target: \(target) is not IP[:PORT] (the DNS server's address; Lookout does not resolve a server's name)\n", status: 400)
        }
        // `allow` patterns see the target as dns://host:port.
        let shown = server.utf8.contains(UInt8(ascii: ":")) ? "[\(server)]" : server
        guard module.allows("dns://\(shown):\(port)") else {
            return .text("Target \(target) is not allowed by module \(moduleName)\n", status: 403)
        }
        let timeout = ProbeEndpoint.timeout(module, request)
        let started = ContinuousClock.now
        var query = DNSQuery(
            server: server, port: port, name: settings.queryName, type: settings.queryType, recordClass: settings.queryClass,
            overTCP: settings.overTCP, recursionDesired: settings.recursionDesired, timeout: timeout, source: module.sourceAddress)
        query.tls = settings.overTLS ? ProbeEndpoint.tlsSettings(module) : nil
        let outcome = await DNSResolver.send(query)
        let duration = (ContinuousClock.now - started).seconds
        return HTTPResponse(
            headers: ["Content-Type": "text/plain; version=0.0.4; charset=utf-8"],
            body: .bytes(ProbeEndpoint.renderDNS(outcome, settings: settings, query: query, duration: duration).bytes))
    }

    /// `IP`, `IP:PORT` or `[IPv6]:PORT`; nil when the host is not an address.
    static func dnsServer(_ target: String, defaultPort: UInt16 = 53) -> (String, UInt16)? {
        var host = target
        var port = defaultPort
        if target.hasPrefix("[") {
            guard let close = target.firstIndex(of: "]") else { return nil }
            host = String(target[target.index(after: target.startIndex)..<close])
            let rest = target[target.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":"), let value = UInt16(rest.dropFirst()), value > 0 else { return nil }
                port = value
            }
        } else if target.filter({ $0 == ":" }).count == 1, let colon = target.firstIndex(of: ":") {
            host = String(target[..<colon])
            guard let value = UInt16(target[target.index(after: colon)...]), value > 0 else { return nil }
            port = value
        }
        return isAddress(host) ? (host, port) : nil
    }

    /// The dns prober's series, in blackbox_exporter's order, with Lookout's verdict series.
    static func renderDNS(_ outcome: Result<DNSAnswer, DNSQueryError>, settings: DNSModuleSettings, query: DNSQuery, duration: Double) -> ExpositionWriter {
        let writer = ExpositionWriter()
        func gauge(_ name: String, _ help: String, _ value: Double) {
            writer.single(name, type: .gauge, help: help, value: value)
        }
        let answer = try? outcome.get()
        var failure: Failure?
        switch outcome {
        case .failure(let error): failure = DNSProber.failure(error, query)
        case .success(let answer):
            if let problem = settings.problem(answer) { failure = Failure(category: .invalidResponse, reason: "dns_answer_mismatch", detail: problem) }
        }
        gauge("probe_dns_additional_rrs", "Returns number of entries in the additional resource record list", Double(answer?.additional.count ?? 0))
        gauge("probe_dns_answer_rrs", "Returns number of entries in the answer resource record list", Double(answer?.answer.count ?? 0))
        gauge("probe_dns_authority_rrs", "Returns number of entries in the authority resource record list", Double(answer?.authority.count ?? 0))
        writer.family("probe_dns_duration_seconds", type: .gauge, help: "Duration of DNS request by phase")
        // ldns connects and asks in one call: the whole exchange is the request. Over TLS the
        // connection and handshake come first, as blackbox counts them.
        writer.sample("probe_dns_duration_seconds", labels: [("phase", "connect")], value: answer?.connectSeconds ?? 0)
        writer.sample("probe_dns_duration_seconds", labels: [("phase", "request")], value: answer?.seconds ?? duration)
        writer.sample("probe_dns_duration_seconds", labels: [("phase", "resolve")], value: 0)
        gauge("probe_dns_lookup_time_seconds", "Returns the time taken for probe dns lookup in seconds", 0)
        gauge("probe_dns_query_succeeded", "Displays whether or not the query was executed successfully", answer == nil ? 0 : 1)
        if settings.queryType == "SOA", let answer {
            gauge("probe_dns_serial", "Returns the serial number of the zone", Double(answer.answer.lazy.compactMap(\.serial).last ?? 0))
        }
        gauge("probe_duration_seconds", "Returns how long the probe took to complete in seconds", duration)
        gauge("probe_ip_addr_hash", "Specifies the hash of IP address. It's useful to detect if the IP address changes.", Double(addressHash(query.server)))
        gauge("probe_ip_protocol", "Specifies whether probe ip protocol is IP4 or IP6", ipProtocol(query.server))
        let call = CallOutcome(
            upstream: "/probe", url: "dns://\(query.server)", startedAtMs: 0, final: nil, failure: failure, attempts: [], durationSeconds: duration,
            upgradedToHTTPS: false, gaveUp: nil, cancelled: false, breaker: nil)
        writeVerdict(Probed(call: call, retries: 0), into: writer)
        return writer
    }
}
