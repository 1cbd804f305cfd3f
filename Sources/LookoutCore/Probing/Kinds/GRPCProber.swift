import Foundation
import ResilientHTTP

extension SourceKind {
    package static let grpc = SourceKind(declaring: "grpc")
}

/// `kind: grpc`, `url: grpc://HOST:PORT[/SERVICE]` (`grpcs://` over TLS): the standard health
/// check, `grpc.health.v1.Health/Check`, for the service (the server as a whole without one). It
/// passes when the server answers SERVING; otherwise it says what the server said (NOT_SERVING,
/// an unknown service, no health service at all, the gRPC status and its message).
///
/// One HTTP/2 call through the resilient client (h2c with prior knowledge, or h2 by ALPN), so
/// retries, the breaker and the token bucket apply as for HTTP sources.
package enum GRPCProber: Prober {
    package static let kind = SourceKind.grpc
    package static let summary = "a gRPC health check answered SERVING"
    package static let isHTTPRequest = false
    package static let checksAnswer = true

    package static func urlProblem(_ url: String) -> String? {
        if let problem = EndpointURL.unprintableProblem(url) { return problem }
        guard let parts = URLParts(url), ["grpc", "grpcs"].contains(parts.scheme.lowercased()), let host = parts.host, !host.isEmpty else {
            return "\"\(url)\" is not a grpc:// address (use grpc://host:port, grpcs:// over TLS, and /SERVICE for one service)"
        }
        guard let port = parts.port else { return "\"\(url)\" names no port (use grpc://host:port)" }
        guard (1...65535).contains(port) else { return "\"\(url)\" names port \(port); a port is 1 to 65535" }
        guard parts.query == nil, parts.userInfo == nil, !parts.decodedPath.dropFirst().contains("/") else {
            return "\"\(url)\" has more than a host, a port and a service name"
        }
        return nil
    }

    package static func probe(_ source: SourceConfig, with prober: SourceProber, breakerCountsFailures: Bool) async -> ProbeResult {
        await prober.call(source, breakerCountsFailures: breakerCountsFailures) { transfer in
            GRPCHealth.prepare(&transfer, url: source.url)
        }
    }

    package static func check(_ result: TransferResult, _ source: SourceConfig) -> Failure? {
        GRPCHealth.failure(result, service: GRPCHealth.service(of: source.url))
    }
}

