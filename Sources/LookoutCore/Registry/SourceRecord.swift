import ResilientHTTP

/// Everything Lookout knows of one configured source: its config, latest result, counters,
/// health rings, client counters and download progress. Records live in the `SourceRegistry`;
/// readers get copies in a `RegistrySnapshot`.
public struct SourceRecord: Sendable {
    /// What changes only when the config does; shared by every copy of a record.
    public final class Fixed: Sendable {
        public let source: SourceConfig
        /// The URL with userinfo and secret-looking query values redacted, for display.
        public let displayURL: String

        init(source: SourceConfig, displayURL: String) {
            self.source = source
            self.displayURL = displayURL
        }
    }

    /// The counters of one source that `/metrics` reads: plain values (the histogram's shared
    /// bounds aside).
    public struct Tally: Sendable, Equatable {
        public var probed = false
        public var lastOk = false
        /// The last probe's HTTP status; 0 when none arrived.
        public var lastHTTPStatus = 0
        /// The last probe's phases (DNS, connect, TLS, time to first byte, transfer), in seconds.
        public var lastPhases = PhaseTimings()
        /// When the first of the last probe's certificates expires, in seconds since 1970.
        public var certificateExpirySeconds: Double?
        public var lastSuccessMs: Int64?
        public var successes: UInt64 = 0
        public var failures: UInt64 = 0
        public var duration = Histogram()
        public var isDownload = false
        public var downloadState: DownloadState = .notStarted
        public var downloadThroughput: Double = 0
        public var downloadRatio: Double = 0
        public var downloadBytesTotal: UInt64 = 0
        public var verifyFailures: UInt64 = 0

        mutating func note(_ download: DownloadProgress) {
            downloadState = download.state
            downloadThroughput = download.throughputBytesPerSecond
            downloadRatio = download.ratio ?? 0
        }
    }

    /// What the resilient client reported for the source.
    public struct ClientCounters: Sendable, Equatable {
        /// Failed attempts by "category/reason".
        public var errors: [String: UInt64] = [:]
        /// Retries by category.
        public var retries: [ErrorCategory: UInt64] = [:]
        public var calls: [CallKind: UInt64] = [:]
        public var retryBudgetExhausted: UInt64 = 0
        public var tokenRefreshes: UInt64 = 0
        public var tokenRefreshFailures: UInt64 = 0

        public init() {}

        mutating func note(_ event: ClientEvent) {
            switch event {
            case .attemptFinished(_, let attempt):
                guard let failure = attempt.failure else { return }
                errors["\(failure.category.rawValue)/\(failure.reason)", default: 0] += 1
            case .retryScheduled(_, _, let category, _):
                retries[category, default: 0] += 1
            case .callFinished(let outcome):
                guard !outcome.cancelled else { return }
                calls[outcome.kind, default: 0] += 1
                // Failures decided before any attempt (breaker open, plain http refused) count too.
                if outcome.attempts.isEmpty, let failure = outcome.failure {
                    errors["\(failure.category.rawValue)/\(failure.reason)", default: 0] += 1
                }
            case .retryBudgetExhausted:
                retryBudgetExhausted += 1
            case .tokenRefreshed(_, let succeeded):
                tokenRefreshes += 1
                if !succeeded { tokenRefreshFailures += 1 }
            case .breakerTransition, .callNotPermitted:
                return
            }
        }
    }

    /// The durations of the last 64 probes, in a ring (for p50/p95), stored inline.
    public struct RecentDurations: Sendable, Equatable {
        private var values = InlineArray<64, Double>(repeating: 0)
        public private(set) var count = 0
        private var next = 0

        mutating func append(_ value: Double) {
            values[next] = value
            next = (next + 1) % 64
            count = min(64, count + 1)
        }

        /// The `q` quantile (0…1), in seconds; nil before the first probe.
        public func quantile(_ q: Double) -> Double? {
            RecentDurations.quantile((0..<count).map { values[$0] }, q)
        }

        /// The `q` quantile (0…1) of `values`.
        public static func quantile(_ values: [Double], _ q: Double) -> Double? {
            guard !values.isEmpty else { return nil }
            let sorted = values.sorted()
            return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * q).rounded()))]
        }

        public static func == (a: RecentDurations, b: RecentDurations) -> Bool {
            a.count == b.count && (0..<a.count).allSatisfy { a.values[$0] == b.values[$0] }
        }
    }

    public internal(set) var fixed: Fixed
    public internal(set) var last: ProbeResult?
    /// The last failure the upstream itself caused (not a call the breaker held back).
    public internal(set) var lastUpstreamFailure: ProbeResult?
    public internal(set) var download: DownloadProgress?
    public internal(set) var tally = Tally()
    public internal(set) var recentDurations = RecentDurations()
    /// Error rates, retry success, availability and outages over time.
    public internal(set) var health = SourceHealth()
    /// Whether `health` holds anything (a probe, or history restored after a restart).
    public internal(set) var hasHealth = false
    public internal(set) var client = ClientCounters()

    init(source: SourceConfig) {
        fixed = Fixed(source: source, displayURL: Redaction.url(source.url))
        tally.isDownload = source.kind == .download
    }

    public var source: SourceConfig { fixed.source }
    public var name: String { fixed.source.name }
    public var displayURL: String { fixed.displayURL }
    public var successes: UInt64 { tally.successes }
    public var failures: UInt64 { tally.failures }
    public var lastSuccessMs: Int64? { tally.lastSuccessMs }

    /// Follows a changed config, keeping everything measured.
    mutating func reconfigure(_ source: SourceConfig) {
        guard self.source != source else { return }
        let displayURL = self.source.url == source.url ? self.displayURL : Redaction.url(source.url)
        fixed = Fixed(source: source, displayURL: displayURL)
        tally.isDownload = source.kind == .download
    }

    mutating func record(_ result: ProbeResult) {
        last = result
        if let category = result.failure?.category, category != .circuitOpen { lastUpstreamFailure = result }
        tally.probed = true
        tally.lastOk = result.ok
        tally.lastHTTPStatus = result.httpStatus ?? 0
        tally.lastPhases = result.phases
        tally.certificateExpirySeconds = result.certificateExpiry.map { $0.timeIntervalSince1970.rounded() }
        if result.ok {
            tally.successes += 1
            tally.lastSuccessMs = result.timestampMs
        } else {
            tally.failures += 1
        }
        tally.duration.observe(result.durationSeconds)
        recentDurations.append(result.durationSeconds)
        if let progress = result.download {
            download = progress
            tally.note(progress)
            tally.downloadBytesTotal += UInt64(max(0, progress.bytes))
            if progress.verified == false { tally.verifyFailures += 1 }
        }
        health.record(result)
        hasHealth = true
    }

    mutating func note(_ progress: DownloadProgress) {
        download = progress
        tally.note(progress)
    }
}
