import ResilientHTTP

/// Everything Lookout knows of one configured source: its config, latest result, counters,
/// health rings, client counters and download progress. Records live in the `SourceRegistry`;
/// readers get copies in a `RegistrySnapshot`.
package struct SourceRecord: Sendable {
    /// What changes only when the config does; shared by every copy of a record.
    package final class Fixed: Sendable {
        package let source: SourceConfig
        /// The URL with userinfo and secret-looking query values redacted, for display.
        package let displayURL: String

        init(source: SourceConfig, displayURL: String) {
            self.source = source
            self.displayURL = displayURL
        }
    }

    /// The counters of one source that `/metrics` reads: plain values (the histogram's shared
    /// bounds aside).
    package struct Tally: Sendable, Equatable {
        package var probed = false
        package var lastOk = false
        /// The last probe's HTTP status; 0 when none arrived.
        package var lastHTTPStatus = 0
        /// The last probe's phases (DNS, connect, TLS, time to first byte, transfer), in seconds.
        package var lastPhases = PhaseTimings()
        /// When the first of the last probe's certificates expires, in seconds since 1970.
        package var certificateExpirySeconds: Double?
        /// When the registration of the source's domain expires (`domain_expiry`), in seconds
        /// since 1970; nil when not watched or not known.
        package var domainExpirySeconds: Double?
        /// Where the source stands against its `sla` (nil: none, or not worked out yet).
        package var sla: SLAStanding?
        package var lastSuccessMs: Int64?
        package var successes: UInt64 = 0
        package var failures: UInt64 = 0
        /// One attempt's latency, attempts that got an answer (`lookout_probe_duration_seconds`).
        package var duration = Histogram()
        /// Whole calls, retries and waits included (`lookout_probe_call_duration_seconds`): a
        /// sum and a count; latency is what the buckets are for.
        package var callSecondsSum: Double = 0
        package var calls: UInt64 = 0
        package var isDownload = false
        package var downloadState: DownloadState = .notStarted
        package var downloadThroughput: Double = 0
        package var downloadRatio: Double = 0
        package var downloadBytesTotal: UInt64 = 0
        package var verifyFailures: UInt64 = 0

        mutating func note(_ download: DownloadProgress) {
            downloadState = download.state
            downloadThroughput = download.throughputBytesPerSecond
            downloadRatio = download.ratio ?? 0
        }
    }

    /// What the resilient client reported for the source.
    package struct ClientCounters: Sendable, Equatable {
        /// Failed attempts by "category/reason".
        package var errors: [String: UInt64] = [:]
        /// Retries by category.
        package var retries: [ErrorCategory: UInt64] = [:]
        package var calls = CallCounts()
        package var retryBudgetExhausted: UInt64 = 0
        package var tokenRefreshes: UInt64 = 0
        package var tokenRefreshFailures: UInt64 = 0

        package init() {}

        mutating func note(_ event: ClientEvent) {
            switch event {
            case .attemptFinished(_, let attempt):
                guard let failure = attempt.failure else { return }
                errors["\(failure.category.rawValue)/\(failure.reason)", default: 0] += 1
            case .retryScheduled(_, _, let category, _):
                retries[category, default: 0] += 1
            case .callFinished(let outcome):
                guard !outcome.cancelled else { return }
                calls[outcome.kind] += 1
                // Failures decided before any attempt count too (plain http refused); a call the
                // open breaker refused is not an error of the upstream: it counts in the
                // breaker's not-permitted calls.
                if outcome.attempts.isEmpty, let failure = outcome.failure, failure.category != .circuitOpen {
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

    /// Finished calls by kind: four counters, where a dictionary hashed the kind on every call.
    package struct CallCounts: Sendable, Equatable {
        private var counts: [UInt64] = [0, 0, 0, 0]

        package subscript(kind: CallKind) -> UInt64 {
            get { counts[CallCounts.index(kind)] }
            set { counts[CallCounts.index(kind)] = newValue }
        }

        private static func index(_ kind: CallKind) -> Int {
            switch kind {
            case .successfulWithoutRetry: 0
            case .successfulWithRetry: 1
            case .failedWithRetry: 2
            case .failedWithoutRetry: 3
            }
        }
    }

    /// Whether each of the last 20 probes passed, for the page's strip of the latest results.
    package struct RecentOutcomes: Sendable, Equatable {
        package static let size = 20
        private var failed = [Bool](repeating: false, count: RecentOutcomes.size)
        package private(set) var count = 0
        private var next = 0

        mutating func append(ok: Bool) {
            failed[next] = !ok
            next = (next + 1) % RecentOutcomes.size
            count = min(RecentOutcomes.size, count + 1)
        }

        /// Oldest first: true for a probe that passed.
        package var passed: [Bool] {
            let start = count < RecentOutcomes.size ? 0 : next
            return (0..<count).map { !failed[(start + $0) % RecentOutcomes.size] }
        }
    }

    /// The upstream's response times (the last attempt of each of the last 64 probes that got
    /// an answer, retries and backoff left out), in a ring for p50/p95: the page's row and chart
    /// label, the API and `lookout_probe_latency_seconds` all read it. A plain array, like `Histogram`'s counts:
    /// `InlineArray` fields in this record were miscompiled by Swift 6.3 in debug builds.
    package struct RecentDurations: Sendable, Equatable {
        /// Whole microseconds (up to 71 minutes), half the memory of `Double` seconds across
        /// 10,000 sources, and read back as the same seconds a millisecond multiple was.
        private var values = [UInt32](repeating: 0, count: 64)
        package private(set) var count = 0
        private var next = 0

        mutating func append(_ value: Double) {
            let microseconds = value * 1_000_000
            values[next] = microseconds.isFinite && microseconds > 0 ? UInt32(min(microseconds.rounded(), Double(UInt32.max))) : 0
            next = (next + 1) % 64
            count = min(64, count + 1)
        }

        /// The `q` quantile (0…1), in seconds; nil before the first probe.
        package func quantile(_ q: Double) -> Double? {
            RecentDurations.quantile((0..<count).map { Double(values[$0]) / 1_000_000 }, q)
        }

        /// The `q` quantile (0…1) of `values`.
        package static func quantile(_ values: [Double], _ q: Double) -> Double? {
            guard !values.isEmpty else { return nil }
            let sorted = values.sorted()
            return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * q).rounded()))]
        }

        package static func == (a: RecentDurations, b: RecentDurations) -> Bool {
            a.count == b.count && (0..<a.count).allSatisfy { a.values[$0] == b.values[$0] }
        }
    }

    /// One outage of the source: from its first failed probe to the next success.
    package struct Incident: Sendable, Equatable {
        /// When the source went down: the first failed probe after it was up (or first probed).
        package var downSinceMs: Int64
        /// The latest failure the upstream caused — never a call the breaker refused, so the
        /// root cause (the 503 and its message, the refused connection) stays in view.
        package var cause: ProbeResult
        /// Probes that failed since it began.
        package var failedProbes: Int
        /// The reasons the log has given for it, in order: none while every failure came while
        /// Lookout itself was offline (when every source fails for a reason of its own).
        package var announcedReasons: [String] = []

        /// Whether the log has said the source is down.
        package var announced: Bool { !announcedReasons.isEmpty }

        /// How long the source has been down at `nowMs`, in milliseconds.
        package func downForMs(nowMs: Int64) -> Int64 {
            max(0, nowMs - downSinceMs)
        }
    }

    package internal(set) var fixed: Fixed
    /// The last probe that reached the upstream (or failed trying); calls an open breaker
    /// refused are not probes and never replace it.
    package internal(set) var last: ProbeResult? {
        get { lastStorage?.value }
        set { lastStorage = newValue.map(Shared.init) }
    }
    /// The outage in progress; nil while the source is up or not probed yet.
    package internal(set) var incident: Incident? {
        get { incidentStorage?.value }
        set { incidentStorage = newValue.map(Shared.init) }
    }
    /// Behind references: inline, the two took 760 of the record's 1,568 bytes — 3.8 MB of
    /// absent incidents at 10,000 sources, and half of what the registry copies when a write
    /// follows a reader's snapshot.
    private var lastStorage: Shared<ProbeResult>?
    private var incidentStorage: Shared<Incident>?
    /// Whether the failures amount to an outage people are told of (`outage` policy): the
    /// paging rules fire only while it is down and resolve when it is up again.
    package internal(set) var outage = OutageTracker()
    /// Calls an open breaker refused (no request made), and when the last one was.
    package internal(set) var heldBackCalls: UInt64 = 0
    package internal(set) var lastHeldBackMs: Int64?
    package internal(set) var download: DownloadProgress?
    package internal(set) var tally = Tally()
    package internal(set) var recentDurations = RecentDurations()
    package internal(set) var recentOutcomes = RecentOutcomes()
    /// Error rates, retry success, availability and outages over time.
    package internal(set) var health = SourceHealth()
    /// Whether `health` holds anything (a probe, or history restored after a restart).
    package internal(set) var hasHealth = false
    package internal(set) var client = ClientCounters()
    /// The last minutes this source was counted in the service-wide partial-failure rounds.
    var roundMarks = PartialFailureRounds.Marks()
    /// Times the breaker opened from closed in the `windowMs` before `nowMs`.
    package func breakerOpens(windowMs: Int64, nowMs: Int64) -> Int {
        health.breakerOpens(windowMs: windowMs, nowMs: nowMs)
    }

    mutating func note(_ transition: BreakerTransition) {
        guard transition.from == .closed, transition.to == .open else { return }
        health.noteBreakerOpened(atMs: transition.atMs)
    }

    init(source: SourceConfig) {
        fixed = Fixed(source: source, displayURL: Redaction.url(source.url))
        tally.isDownload = source.kind == .download
    }

    package var source: SourceConfig { fixed.source }
    package var name: String { fixed.source.name }
    package var displayURL: String { fixed.displayURL }
    package var successes: UInt64 { tally.successes }
    package var failures: UInt64 { tally.failures }
    package var lastSuccessMs: Int64? { tally.lastSuccessMs }

    /// Follows a changed config, keeping everything measured.
    mutating func reconfigure(_ source: SourceConfig) {
        guard self.source != source else { return }
        let displayURL = self.source.url == source.url ? self.displayURL : Redaction.url(source.url)
        fixed = Fixed(source: source, displayURL: displayURL)
        tally.isDownload = source.kind == .download
    }

    /// Takes back the outage in progress when Lookout last stopped, with its last cause: the
    /// page and the API show it at once (a breaker restored open may hold calls back for
    /// minutes), and the log goes on as if Lookout had not stopped. The previous run told its
    /// cause unless that was a network failure of one probe (held back, see `followIncident`),
    /// so the same cause is not told twice, a new one is "failing differently", and the success
    /// that ends it is "up again" with the whole `down_for`.
    mutating func restoreOutage(downSinceMs: Int64, failedProbes: Int, cause: ProbeResult) {
        guard incident == nil, !tally.probed else { return }  // probed since the start: too late
        var restored = Incident(downSinceMs: downSinceMs, cause: cause, failedProbes: max(0, failedProbes))
        if let failure = cause.failure, failure.category != .networkUnreachable || failedProbes > 1 {
            restored.announcedReasons = [failure.reason]
        }
        incident = restored
        last = cause
        if failedProbes >= source.outage.failureThreshold { outage.restore(downSinceMs: downSinceMs, failedProbes: failedProbes) }
    }

    /// Until when the upstream asked not to be probed (Retry-After, RateLimit reset), if that
    /// is still ahead at `nowMs`, and the sentence people read: "rate-limited until 12:44:10
    /// UTC, as the upstream asked".
    package func serverWait(nowMs: Int64) -> (untilMs: Int64, message: String)? {
        guard let last, let until = last.serverWaitUntilMs, until > nowMs else { return nil }
        let what = last.failure?.category == .rateLimited ? "rate-limited" : "asked to wait"
        return (until, "\(what) until \(ResilientClient.timeOfDay(until)), as the upstream asked; no probe before then")
    }

    /// Probed, or at least tried (a restored open breaker refuses the first calls).
    package var attempted: Bool { tally.probed || heldBackCalls > 0 }

    /// What a probe changed in the source's outage, as the log tells it: one line when it goes
    /// down, one for each reason not yet told in it, one when it is up again, however many
    /// probes fail.
    package enum OutageChange: Sendable, Equatable {
        case began(Incident)
        /// The upstream now fails for a reason not yet told in this outage; `previousReason` is
        /// the one the log told last.
        case causeChanged(Incident, previousReason: String)
        case ended(Incident, upAtMs: Int64)

        package var incident: Incident {
            switch self {
            case .began(let incident), .causeChanged(let incident, _), .ended(let incident, _): return incident
            }
        }
    }

    /// Takes one result; returns what it changed in the incident the log follows and in the
    /// outage by the source's policy.
    @discardableResult
    mutating func record(_ result: ProbeResult) -> (OutageChange?, OutageTracker.Change?) {
        guard !result.heldBack else {
            heldBackCalls += 1
            lastHeldBackMs = result.timestampMs
            return (nil, nil)
        }
        last = result
        let change = followIncident(result)
        // A failure while Lookout itself is offline is not the upstream's: it neither opens nor
        // holds an outage.
        var edge: OutageTracker.Change?
        if result.ok || !result.duringOffline {
            edge = outage.record(ok: result.ok, atMs: result.timestampMs, policy: source.outage, decisive: result.decisive)
        }
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
        // Latency is one attempt's, when an answer came; the whole call is counted apart.
        if result.durationSeconds.isFinite && result.durationSeconds >= 0 { tally.callSecondsSum += result.durationSeconds }
        tally.calls += 1
        recentOutcomes.append(ok: result.ok)
        if let latency = result.attemptSeconds {
            tally.duration.observe(latency)
            recentDurations.append(latency)
        }
        if let progress = result.download {
            download = progress
            tally.note(progress)
            tally.downloadBytesTotal += UInt64(max(0, progress.bytes))
            if progress.verified == false { tally.verifyFailures += 1 }
        }
        // Maintenance is planned: availability and SLO figures leave it out.
        guard !result.duringMaintenance else { return (change, edge) }
        health.record(result)
        hasHealth = true
        return (change, edge)
    }

    /// Follows the outage: begun by a failure, ended by a success. A failure while Lookout is
    /// offline is counted, but neither announced nor taken as the cause of an outage that has a
    /// cause of the upstream's own; the next failure that is not says the source is down. A cause
    /// is announced once per outage, so one that alternates between two reasons logs two lines.
    ///
    /// A network failure (no route, no DNS answer) is told at its second probe in a row: the
    /// first may be Lookout's own network going, which the connectivity monitor recognises only
    /// once most sources have failed. A network loss is then the one "network offline" line, not
    /// a "down" and an "up again" line for each source, and a blip of one probe tells nothing.
    private mutating func followIncident(_ result: ProbeResult) -> OutageChange? {
        if result.ok {
            let ended = incident
            incident = nil
            guard let ended, ended.announced else { return nil }
            return .ended(ended, upAtMs: result.timestampMs)
        }
        var current = incident ?? Incident(downSinceMs: result.timestampMs, cause: result, failedProbes: 0)
        defer { incident = current }
        current.failedProbes += 1
        guard !result.duringOffline else {
            if current.cause.duringOffline { current.cause = result }
            return nil
        }
        let previous = current.cause
        current.cause = result
        if result.failure?.category == .networkUnreachable,
            current.failedProbes == 1 || previous.failure?.category != .networkUnreachable
        {
            return nil
        }
        let reason = result.failure?.reason ?? ""
        guard !current.announcedReasons.contains(reason) else { return nil }
        let told = current.announcedReasons.last
        current.announcedReasons.append(reason)
        guard let told else { return .began(current) }
        return .causeChanged(current, previousReason: told)
    }

    mutating func note(_ progress: DownloadProgress) {
        download = progress
        tally.note(progress)
    }
}
