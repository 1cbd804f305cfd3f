import Foundation
import ICMPEcho
import LookoutCore
import MicroHTTPServer
import ResilientHTTP

/// blackbox_exporter's `icmp` prober at `/probe`: `target=HOST` (a name is resolved, IPv6 first
/// unless `preferred_ip_protocol: ip4`, as blackbox does), one echo request, its series and
/// values as blackbox_exporter 0.23 writes them.
extension ProbeEndpoint {
    func probeICMP(_ target: String, module: ProbeModule, moduleName: String, request: HTTPRequest) async -> HTTPResponse {
        let settings = module.icmp ?? ICMPModuleSettings()
        let host = target.hasPrefix("[") && target.hasSuffix("]") ? String(target.dropFirst().dropLast()) : target
        guard !host.isEmpty, !host.contains("/"), !host.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F }) else {
            return .text("Bad target: \(target) is not a host\n", status: 400)
        }
        // `allow` patterns see the target as icmp://host.
        guard module.allows("icmp://\(target)") else {
            return .text("Target \(target) is not allowed by module \(moduleName)\n", status: 403)
        }
        let timeout = ProbeEndpoint.timeout(module, request)
        let started = ContinuousClock.now
        var outcome: Result<EchoReply, EchoError>?
        let resolved = await ICMPEcho.resolve(host, preferIPv6: settings.preferIPv6)
        if let resolved {
            outcome = await ICMPEcho.send(
                EchoRequest(
                    address: resolved.address, timeout: timeout, payloadSize: settings.payloadSize, ttl: settings.ttl, dontFragment: settings.dontFragment,
                    source: module.sourceAddress))
        }
        let duration = (ContinuousClock.now - started).seconds
        let writer = ExpositionWriter()
        func gauge(_ name: String, _ help: String, _ value: Double) {
            writer.single(name, type: .gauge, help: help, value: value)
        }
        let reply = try? outcome?.get()
        gauge("probe_dns_lookup_time_seconds", "Returns the time taken for probe dns lookup in seconds", resolved?.seconds ?? 0)
        gauge("probe_duration_seconds", "Returns how long the probe took to complete in seconds", duration)
        writer.family("probe_icmp_duration_seconds", type: .gauge, help: "Duration of icmp request by phase")
        writer.sample("probe_icmp_duration_seconds", labels: [("phase", "resolve")], value: resolved?.seconds ?? 0)
        writer.sample("probe_icmp_duration_seconds", labels: [("phase", "rtt")], value: reply?.rttSeconds ?? 0)
        writer.sample("probe_icmp_duration_seconds", labels: [("phase", "setup")], value: reply?.setupSeconds ?? 0)
        if let hops = reply?.hopLimit { gauge("probe_icmp_reply_hop_limit", "Replied packet hop limit (TTL for ipv4)", Double(hops)) }
        if let address = resolved?.address {
            gauge(
                "probe_ip_addr_hash", "Specifies the hash of IP address. It's useful to detect if the IP address changes.",
                Double(ProbeEndpoint.addressHash(address)))
            gauge("probe_ip_protocol", "Specifies whether probe ip protocol is IP4 or IP6", ProbeEndpoint.ipProtocol(address))
        } else {
            gauge("probe_ip_protocol", "Specifies whether probe ip protocol is IP4 or IP6", 0)
        }
        var failure: Failure?
        switch outcome {
        case nil: failure = Failure(category: .networkUnreachable, reason: "dns_failure", detail: "\(host) does not resolve")
        case .failure(let error)?: failure = ICMPProber.failure(error, host: host)
        case .success?: failure = nil
        }
        let call = CallOutcome(
            upstream: "/probe", url: "icmp://\(target)", startedAtMs: 0, final: nil, failure: failure, attempts: [], durationSeconds: duration,
            upgradedToHTTPS: false, gaveUp: nil, cancelled: false, breaker: nil)
        ProbeEndpoint.writeVerdict(Probed(call: call, retries: 0), into: writer)
        return HTTPResponse(headers: ["Content-Type": "text/plain; version=0.0.4; charset=utf-8"], body: .bytes(writer.bytes))
    }
}
