import Foundation
import ResilientHTTP

/// What a source requires of a response its status accepted: what every kind may ask (latency,
/// body text), then what its kind requires (`Prober.check`: valid JSON, a feed…).
package enum ResponseCheck {
    /// The checks for `source`, or nil when there are none.
    package static func validator(for source: SourceConfig) -> (@Sendable (TransferResult) -> Failure?)? {
        let expect = source.expect
        let prober = Probers.prober(for: source.kind)
        if expect.maxLatency == nil && expect.bodyContains == nil && !prober.checksAnswer && source.module == nil { return nil }
        return { result in
            // A named module's checks (TLS, encoding, protocol, headers, body regexes) first.
            if let failure = source.module?.check(result, url: source.url) { return failure }
            return expect.sharedCheck(result) ?? prober.check(result, source)
        }
    }
}

extension Expectations {
    /// What every kind (and every step of a flow) may ask of an answer: its latency
    /// (`max_latency`) and a text in its body (`body_contains`). Nil when both hold.
    package func sharedCheck(_ result: TransferResult) -> Failure? {
        if let limit = maxLatency, result.totalSeconds > limit.seconds {
            return Failure(
                category: .invalidResponse, reason: "slow_response", httpStatus: result.httpStatus,
                detail: String(format: "the answer took %.0f ms, more than the %@ allowed", result.totalSeconds * 1000, ConfigValues.format(limit)))
        }
        if let needle = bodyContains, !result.bodyText.contains(needle) {
            return Failure(
                category: .invalidResponse, reason: "body_mismatch", httpStatus: result.httpStatus, detail: "the body does not contain \"\(needle)\"")
        }
        return nil
    }
}
