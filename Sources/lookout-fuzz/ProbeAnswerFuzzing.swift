import DNSLookup
import Foundation
import LookoutCore
import ResilientHTTP

/// The `probe-answer` target: the first byte picks what the rest is read as.
enum ProbeAnswerFuzzing {
    static func run(_ data: [UInt8]) {
        guard let first = data.first else { return }
        let rest = Array(data.dropFirst())
        switch first % 3 {
        case 0:
            // A DNS server's answer, held to a module's checks as /probe holds it.
            guard let answer = DNSResolver.answer(wire: rest) else { return }
            precondition(answer.answer.count + answer.authority.count + answer.additional.count <= rest.count)
            _ = answer.rcodeName
            _ = answer.serial
            var settings = DNSModuleSettings()
            settings.answer.failIfNoneMatches = ["IN\\s+A"]
            settings.authority.failIfAllMatch = ["SOA"]
            _ = settings.problem(answer)
        case 1:
            // A gRPC health answer: its body, and a grpc-status and message made of the bytes.
            let split = rest.firstIndex(of: 0x0A) ?? rest.endIndex
            let text = String(decoding: rest[..<split], as: UTF8.self)
            let result = TransferResult(
                httpStatus: 200, headers: [("grpc-status", text), ("grpc-message", text)], body: Array(rest[min(split + 1, rest.endIndex)...]))
            let answer = GRPCHealth.answer(result)
            if let serving = answer.servingStatus { precondition(serving >= 0 && serving < 128) }
            if let failure = GRPCHealth.failure(result, service: text) {
                precondition(!failure.detail.unicodeScalars.contains { $0.value < 0x20 })
            }
        default:
            let text = String(decoding: rest, as: UTF8.self)
            for prober in [DNSProber.self, ICMPProber.self, GRPCProber.self] as [any Prober.Type] {
                if let problem = prober.urlProblem(text) { precondition(!problem.isEmpty) }
            }
        }
    }
}
