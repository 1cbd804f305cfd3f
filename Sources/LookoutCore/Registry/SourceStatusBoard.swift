import ResilientHTTP
import Synchronization

/// The latest known state of every source, kept in memory for `/metrics` and the status page.
///
/// Built so that reading it is cheap while probes keep recording: what changes only on reload
/// (the config) is shared by reference, and the counters `/metrics` reads are plain values
/// (`Tally`) that copy without reference counting.
public final class SourceStatusBoard: ProbeResultSink {
    /// What changes only when the config does; shared by every copy of an entry.
    public final class Fixed: Sendable {
        public let source: SourceConfig
        /// The URL with userinfo and secret-looking query values redacted, for display.
        public let displayURL: String

        init(source: SourceConfig, displayURL: String) {
            self.source = source
            self.displayURL = displayURL
        }
    }

    /// The counters of one source: plain values (the histogram's shared bounds aside), so a
    /// scrape copies 10,000 of them in one go.
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
            SourceStatusBoard.quantile((0..<count).map { values[$0] }, q)
        }

        public static func == (a: RecentDurations, b: RecentDurations) -> Bool {
            a.count == b.count && (0..<a.count).allSatisfy { a.values[$0] == b.values[$0] }
        }
    }

    /// What the board knows of one source.
    public struct Entry: Sendable, Equatable {
        public internal(set) var fixed: Fixed
        public var last: ProbeResult?
        /// The last failure the upstream itself caused (not a call the breaker held back).
        public var lastUpstreamFailure: ProbeResult?
        public var download: DownloadProgress?
        public var tally = Tally()
        public var recentDurations = RecentDurations()

        public var source: SourceConfig { fixed.source }
        public var displayURL: String { fixed.displayURL }
        public var successes: UInt64 { tally.successes }
        public var failures: UInt64 { tally.failures }
        public var lastSuccessMs: Int64? { tally.lastSuccessMs }

        public static func == (a: Entry, b: Entry) -> Bool {
            (a.fixed === b.fixed || (a.source == b.source && a.displayURL == b.displayURL)) && a.last == b.last && a.lastUpstreamFailure == b.lastUpstreamFailure && a.download == b.download
                && a.tally == b.tally && a.recentDurations == b.recentDurations
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
        }
    }

    private struct State {
        /// In config order.
        var entries: [Entry] = []
        var positions: [String: Int] = [:]
    }

    private let state = Mutex(State())

    public init(sources: [SourceConfig] = []) {
        apply(sources)
    }

    /// Follows a new config: sources that stay keep their history, new ones start empty.
    public func apply(_ sources: [SourceConfig]) {
        state.withLock { state in
            var entries: [Entry] = []
            entries.reserveCapacity(sources.count)
            for source in sources {
                var entry = state.positions[source.name].map { state.entries[$0] } ?? Entry(fixed: Fixed(source: source, displayURL: Redaction.url(source.url)))
                if entry.source != source {
                    let displayURL = entry.source.url == source.url ? entry.displayURL : Redaction.url(source.url)
                    entry.fixed = Fixed(source: source, displayURL: displayURL)
                }
                entry.tally.isDownload = source.kind == .download
                entries.append(entry)
            }
            state.entries = entries
            state.positions = Dictionary(sources.enumerated().map { ($0.element.name, $0.offset) }) { first, _ in first }
        }
    }

    public func record(_ result: ProbeResult) {
        state.withLock { state in
            guard let position = state.positions[result.source] else { return }
            state.entries[position].record(result)
        }
    }

    /// The `q` quantile (0…1) of `values`.
    public static func quantile(_ values: [Double], _ q: Double) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * q).rounded()))]
    }

    /// A download's progress while it runs.
    public func updateDownload(_ source: String, _ progress: DownloadProgress) {
        state.withLock { state in
            guard let position = state.positions[source] else { return }
            state.entries[position].download = progress
            state.entries[position].tally.note(progress)
        }
    }

    /// The fallback to show for `source` while it is down: its configured fallback, if that is up.
    public func healthyFallback(for source: SourceConfig) -> String? {
        guard let name = source.fallback else { return nil }
        return state.withLock { state in
            state.positions[name].map { state.entries[$0].tally.lastOk } == true ? name : nil
        }
    }

    /// Every source in config order.
    public func snapshot() -> [Entry] {
        state.withLock { state in state.entries.map { $0 } }
    }

    /// One source, by name.
    public func entry(_ name: String) -> Entry? {
        state.withLock { state in state.positions[name].map { state.entries[$0] } }
    }

    /// Every source's name and counters, in config order: what `/metrics` reads, copied without
    /// touching the configs or last results.
    public func tallies() -> (names: [String], tallies: [Tally]) {
        state.withLock { state in
            var names: [String] = []
            var tallies: [Tally] = []
            names.reserveCapacity(state.entries.count)
            tallies.reserveCapacity(state.entries.count)
            for entry in state.entries {
                names.append(entry.fixed.source.name)
                tallies.append(entry.tally)
            }
            return (names, tallies)
        }
    }

    /// True once every source has been probed at least once.
    public var everySourceProbed: Bool {
        state.withLock { $0.entries.allSatisfy(\.tally.probed) }
    }
}
