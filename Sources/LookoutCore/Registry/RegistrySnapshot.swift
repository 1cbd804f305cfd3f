import ResilientHTTP

/// What every reader takes — `/metrics`, the status page, the JSON API, the alert rules,
/// `lookout status` (through the API): every source's record at one moment, its health figures
/// over the standard windows, its breaker, and the service's own state. A value: nothing in it
/// changes while a reader works, and no reader reaches into a live service.
package struct RegistrySnapshot: Sendable {
    /// When it was taken, in milliseconds since 1970; every figure is as of then.
    package let nowMs: Int64
    /// In config order.
    package let records: [SourceRecord]
    /// Each record's figures over `HealthSummary.windows`; nil for a source with no health yet.
    package let summaries: [HealthSummary?]
    /// Share of the last 15 one-minute rounds in which some but not all sources failed.
    package let partialFailureRatio: Double
    /// Each record's circuit breaker; nil for an upstream the client does not know.
    package internal(set) var breakers: [CircuitBreaker?]
    /// Tokens left in each record's rate limiter; nil without a limit.
    package internal(set) var tokens: [Double?]
    /// Lookout's own network is down: per-source failures are held back.
    package internal(set) var offline = false
    package internal(set) var shard = Shard()
    package internal(set) var reload = Monitor.ReloadStatus(lastSuccessMs: 0)
    package internal(set) var scheduler = ProbeScheduler.Stats()
    /// The sources in a maintenance window now, with the window's name, note and end.
    package internal(set) var maintenance: [String: MaintenanceCalendar.Entry] = [:]
    /// The config in force (hooks, admin token, alert settings).
    package internal(set) var config = LookoutConfig(sources: [])
    /// Where each source some other depends on is in `records`, for `blockedBy`: a search of
    /// every record per dependency made a page of 10,000 dependent sources O(n²).
    private let dependedOn: [String: Int]

    init(nowMs: Int64, records: [SourceRecord], partialFailureRatio: Double) {
        self.nowMs = nowMs
        self.records = records
        self.partialFailureRatio = partialFailureRatio
        // Read in place: a copied record would retain and release its rings and dictionaries.
        summaries = records.withUnsafeBufferPointer { records in
            records.indices.map { records[$0].hasHealth ? records[$0].health.summary(nowMs: nowMs) : nil }
        }
        breakers = Array(repeating: nil, count: records.count)
        tokens = Array(repeating: nil, count: records.count)
        var parents: Set<String> = []
        for index in records.indices where !records[index].source.dependsOn.isEmpty { parents.formUnion(records[index].source.dependsOn) }
        var dependedOn: [String: Int] = [:]
        if !parents.isEmpty {
            for index in records.indices where parents.contains(records[index].name) { dependedOn[records[index].name] = index }
        }
        self.dependedOn = dependedOn
    }

    package var names: [String] { records.map(\.name) }

    /// Each record's config, in order. Read through the record's shared part: a loop over
    /// `records` (`for record in`, or `records[i].source` from another module) copies each whole
    /// record, 900 instructions a source at every scrape and page.
    package var sources: [SourceConfig] { records.map(\.fixed.source) }

    /// The error rate of each of the last 60 minutes of record `index`, oldest first; nil for
    /// minutes without probes.
    package func minuteErrorRates(_ index: Int) -> [Double?] {
        records[index].health.minuteErrorRates(nowMs: nowMs)
    }

    /// The counts of record `index` over any window (the standard ones come from its summary).
    package func counts(_ index: Int, windowMs: Int64) -> BucketCounts? {
        guard let summary = summaries[index] else { return nil }
        return summary.counts(windowMs: windowMs) ?? records[index].health.counts(windowMs: windowMs, nowMs: nowMs)
    }

    /// The sources record `index` depends on (directly or through others) that are down now:
    /// while any is, its own alerts are held back.
    package func blockedBy(_ index: Int) -> [String] {
        guard !records[index].source.dependsOn.isEmpty else { return [] }
        var down: [String] = []
        var seen: Set<String> = [records[index].name]
        var queue = records[index].source.dependsOn
        while let name = queue.popLast() {
            guard seen.insert(name).inserted, let parent = dependedOn[name] else { continue }
            if records[parent].incident != nil { down.append(name) }
            queue += records[parent].source.dependsOn
        }
        return down.sorted()
    }

    /// Operational, degraded, outage, offline or pending, as the status page's banner says.
    /// Sources in maintenance do not count: their failures are planned.
    package var overall: String {
        if offline { return "offline" }
        var probed = 0
        var failing = 0
        for index in records.indices where maintenance[records[index].name] == nil {
            guard let ok = records[index].last?.ok else { continue }
            probed += 1
            if !ok { failing += 1 }
        }
        guard probed > 0 else { return "pending" }
        if failing == 0 { return "operational" }
        return failing == probed ? "outage" : "degraded"
    }
}
