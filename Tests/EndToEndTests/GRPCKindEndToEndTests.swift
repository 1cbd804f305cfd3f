import Foundation
import ResilientHTTP
import TestSupport
import Testing

/// `kind: grpc` against a real gRPC server on loopback (grpcio's, in Python): SERVING is up, and
/// NOT_SERVING, an unknown service, a server without the health service and a closed port are
/// each named as the server put it.
@Suite("grpc sources")
struct GRPCKindEndToEndTests {
    @Test func asksForHealthAndNamesEachAnswer() async throws {
        let (server, port) = try await startGRPCHealthServer()
        let (bare, barePort) = try await startGRPCHealthServer(health: false)
        let closed = closedPort()
        let lookout = try await InProcessLookout.start(
            """
            defaults: {interval: 1s, timeout: 2s, retry: {server_error: {max_attempts: 1}, transient: {max_attempts: 1}}}
            sources:
              - {name: grpc-server, kind: grpc, url: "grpc://127.0.0.1:\(port)"}
              - {name: grpc-ok, kind: grpc, url: "grpc://127.0.0.1:\(port)/ok"}
              - {name: grpc-down, kind: grpc, url: "grpc://127.0.0.1:\(port)/down"}
              - {name: grpc-unknown, kind: grpc, url: "grpc://127.0.0.1:\(port)/payments"}
              - {name: grpc-bare, kind: grpc, url: "grpc://127.0.0.1:\(barePort)"}
              - {name: grpc-closed, kind: grpc, url: "grpc://127.0.0.1:\(closed)"}
            """)
        let http = CurlTransport()
        let names = ["grpc-server", "grpc-ok", "grpc-down", "grpc-unknown", "grpc-bare", "grpc-closed"]
        let metrics = try await lookout.metricsOnceProbed(names)
        #expect(metrics.contains(#"lookout_probe_success{source="grpc-server"} 1"#))
        #expect(metrics.contains(#"lookout_probe_success{source="grpc-ok"} 1"#))
        for (name, category, reason) in [
            ("grpc-down", "server_error", "grpc_not_serving"), ("grpc-unknown", "client_error", "grpc_service_unknown"),
            ("grpc-bare", "client_error", "grpc_unimplemented"), ("grpc-closed", "transient", "connection_refused"),
        ] {
            #expect(metrics.contains("lookout_errors_total{source=\"\(name)\",category=\"\(category)\",reason=\"\(reason)\"}"), "\(name)")
        }
        let unknown = await http.perform(TransferRequest(url: lookout.base + "/api/v1/sources/grpc-unknown")).bodyText
        #expect(unknown.contains("does not know service payments (NOT_FOUND): unknown service payments"))
        try await lookout.stop()
        server.send(SIGKILL)
        bare.send(SIGKILL)
    }
}
