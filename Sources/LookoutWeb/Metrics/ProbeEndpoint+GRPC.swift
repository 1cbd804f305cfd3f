import Foundation
import LookoutCore
import MicroHTTPServer
import ResilientHTTP

/// blackbox_exporter's `grpc` prober at `/probe`: `target=HOST:PORT`, the standard health check of
/// the module's `service`, its series and values as blackbox_exporter 0.23 writes them.
extension ProbeEndpoint {
    func probeGRPC(_ target: String, module: ProbeModule, moduleName: String, request: HTTPRequest) async -> HTTPResponse {
        let settings = module.grpc ?? GRPCModuleSettings()
        let address = "\(settings.tls ? "grpcs" : "grpc")://\(target)"
        if let problem = GRPCProber.urlProblem(address) { return .text("Bad target: \(problem)\n", status: 400) }
        // `allow` patterns see the target as grpc://host:port (grpcs:// with tls).
        guard module.allows(address) else { return .text("Target \(target) is not allowed by module \(moduleName)\n", status: 403) }
        let timeout = ProbeEndpoint.timeout(module, request)
        let started = ContinuousClock.now
        var transfer = TransferRequest(url: address, timeout: timeout)
        GRPCHealth.prepare(&transfer, url: address, service: settings.service)
        module.applyConnection(to: &transfer)
        let policy = UpstreamPolicy(retry: .none, rateLimit: nil)
        let call = await client.callOnce(CallRequest(transfer, deadline: timeout, singleFlight: false), policy: policy, label: "/probe")
        let duration = (ContinuousClock.now - started).seconds
        let result = call.final
        let answer = result.map(GRPCHealth.answer)
        // What blackbox reports when no answer came: UNAVAILABLE, or DEADLINE_EXCEEDED.
        let status = answer?.grpcStatus ?? (call.failure?.category == .timeout ? 4 : 14)
        let serving = status == 0 ? (answer?.servingStatus ?? 0) : nil
        let writer = ExpositionWriter()
        func gauge(_ name: String, _ help: String, _ value: Double) {
            writer.single(name, type: .gauge, help: help, value: value)
        }
        gauge("probe_dns_lookup_time_seconds", "Returns the time taken for probe dns lookup in seconds", result?.phases.dns ?? 0)
        gauge("probe_duration_seconds", "Returns how long the probe took to complete in seconds", duration)
        writer.family("probe_grpc_duration_seconds", type: .gauge, help: "Duration of gRPC request by phase")
        writer.sample(
            "probe_grpc_duration_seconds", labels: [("phase", "check")], value: max(0, (result?.totalSeconds ?? duration) - (result?.phases.dns ?? 0)))
        writer.sample("probe_grpc_duration_seconds", labels: [("phase", "resolve")], value: result?.phases.dns ?? 0)
        writer.family("probe_grpc_healthcheck_response", type: .gauge, help: "Response HealthCheck response")
        for (number, name) in GRPCHealth.servingStatuses.enumerated().sorted(by: { $0.element < $1.element }) {
            writer.sample("probe_grpc_healthcheck_response", labels: [("serving_status", name)], value: serving == number ? 1 : 0)
        }
        gauge("probe_grpc_ssl", "Indicates if SSL was used for the connection", settings.tls && result?.httpStatus != nil ? 1 : 0)
        gauge("probe_grpc_status_code", "Response gRPC status code", Double(status))
        ProbeEndpoint.writeAddress(call, into: writer)
        gauge(
            "probe_ssl_earliest_cert_expiry", "Returns last SSL chain expiry in unixtime",
            result?.certificateExpiry.map { $0.timeIntervalSince1970.rounded(.down) } ?? 0)
        var verdict = call
        if verdict.failure == nil, let result { verdict.failure = GRPCHealth.failure(result, service: settings.service) }
        ProbeEndpoint.writeVerdict(Probed(call: verdict, retries: 0), into: writer)
        return HTTPResponse(headers: ["Content-Type": "text/plain; version=0.0.4; charset=utf-8"], body: .bytes(writer.bytes))
    }
}
