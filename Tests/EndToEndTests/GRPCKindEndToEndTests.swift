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
        _ = try await lookout.metricsOnceProbed(names)
        let serving = ["grpc-server", "grpc-ok"].map { "lookout_probe_success{source=\"\($0)\"} 1" }
        let named = [
            ("grpc-down", "server_error", "grpc_not_serving"), ("grpc-unknown", "client_error", "grpc_service_unknown"),
            ("grpc-bare", "client_error", "grpc_unimplemented"), ("grpc-closed", "transient", "connection_refused"),
        ].map { "lookout_errors_total{source=\"\($0)\",category=\"\($1)\",reason=\"\($2)\"}" }
        // Each answer as it is named, probed again until it comes: under a loaded make test
        // grpcio's first answer on a new connection has once been an HTTP/2 error (then
        // UNIMPLEMENTED, as named).
        _ = try await eventually("each answer named: \(serving + named)") {
            let text = await http.perform(TransferRequest(url: lookout.base + "/metrics", timeout: .patient)).bodyText
            return (serving + named).allSatisfy(text.contains) ? text : nil
        }
        let unknown = await http.perform(TransferRequest(url: lookout.base + "/api/v1/sources/grpc-unknown", timeout: .patient)).bodyText
        #expect(unknown.contains("does not know service payments (NOT_FOUND): unknown service payments"))
        try await lookout.stop()
        server.send(SIGKILL)
        bare.send(SIGKILL)
    }
}