/// The gRPC health protocol (grpc.health.v1), by hand: one string field out, one enum field back.
package enum GRPCHealth {
    package static let path = "/grpc.health.v1.Health/Check"
    /// HealthCheckResponse.ServingStatus, by number.
    package static let servingStatuses = ["UNKNOWN", "SERVING", "NOT_SERVING", "SERVICE_UNKNOWN"]

    /// The service a `grpc://host:port/SERVICE` URL names ("" for the whole server).
    package static func service(of url: String) -> String {
        String((URLParts(url)?.decodedPath ?? "").dropFirst())
    }

    /// Turns `transfer` into the health check of `url`'s service on its host and port.
    package static func prepare(_ transfer: inout TransferRequest, url: String, service: String? = nil) {
        let secure = ASCII.hasPrefixIgnoringCase(url, "grpcs://")
        let parts = URLParts(url)
        let host = parts?.host ?? ""
        let port = parts?.portOrDefault ?? (secure ? 443 : 80)
        transfer.url = "\(secure ? "https" : "http")://\(host):\(port)\(path)"
        transfer.method = "POST"
        transfer.headers = [("Content-Type", "application/grpc"), ("TE", "trailers")]
        transfer.body = frame(service ?? self.service(of: url))
        transfer.requiresHTTP2 = true
        transfer.acceptEncoding = nil
        transfer.followRedirects = false
    }

    /// A length-prefixed message (uncompressed) holding HealthCheckRequest { service = 1 }.
    static func frame(_ service: String) -> [UInt8] {
        let bytes = Array(service.utf8.prefix(1024))
        var message: [UInt8] = []
        if !bytes.isEmpty { message = [0x0A] + varint(bytes.count) + bytes }
        let length = UInt32(message.count)
        return [0, UInt8(length >> 24), UInt8(length >> 16 & 0xff), UInt8(length >> 8 & 0xff), UInt8(length & 0xff)] + message
    }

    static func varint(_ value: Int) -> [UInt8] {
        var value = UInt64(value)
        var bytes: [UInt8] = []
        repeat {
            var byte = UInt8(value & 0x7f)
            value >>= 7
            if value != 0 { byte |= 0x80 }
            bytes.append(byte)
        } while value != 0
        return bytes
    }

    /// The answer: its gRPC status (from the trailers, or the headers of a trailers-only
    /// answer), message, and the serving status of the first message (0 when none came).
    package struct Answer: Equatable {
        package var grpcStatus: Int?
        package var grpcMessage: String?
        package var servingStatus: Int?
    }

    package static func answer(_ result: TransferResult) -> Answer {
        let status = result.headers.last { $0.name.lowercased() == "grpc-status" }.flatMap { Int($0.value.trimmingCharacters(in: .whitespaces)) }
        let message = result.headers.last { $0.name.lowercased() == "grpc-message" }.map { $0.value.removingPercentEncoding ?? $0.value }
        var serving: Int?
        let body = result.body
        if body.count >= 5, body[0] == 0 {
            let length = Int(body[1]) << 24 | Int(body[2]) << 16 | Int(body[3]) << 8 | Int(body[4])
            if length <= body.count - 5 {
                serving = 0
                // Field 1, varint: the serving status (one byte for the four there are).
                if length >= 2, body[5] == 0x08, body[6] < 0x80 { serving = Int(body[6]) }
            }
        }
        return Answer(grpcStatus: status, grpcMessage: message.map(PrintableText.escape), servingStatus: serving)
    }

    /// nil when the server answered SERVING; otherwise what it said, as a failure.
    package static func failure(_ result: TransferResult, service: String) -> Failure? {
        let answer = answer(result)
        let named = service.isEmpty ? "the server" : "service \(service)"
        let said = answer.grpcMessage.map { ": \($0)" } ?? ""
        func failure(_ category: ErrorCategory, _ reason: String, _ detail: String) -> Failure {
            Failure(category: category, reason: reason, httpStatus: result.httpStatus, detail: detail)
        }
        guard let status = answer.grpcStatus else {
            return failure(.invalidResponse, "grpc_no_status", "the answer carries no grpc-status: is this a gRPC server?")
        }
        switch status {
        case 0:
            switch answer.servingStatus {
            case 1: return nil
            case 2: return failure(.serverError, "grpc_not_serving", "the health check says \(named) is NOT_SERVING")
            case 3: return failure(.clientError, "grpc_service_unknown", "the health check does not know \(named) (SERVICE_UNKNOWN)")
            default: return failure(.invalidResponse, "grpc_unknown_status", "the health check answered no serving status for \(named)")
            }
        case 4: return failure(.timeout, "grpc_deadline_exceeded", "the server ran out of time (DEADLINE_EXCEEDED)\(said)")
        case 5: return failure(.clientError, "grpc_service_unknown", "the health check does not know \(named) (NOT_FOUND)\(said)")
        case 7, 16:
            return failure(
                .authError, "grpc_status_\(status)", "the server refused the health check (\(status == 7 ? "PERMISSION_DENIED" : "UNAUTHENTICATED"))\(said)")
        case 12: return failure(.clientError, "grpc_unimplemented", "the server has no health service (grpc.health.v1.Health is UNIMPLEMENTED)\(said)")
        case 14: return failure(.serverError, "grpc_unavailable", "the server is UNAVAILABLE\(said)")
        default: return failure(.serverError, "grpc_status_\(status)", "the health check failed with gRPC status \(status)\(said)")
        }
    }
}
