import Foundation
import LookoutCore
import MicroHTTPServer
import ResilientHTTP

/// blackbox_exporter's `tcp` prober at `/probe`: `target=host:port`, one connection, nothing
/// sent; its series and values. With `tls: true` or a `query_response` it is a conversation of
/// our own (`probeTCPExchange`).
extension ProbeEndpoint {
    func probeTCP(_ target: String, module: ProbeModule, moduleName: String, request: HTTPRequest) async -> HTTPResponse {
        // The target as blackbox takes it, host:port; `allow` patterns see it as tcp://host:port.
        let address = "tcp://" + target
        if let problem = TCPProber.urlProblem(address) { return .text("Bad target: \(problem)\n", status: 400) }
        guard module.allows(address) else {
            return .text("Target \(target) is not allowed by module \(moduleName)\n", status: 403)
        }
        let timeout = ProbeEndpoint.timeout(module, request)
        // A conversation, or a handshake whose verified chain blackbox reports
        // (`probe_ssl_last_chain_expiry_timestamp_seconds`): on a socket of our own, where
        // OpenSSL shows the chain it verified, not only the one presented.
        if !module.tcpQueryResponse.isEmpty || module.tcpTLS { return await probeTCPExchange(target, module: module, timeout: timeout) }
        let started = ContinuousClock.now
        var transfer = TransferRequest(url: "http://" + target, timeout: timeout)
        module.applyConnection(to: &transfer)
        transfer.connectOnly = true
        let policy = UpstreamPolicy(retry: .none, rateLimit: nil)
        let outcome = await client.callOnce(CallRequest(transfer, deadline: timeout, singleFlight: false), policy: policy, label: "/probe")
        let duration = (ContinuousClock.now - started).seconds
        let probed = Probed(call: outcome, retries: max(0, outcome.attempts.count - 1))
        return HTTPResponse(
            headers: ["Content-Type": "text/plain; version=0.0.4; charset=utf-8"],
            body: .bytes(ProbeEndpoint.renderTCP(probed, duration: duration).bytes))
    }

    /// The tcp prober's series, as blackbox_exporter 0.23 writes them.
    static func renderTCP(_ probed: Probed, duration: Double) -> ExpositionWriter {
        let result = probed.call.final
        let writer = ExpositionWriter()
        func gauge(_ name: String, _ help: String, _ value: Double) {
            writer.single(name, type: .gauge, help: help, value: value)
        }
        gauge("probe_dns_lookup_time_seconds", "Returns the time taken for probe dns lookup in seconds", result?.phases.dns ?? 0)
        gauge("probe_duration_seconds", "Returns how long the probe took to complete in seconds", duration)
        gauge("probe_failed_due_to_regex", "Indicates if probe failed due to regex", 0)
        writeAddress(probed.call, into: writer)
        writeVerdict(probed, into: writer)
        return writer
    }
}
