import Foundation

/// Starts `Scripts/grpc-health-server.py` (a real gRPC server, Debian's python3-grpcio) on a free
/// loopback port; returns it with the port. Without `health` it has no health service at all.
public func startGRPCHealthServer(health: Bool = true) async throws -> (ChildProcess, Int) {
    let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Scripts/grpc-health-server.py").path
    let server = try ChildProcess("/usr/bin/python3", [script] + (health ? [] : ["--no-health"]))
    let port = try await server.waitFor(#"listening (\d+)"#)
    guard let number = Int(port) else { throw TestFailure("the gRPC server printed no port") }
    return (server, number)
}
