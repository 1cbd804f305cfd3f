import Logging
import ResilientHTTP
import Synchronization

/// One record per configured source, in config order: the one place per-source state lives.
/// Probe results, client events and download progress come in; `apply` follows a new config
/// (adds, keeps, removes records together); readers take a `RegistrySnapshot`.
///
/// ```swift
/// let registry = SourceRegistry(sources: config.sources)
/// registry.record(result)                      // from the scheduler
/// let snapshot = registry.snapshot(nowMs: now) // for /metrics, the page, the rules
/// ```
package final class SourceRegistry: ProbeResultSink, ClientEventSink {
    private struct State {
        /// In config order; read in place (a dictionary's getter would copy a record's rings).
        var records: [SourceRecord] = []
        var positions: [String: Int] = [:]
        var rounds = PartialFailureRounds()
    }

    private let state = Mutex(State())
    /// Called when a source goes down or comes back up by its outage policy (the alert service
    /// evaluates then, instead of at its next tick).
    private let downListeners = Mutex<[@Sendable () -> Void]>([])
    /// Told each outage's start and end by the source's policy, with its cause (the store keeps
    /// them as the SLA's evidence).
    private let edgeListeners = Mutex<[@Sendable (OutageEdge) -> Void]>([])
    /// Where a source going down, failing differently and coming back up are told; a line for
    /// each change, not for each failed probe.
    private let logger: Logger?

    package init(sources: [SourceConfig] = [], logger: Logger? = nil) {
        self.logger = logger
        apply(sources)
    }

    /// Follows a new config: sources that stay keep everything measured, new ones start empty,
    /// removed ones are forgotten (one that the log had said was down gets a last line, so no
    /// outage is left open there). Returns the names removed.
    @discardableResult
    package func apply(_ sources: [SourceConfig]) -> [String] {
        let (removed, outages) = state.withLock { state -> ([String], [SourceRecord.Incident]) in
            // The same sources in the same order (the first start's second apply, a reload that
            // changed settings only): each record follows its source in place, none is copied.
            if state.records.count == sources.count, sources.indices.allSatisfy({ state.records[$0].name == sources[$0].name }) {
                for index in sources.indices { state.records[index].reconfigure(sources[index]) }
                return ([], [])
            }
            var records: [SourceRecord] = []
            records.reserveCapacity(sources.count)
            var positions: [String: Int] = [:]
            positions.reserveCapacity(sources.count)
            for source in sources where positions[source.name] == nil {
                var record = state.positions[source.name].map { state.records[$0] } ?? SourceRecord(source: source)
                record.reconfigure(source)
                positions[source.name] = records.count
                records.append(record)
            }
            let gone = state.records.filter { positions[$0.name] == nil }
            state.records = records
            state.positions = positions
            return (gone.map(\.name), gone.compactMap(\.incident).filter(\.announced))
        }
        if let logger, !outages.isEmpty {
            let nowMs = Timestamp.nowMs()
            for incident in outages {
                logger.info("source removed from the config while down", metadata: SourceRegistry.ending(incident, atMs: nowMs))
            }
        }
        return removed
    }

    package func record(_ result: ProbeResult) {
        let (change, edge) = state.withLock { state -> (SourceRecord.OutageChange?, OutageEdge?) in
            guard let position = state.positions[result.source] else { return (nil, nil) }
            let (change, flip) = state.records[position].record(result)
            if !result.heldBack && !result.duringMaintenance { state.rounds.record(result, marks: &state.records[position].roundMarks) }
            return (change, flip.map { OutageEdge(source: result.source, change: $0, cause: state.records[position].incident?.cause ?? result) })
        }
        if let change, let logger { SourceRegistry.log(change, to: logger) }
        if let edge {
            for listener in downListeners.withLock({ $0 }) { listener() }
            for listener in edgeListeners.withLock({ $0 }) { listener(edge) }
        }
    }

    /// Calls `listener` (outside any lock, on the prober's task) with each outage's start and
    /// end by its source's policy.
    package func onOutageEdge(_ listener: @escaping @Sendable (OutageEdge) -> Void) {
        edgeListeners.withLock { $0.append(listener) }
    }

    /// Calls `listener` (outside any lock) whenever a source goes down or comes back up by its
    /// outage policy.
    package func onDownChange(_ listener: @escaping @Sendable () -> Void) {
        downListeners.withLock { $0.append(listener) }
    }

    /// One line for a change in a source's outage, e.g. `level=warning msg="source down"
    /// attempts=3 category=server_error http_status=503 message="…" reason=http_503 source=acme`.
    /// A planned outage (in a maintenance window) is told at info level, with `maintenance=true`.
    private static func log(_ change: SourceRecord.OutageChange, to logger: Logger) {
        let level: Logger.Level = change.incident.cause.duringMaintenance ? .info : .warning
        switch change {
        case .began(let incident), .causeChanged(let incident, _):
            var metadata = incident.cause.logMetadata
            if case .causeChanged(_, let previousReason) = change { metadata["previous_reason"] = "\(previousReason)" }
            // Past its first failure: a new cause, or one announced late because the first
            // failures came while Lookout itself was offline.
            if incident.failedProbes > 1 {
                metadata["down_for"] = downFor(incident, atMs: incident.cause.timestampMs)
                metadata["failed_probes"] = "\(incident.failedProbes)"
            }
            let message: Logger.Message = if case .began = change { "source down" } else { "source still down, failing differently" }
            logger.log(level: level, message, metadata: metadata)
        case .ended(let incident, let upAtMs):
            logger.info("source up again", metadata: ending(incident, atMs: upAtMs))
        }
    }

    /// How long an outage has lasted at `atMs`, in whole seconds as a config writes it: `4m14s`.
    private static func downFor(_ incident: SourceRecord.Incident, atMs: Int64) -> Logger.MetadataValue {
        "\(ConfigValues.format(.seconds(incident.downForMs(nowMs: atMs) / 1000)))"
    }

    /// What a line about an outage's end says: how long it lasted, its failed probes, its last cause.
    private static func ending(_ incident: SourceRecord.Incident, atMs: Int64) -> Logger.Metadata {
        [
            "source": "\(incident.cause.source)", "down_for": downFor(incident, atMs: atMs),
            "failed_probes": "\(incident.failedProbes)", "last_reason": "\(incident.cause.failure?.reason ?? "")",
        ]
    }

    package func handle(_ event: ClientEvent) {
        switch event {
        case .callNotPermitted: return  // counted by the breaker itself
        case .attemptFinished(_, let attempt) where attempt.failure == nil: return  // nothing to count
        case .breakerTransition(let upstream, let transition, _):
            state.withLock { state in
                guard let position = state.positions[upstream] else { return }
                state.records[position].note(transition)
            }
        default:
            state.withLock { state in
                guard let position = state.positions[event.upstream] else { return }
                state.records[position].client.note(event)
            }
        }
    }

    /// A download's progress while it runs.
    package func updateDownload(_ source: String, _ progress: DownloadProgress) {
        state.withLock { state in
            guard let position = state.positions[source] else { return }
            state.records[position].note(progress)
        }
    }

    /// When each watched source's domain registration expires (nil: not known), from
    /// `DomainWatch`.
    package func setDomainExpiries(_ expiries: [String: Int64?]) {
        state.withLock { state in
            for (source, expiresMs) in expiries {
                guard let position = state.positions[source] else { continue }
                state.records[position].tally.domainExpirySeconds = expiresMs.map { Double($0 / 1000) }
            }
        }
    }

    /// Where each source with an `sla` stands (from `SLAWatch`); others have none.
    package func setSLA(_ standings: [String: SLAStanding]) {
        state.withLock { state in
            for index in state.records.indices {
                let standing = standings[state.records[index].name]
                if state.records[index].tally.sla != standing { state.records[index].tally.sla = standing }
            }
        }
    }

    /// An outage of `source` in progress when Lookout last stopped (see `SourceRecord.restoreOutage`).
    package func restoreOutage(source: String, downSinceMs: Int64, failedProbes: Int, cause: ProbeResult) {
        state.withLock { state in
            guard let position = state.positions[source] else { return }
            state.records[position].restoreOutage(downSinceMs: downSinceMs, failedProbes: failedProbes, cause: cause)
        }
    }

    /// Adds stored counts (from `probe_rollups`) after a restart: minutes, or hourly sums.
    /// Counts of sources not configured are ignored.
    package func restore(source: String, atMs: Int64, counts: BucketCounts, hourly: Bool) {
        state.withLock { state in
            guard let position = state.positions[source] else { return }
            state.records[position].health.add(counts, atMs: atMs, coarseOnly: hourly)
            state.records[position].hasHealth = true
        }
    }

    /// Adds stored latency bucket counts (a minute's, from `probe_rollups`) after a restart.
    package func restoreLatency(source: String, atMs: Int64, buckets: [Int]) {
        state.withLock { state in
            guard let position = state.positions[source] else { return }
            state.records[position].health.addLatency(buckets, atMs: atMs)
        }
    }

    /// The fallback to show for `source` while it is down: its configured fallback, if that is up.
    package func healthyFallback(for source: SourceConfig) -> String? {
        guard let name = source.fallback else { return nil }
        return state.withLock { state in
            state.positions[name].map { state.records[$0].tally.lastOk } == true ? name : nil
        }
    }

    /// True once every source has been probed (or refused by a breaker restored open) at least once.
    package var everySourceProbed: Bool {
        state.withLock { $0.records.allSatisfy(\.attempted) }
    }

    /// Every source (or those of `names`, in that order) at `nowMs`. Taking it copies no
    /// record under the lock: the snapshot shares the registry's storage until the next write.
    package func snapshot(nowMs: Int64 = Timestamp.nowMs(), names: [String]? = nil) -> RegistrySnapshot {
        let (records, ratio) = state.withLock { state -> ([SourceRecord], Double) in
            let ratio = state.rounds.partialFailureRatio(nowMs: nowMs)
            guard let names else { return (state.records, ratio) }
            return (names.compactMap { state.positions[$0].map { state.records[$0] } }, ratio)
        }
        return RegistrySnapshot(nowMs: nowMs, records: records, partialFailureRatio: ratio)
    }
}
