import ClientSocket
import Foundation
import LookoutCore
import MicroHTTPServer
import ResilientHTTP
import TCPExchange

/// blackbox_exporter's `tcp` prober with `query_response` at `/probe`: a line-based conversation
/// (expect a line matching a regular expression, send a line, with what it captured), its
/// series and values, `probe_failed_due_to_regex` among them.
extension ProbeEndpoint {
    func probeTCPExchange(_ target: String, module: ProbeModule, timeout: Duration) async -> HTTPResponse {
        let started = ContinuousClock.now
        let parts = URLParts("tcp://" + target)
        let host = parts?.bareHost ?? ""
        let port = UInt16(clamping: parts?.port ?? 0)
        let steps = module.tcpQueryResponse.map { TCPExchange.Step(expect: $0.expect, send: $0.send, startTLS: $0.startTLS) }
        let outcome = await TCPExchange.run(
            host: host, port: port, steps: steps, timeout: timeout, preferIPv6: module.onlyIPVersion == 6, source: module.sourceAddress,
            tls: ProbeEndpoint.tlsSettings(module), tlsFromStart: module.tcpTLS)
        let writer = ExpositionWriter()
        func gauge(_ name: String, _ help: String, _ value: Double) {
            writer.single(name, type: .gauge, help: help, value: value)
        }
        gauge("probe_dns_lookup_time_seconds", "Returns the time taken for probe dns lookup in seconds", outcome.resolveSeconds)
        gauge("probe_duration_seconds", "Returns how long the probe took to complete in seconds", (ContinuousClock.now - started).seconds)
        gauge("probe_failed_due_to_regex", "Indicates if probe failed due to regex", outcome.failedDueToRegex ? 1 : 0)
        let hash = outcome.peer.map { Double(ProbeEndpoint.addressHash($0)) } ?? 0
        gauge("probe_ip_addr_hash", "Specifies the hash of IP address. It's useful to detect if the IP address changes.", hash)
        gauge("probe_ip_protocol", "Specifies whether probe ip protocol is IP4 or IP6", Double(outcome.ipVersion ?? 0))
        // After a handshake (from the start or STARTTLS), even when a later step failed, as blackbox.
        if let handshake = outcome.tls, let certificate = PeerCertificate(der: handshake.leafDER) {
            ProbeEndpoint.writeTLS(
                earliestExpiry: handshake.earliestExpiry.map { Double($0) }, lastChainExpiry: handshake.verifiedChainExpiry.map { Double($0) },
                certificate: certificate, version: handshake.version, module: module, into: writer)
        }
        gauge("probe_success", "Displays whether or not the probe was a success", outcome.problem == nil ? 1 : 0)
        gauge("probe_retries", "Retries made by Lookout's resilient client during this probe", 0)
        writer.family("probe_failure_info", type: .gauge, help: "Why the probe failed (Lookout's category and reason); absent on success")
        if let failure = Failure(outcome) {
            writer.sample("probe_failure_info", labels: [("category", failure.category.rawValue), ("reason", failure.reason)], value: 1)
        }
        return HTTPResponse(headers: ["Content-Type": "text/plain; version=0.0.4; charset=utf-8"], body: .bytes(writer.bytes))
    }

    /// A module's `tls_config` for a conversation of our own.
    static func tlsSettings(_ module: ProbeModule) -> TLSSettings {
        var settings = TLSSettings()
        settings.serverName = module.serverName
        settings.caFile = module.caFile
        settings.certificateFile = module.clientCertificate?.certificate
        settings.keyFile = module.clientCertificate?.key
        settings.verify = !module.insecureSkipVerify
        settings.minimumMinor = module.tlsMinimumMinor
        settings.maximumMinor = module.tlsMaximumMinor
        return settings
    }
}
