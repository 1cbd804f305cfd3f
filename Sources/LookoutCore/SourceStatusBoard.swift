import Synchronization

/// The latest known state of every source, kept in memory for `/metrics` and the status page.
public final class SourceStatusBoard: ProbeResultSink {
    /// What the board knows of one source.
    public struct Entry: Sendable, Equatable {
        public var source: SourceConfig
        /// The URL with userinfo and secret-looking query values redacted, for display.
        public var displayURL: String
        public var last: ProbeResult?
        /// The last failure the upstream itself caused (not a call the breaker held back).
        public var lastUpstreamFailure: ProbeResult?
        public var lastSuccessMs: Int64?
        public var successes: UInt64 = 0
        public var failures: UInt64 = 0
        public var duration = Histogram()
        public var download: DownloadProgress?
        /// The durations of the last 64 probes, in a ring (for p50/p95).
        public var recentDurations: [Double] = []
        var nextDuration = 0
        public var downloadBytesTotal: UInt64 = 0
        public var verifyFailures: UInt64 = 0
    }

    private struct State {
        var entries: [String: Entry] = [:]
        var order: [String] = []
    }

    private let state = Mutex(State())

    public init(sources: [SourceConfig] = []) {
        apply(sources)
    }

    /// Follows a new config: sources that stay keep their history, new ones start empty.
    public func apply(_ sources: [SourceConfig]) {
        state.withLock { state in
            var entries: [String: Entry] = [:]
            for source in sources {
                var entry = state.entries[source.name] ?? Entry(source: source, displayURL: Redaction.url(source.url))
                if entry.source.url != source.url { entry.displayURL = Redaction.url(source.url) }
                entry.source = source
                entries[source.name] = entry
            }
            state.entries = entries
            state.order = sources.map(\.name)
        }
    }

    public func record(_ result: ProbeResult) {
        state.withLock { state in
            guard var entry = state.entries[result.source] else { return }
            entry.last = result
            if let category = result.failure?.category, category != .circuitOpen { entry.lastUpstreamFailure = result }
            if result.ok {
                entry.successes += 1
                entry.lastSuccessMs = result.timestampMs
            } else {
                entry.failures += 1
            }
            entry.duration.observe(result.durationSeconds)
            if entry.recentDurations.count < 64 {
                entry.recentDurations.append(result.durationSeconds)
            } else {
                entry.recentDurations[entry.nextDuration] = result.durationSeconds
            }
            entry.nextDuration = (entry.nextDuration + 1) % 64
            if let download = result.download {
                entry.download = download
                entry.downloadBytesTotal += UInt64(max(0, download.bytes))
                if download.verified == false { entry.verifyFailures += 1 }
            }
            state.entries[result.source] = entry
        }
    }

    /// The `q` quantile (0…1) of the recent durations, in seconds.
    public static func quantile(_ values: [Double], _ q: Double) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * q).rounded()))]
    }

    /// A download's progress while it runs.
    public func updateDownload(_ source: String, _ progress: DownloadProgress) {
        state.withLock { $0.entries[source]?.download = progress }
    }

    /// The fallback to show for `source` while it is down: its configured fallback, if that is up.
    public func healthyFallback(for source: SourceConfig) -> String? {
        guard let name = source.fallback else { return nil }
        return state.withLock { $0.entries[name]?.last?.ok == true ? name : nil }
    }

    /// Every source in config order.
    public func snapshot() -> [Entry] {
        state.withLock { state in state.order.compactMap { state.entries[$0] } }
    }

    /// True once every source has been probed at least once.
    public var everySourceProbed: Bool {
        state.withLock { $0.entries.values.allSatisfy { $0.last != nil } }
    }
}
