import Foundation
import ResilientHTTP

/// One finished probe of a source: a call with its retries, judged against the source's
/// expectations.
public struct ProbeResult: Sendable, Equatable {
    public var source: String
    /// When the probe started, in milliseconds since 1970.
    public var timestampMs: Int64
    public var ok: Bool
    /// nil when `ok`.
    public var failure: Failure?
    public var httpStatus: Int?
    public var attempts: Int
    public var durationSeconds: Double
    public var bytes: Int
    public var phases: PhaseTimings
    /// The http:// URL was probed as https://.
    public var upgradedToHTTPS = false
    /// When the first of the upstream's TLS certificates expires.
    public var certificateExpiry: Date?
    /// How the call went, counting retries.
    public var callKind: CallKind = .successfulWithoutRetry
    /// Downloads: how far it got and whether it verified.
    public var download: DownloadProgress?
    /// While this source is down: the name of its fallback, when that one is up.
    public var fallbackInUse: String?
    /// Lookout itself was offline when this probe ran.
    public var duringOffline = false

    public init(
        source: String, timestampMs: Int64, ok: Bool, failure: Failure? = nil, httpStatus: Int? = nil,
        attempts: Int = 1, durationSeconds: Double = 0, bytes: Int = 0, phases: PhaseTimings = .init()
    ) {
        self.source = source
        self.timestampMs = timestampMs
        self.ok = ok
        self.failure = failure
        self.httpStatus = httpStatus
        self.attempts = attempts
        self.durationSeconds = durationSeconds
        self.bytes = bytes
        self.phases = phases
    }

    /// The message an on-call engineer reads, e.g. "Error while probing acme: the server answered 503."
    public var message: String? {
        failure?.message(operation: "probing \(source)")
    }
}

/// Receives every finished probe (the store, the status board).
public protocol ProbeResultSink: Sendable {
    func record(_ result: ProbeResult)
}
