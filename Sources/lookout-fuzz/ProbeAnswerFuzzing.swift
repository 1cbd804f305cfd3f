import DNSLookup
import Foundation
import LinearRegex
import LookoutCore
import ResilientHTTP
import TCPExchange

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

    /// The `conversation` target: the first byte is the size of the chunks the rest arrives in;
    /// the first line is the template of what is sent back (`${1}`, `$name`), as a module's
    /// `send` may be, and every later line is matched as `expect` matches it.
    static let expect = try! Regexp("^(?P<code>[0-9]{3})[ -]([^ ]*)(.*)$")

    static func conversation(_ data: [UInt8]) {
        guard let first = data.first else { return }
        let size = Int(first % 64) + 1
        var rest = data.dropFirst()
        var lines = LineBuffer()
        var template: String?
        var count = 0
        while true {
            while let line = lines.next() {
                count += 1
                precondition(count <= data.count, "more lines than bytes")
                guard let template else {
                    template = line
                    continue
                }
                if let match = expect.firstMatch(in: line) {
                    _ = TCPExchange.expand(template, match: match)
                }
            }
            guard lines.wantsMore else { return }
            if rest.isEmpty {
                lines.closed = true
            } else {
                lines.append(rest.prefix(size))
                rest = rest.dropFirst(size)
            }
        }
    }

    /// The `regex` target: what a config's pattern and an upstream's text can do to RE2 and to
    /// Lookout's reading of a match. A match anywhere and a first match agree; a whole match is a
    /// match; every group is a part of the text.
    static func regex(_ data: [UInt8]) {
        let split = data.firstIndex(of: 0) ?? data.endIndex
        let pattern = String(decoding: data[..<split], as: UTF8.self)
        let text = String(decoding: data[split...].dropFirst(), as: UTF8.self)
        _ = RegexCache.problem(pattern)
        guard let regex = try? Regexp(pattern, maxMemory: 1 << 20) else { return }
        let found = regex.firstMatch(in: text)
        precondition(regex.matches(text) == (found != nil), "matches and firstMatch disagree")
        if regex.matchesWhole(text) { precondition(found != nil, "a whole match that is no match") }
        if let found {
            precondition(found.groups.count == regex.groupCount + 1)
            for case let group? in found.groups { precondition(group.utf8.count <= text.utf8.count) }
            _ = TCPExchange.expand("${1}$name${0}", match: found)
        }
    }
}
