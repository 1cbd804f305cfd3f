import ResilientHTTP

extension AlertEvaluator.Inputs {
    /// What the rules read: the measurements of every source in `snapshot` and of the service,
    /// the same figures `/metrics` and the pages show.
    package init(_ snapshot: RegistrySnapshot) {
        let records = snapshot.records
        let summaries = snapshot.summaries
        let breakers = snapshot.breakers.map { $0?.state }
        var positions: [String: Int] = [:]
        positions.reserveCapacity(records.count)
        var probed = 0
        var failing = 0
        var known = 0
        var open = 0
        for index in records.indices {
            positions[records[index].name] = positions[records[index].name] ?? index
            if records[index].tally.probed {
                probed += 1
                if !records[index].tally.lastOk { failing += 1 }
            }
            if let state = breakers[index] {
                known += 1
                if state.isOpen { open += 1 }
            }
        }
        let partial = snapshot.partialFailureRatio
        let offline = snapshot.offline
        self.init(sources: snapshot.names, offline: offline, down: { name in positions[name].map { records[$0].outage.down } ?? false }) {
            [probed, failing, known, open] metric, _ in
            switch metric {
            case .sourcesFailingRatio: return probed == 0 ? nil : Double(failing) / Double(probed)
            case .circuitsOpenRatio: return known == 0 ? nil : Double(open) / Double(known)
            case .partialFailureRatio: return partial
            case .networkOffline: return offline ? 1 : 0
            default: return nil
            }
        } source: { name in
            guard let index = positions[name] else { return { _, _ in nil } }
            let summary = summaries[index]
            let up = records[index].tally.probed ? records[index].tally.lastOk : nil
            let breaker = breakers[index]
            let health = records[index].health
            let now = snapshot.nowMs
            return { metric, window in
                // Standard windows come from the summary; any other window is summed on demand.
                // A window the history does not cover yet has no value: a burn rate over 1 h
                // does not fire on 15 s of probes.
                func counts(_ standard: Int64) -> BucketCounts? {
                    let windowMs = window?.totalMilliseconds ?? standard
                    guard health.covers(windowMs: windowMs, nowMs: now) else { return nil }
                    return snapshot.counts(index, windowMs: windowMs)
                }
                func rate(_ standard: Int64) -> Double? {
                    counts(standard).flatMap(HealthWindow.errorRate)
                }
                switch metric {
                case .errorRate: return rate(HealthWindow.fiveMinutes)
                case .probes: return counts(HealthWindow.fiveMinutes).map { Double($0.probes) }
                case .failures: return counts(HealthWindow.fiveMinutes).map { Double($0.failures) }
                case .retries: return counts(HealthWindow.fifteenMinutes).map { Double($0.retried) }
                case .retrySuccessRatio:
                    return counts(HealthWindow.fifteenMinutes).flatMap(HealthWindow.retrySuccessRatio)
                case .availability: return rate(HealthWindow.day).map { 1 - $0 }
                case .burnRate: return rate(HealthWindow.hour).map { HealthWindow.burnRate(errorRate: $0) }
                case .up: return up.map { $0 ? 1 : 0 }
                case .down: return records[index].tally.probed ? (records[index].outage.down ? 1 : 0) : nil
                case .breakerOpens:
                    return Double(records[index].breakerOpens(windowMs: window?.totalMilliseconds ?? HealthWindow.fifteenMinutes, nowMs: now))
                case .breakerOpen:
                    return breaker?.isOpen == true ? 1 : 0  // no breaker yet: closed, as /metrics shows it
                case .insecureBlocked: return summary.map { $0.insecureBlocked ? 1 : 0 }
                case .certificateDaysLeft:
                    return records[index].tally.certificateExpirySeconds.map { ($0 - Double(now) / 1000) / 86_400 }
                case .domainDaysLeft:
                    return records[index].tally.domainExpirySeconds.map { ($0 - Double(now) / 1000) / 86_400 }
                case .slaBudgetLeft: return records[index].tally.sla?.budgetRemaining
                case .slaPreviousMissed: return records[index].tally.sla.map { $0.missedSentence == nil ? 0 : 1 }
                case .recoveredAfterRetries:
                    // Events, not a rate: no coverage needed; no history at all is no data.
                    return snapshot.counts(index, windowMs: window?.totalMilliseconds ?? HealthWindow.minute).map { $0.retrySucceeded > 0 ? 1 : 0 }
                default: return nil
                }
            }
        } context: { name in
            guard let index = positions[name] else { return nil }
            // The incident's cause is the upstream's own failure, never a refused call.
            let incident = records[index].incident
            guard let cause = incident?.cause ?? records[index].last, let failure = cause.failure, let message = cause.message else { return nil }
            return AlertEvaluator.Context(message: message, recovery: failure.recoverySuggestion, downSinceMs: incident?.downSinceMs)
        }
        notes = { name in
            guard let index = positions[name], let sla = records[index].tally.sla else { return [:] }
            return ["sla_budget": sla.budgetSentence, "sla_missed": sla.missedSentence ?? "", "sla_report": sla.reportPath]
        }
    }
}
