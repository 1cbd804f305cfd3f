import Foundation
import ResilientHTTP

/// Probes one source once through the transport and judges the answer.
public struct SourceProber: Sendable {
    public let transport: CurlTransport

    public init(transport: CurlTransport) {
        self.transport = transport
    }

    public func probe(_ source: SourceConfig) async -> ProbeResult {
        let started = Date()
        let request = TransferRequest(url: source.url, timeout: source.timeout)
        let result = await transport.perform(request)
        let failure = FailureClassifier.classify(result)
        return ProbeResult(
            source: source.name, timestampMs: Int64(started.timeIntervalSince1970 * 1000),
            ok: failure == nil, failure: failure, httpStatus: result.httpStatus, attempts: 1,
            durationSeconds: result.totalSeconds > 0 ? result.totalSeconds : Date().timeIntervalSince(started),
            bytes: result.bodyBytes, phases: result.phases)
    }
}
