import Foundation

/// An outage by its source's policy as the store keeps it: from its first failed probe to its
/// first success, with the cause that opened it.
package struct SLAOutage: Sendable, Equatable {
    package var startedMs: Int64
    /// nil while it lasts.
    package var endedMs: Int64?
    package var failedProbes: Int
    package var category: String
    package var reason: String
    package var httpStatus: Int?
    package var detail: String
    /// The server's own words (a JSON error message, a status line's text).
    package var serverMessage: String?
    /// Where this Lookout probes from (`location`).
    package var location: String?
    package var vendorAcknowledgedMs: Int64?
    package var vendorIncident: String?

    package init(
        startedMs: Int64, endedMs: Int64?, failedProbes: Int, category: String, reason: String, httpStatus: Int? = nil, detail: String = "",
        serverMessage: String? = nil, location: String? = nil, vendorAcknowledgedMs: Int64? = nil, vendorIncident: String? = nil
    ) {
        self.startedMs = startedMs
        self.endedMs = endedMs
        self.failedProbes = failedProbes
        self.category = category
        self.reason = reason
        self.httpStatus = httpStatus
        self.detail = detail
        self.serverMessage = serverMessage
        self.location = location
        self.vendorAcknowledgedMs = vendorAcknowledgedMs
        self.vendorIncident = vendorIncident
    }
}

/// One source's SLA over one period: what was promised, what was measured, the downtime budget,
/// the credit reached and the evidence, outage by outage.
///
/// uptime = (measured − excluded − downtime) ÷ (measured − excluded), where measured is the
/// period so far less the time Lookout was not running (told apart, never counted as up or
/// down), excluded is maintenance as `exclude` asks, and downtime is each outage's time that is
/// neither. The budget is what the target allows of the whole period less its exclusions.
package struct SLAReport: Sendable {
    /// One outage as it falls in the period: cut at the period's bounds (an outage over a
    /// month's end is in both months, each with its part).
    package struct Outage: Sendable {
        package var stored: SLAOutage
        package var startMs: Int64
        /// nil while it lasts.
        package var endMs: Int64?
        /// Its downtime in the period: less maintenance excluded and time not measured.
        package var countedMs: Int64
        /// Its time in a maintenance window `exclude` leaves out.
        package var excludedMs: Int64
        /// Its time while Lookout was not running.
        package var unmeasuredMs: Int64
        /// It began before the period (or goes on after it).
        package var beganBefore: Bool
        package var goesOnAfter: Bool

        /// How long after it began the vendor acknowledged it.
        package var vendorLagMs: Int64? { stored.vendorAcknowledgedMs.map { max(0, $0 - stored.startedMs) } }
    }

    package var source: String
    package var settings: SLASettings
    package var period: SLAPeriod
    package var startMs: Int64
    package var endMs: Int64
    /// The end of what is measured: the period's end, or now while it runs.
    package var measuredUntilMs: Int64
    package var complete: Bool { measuredUntilMs >= endMs }
    /// Excluded time (maintenance) over the whole period, and what of it has passed.
    package var excludedMs: Int64
    package var excludedSoFarMs: Int64
    /// Time Lookout was not running, and the stretches.
    package var unmeasuredMs: Int64
    package var unmeasured: Intervals
    /// The time the uptime is measured over: passed, less excluded and not measured.
    package var measuredMs: Int64
    package var downtimeMs: Int64
    /// nil when nothing was measured.
    package var uptime: Double?
    /// Downtime the target allows in the whole period.
    package var budgetMs: Int64
    /// When the downtime reached the budget, if it did.
    package var budgetExhaustedAtMs: Int64?
    package var outages: [Outage]

    package var budgetLeftMs: Int64 { budgetMs - downtimeMs }
    /// Of the budget, what is left (negative once overspent); nil with no budget (100%).
    package var budgetRemainingRatio: Double? {
        budgetMs > 0 ? Double(budgetLeftMs) / Double(budgetMs) : (downtimeMs > 0 ? -1 : nil)
    }
    package var met: Bool { (uptime ?? 1) >= settings.target }
    /// The credit the uptime earns (so far, while the period runs).
    package var credit: SLASettings.Credit? { uptime.flatMap(settings.credit(forUptime:)) }
    /// The last instant a claim can be filed.
    package var claimByMs: Int64 { endMs.addingClamped(settings.claimWithin.totalMilliseconds) }
    package var timeZone: TimeZone { TimeZone(identifier: settings.timeZone) ?? TimeZone(identifier: "UTC")! }
    /// `2027-01-30`.
    package var claimByDay: String { SLAPeriod.day(claimByMs, in: timeZone) }

    /// - Parameters:
    ///   - outages: the source's stored outages that may touch the period, in any order.
    ///   - unmeasured: when Lookout was not running, or the source not configured yet.
    ///   - excluded: maintenance that `settings.exclude` leaves out, over the whole period.
    package init(
        source: String, settings: SLASettings, period: SLAPeriod, nowMs: Int64, outages: [SLAOutage], unmeasured: Intervals, excluded: Intervals
    ) {
        self.source = source
        self.settings = settings
        self.period = period
        let tz = TimeZone(identifier: settings.timeZone) ?? TimeZone(identifier: "UTC")!
        (startMs, endMs) = period.bounds(in: tz)
        measuredUntilMs = max(startMs, min(endMs, nowMs))
        let whole = startMs..<endMs
        let passed = startMs..<measuredUntilMs
        let excludedWhole = excluded.clamped(to: whole)
        let excludedPassed = excludedWhole.clamped(to: passed)
        excludedMs = excludedWhole.total
        excludedSoFarMs = excludedPassed.total
        // Excluded time is excluded, measured or not; the rest Lookout missed is "not measured".
        self.unmeasured = unmeasured.clamped(to: passed).subtracting(excludedPassed)
        unmeasuredMs = self.unmeasured.total
        measuredMs = max(0, (measuredUntilMs - startMs) - excludedSoFarMs - unmeasuredMs)
        let removed = Intervals(excludedPassed.spans + self.unmeasured.spans)
        let (periodStart, periodEnd, notMeasured) = (startMs, endMs, self.unmeasured)
        var down = Intervals()
        var kept: [Outage] = []
        for stored in outages.sorted(by: { $0.startedMs < $1.startedMs }) {
            let end = min(stored.endedMs ?? measuredUntilMs, measuredUntilMs)
            let lower = max(stored.startedMs, startMs)
            guard lower < end || (lower == end && stored.endedMs == nil && lower < measuredUntilMs) else { continue }
            let span = lower..<max(lower, end)
            let counted = Intervals([span]).subtracting(removed)
            for span in counted.spans { down.insert(span) }
            kept.append(
                Outage(
                    stored: stored, startMs: lower, endMs: stored.endedMs.map { min($0, periodEnd) }, countedMs: counted.total,
                    excludedMs: excludedPassed.overlap(with: span), unmeasuredMs: notMeasured.overlap(with: span),
                    beganBefore: stored.startedMs < periodStart, goesOnAfter: (stored.endedMs ?? .max) > periodEnd))
        }
        self.outages = kept
        // Overlapping rows (a restart that lost an end) count once.
        downtimeMs = down.total
        uptime = measuredMs > 0 ? Double(measuredMs - min(downtimeMs, measuredMs)) / Double(measuredMs) : nil
        let budgetable = max(0, (endMs - startMs) - excludedMs)
        budgetMs = Int64((Double(budgetable) * (1 - settings.target)).rounded())
        var used: Int64 = 0
        budgetExhaustedAtMs = nil
        for span in down.spans {
            let length = span.upperBound - span.lowerBound
            if used + length > budgetMs || (budgetMs == 0 && length > 0) {
                budgetExhaustedAtMs = span.lowerBound + max(0, budgetMs - used)
                break
            }
            used += length
        }
    }

    /// "21m 36s", "3h 5m", "2d 4h", "0s": the two largest units.
    package static func duration(_ ms: Int64) -> String {
        let seconds = max(0, ms) / 1000
        let units: [(Int64, String)] = [(86_400, "d"), (3600, "h"), (60, "m"), (1, "s")]
        var parts: [String] = []
        var rest = seconds
        for (size, name) in units where parts.count < 2 {
            let count = rest / size
            if count > 0 || (!parts.isEmpty) {
                if count > 0 { parts.append("\(count)\(name)") }
                rest -= count * size
                if !parts.isEmpty && count == 0 { break }
            }
        }
        return parts.isEmpty ? "0s" : parts.joined(separator: " ")
    }

    /// What `SLABudgetExhausted` says: "payments-api has used its 21m 36s of downtime for
    /// November: 99.95% promised, 99.91% so far".
    package var budgetSentence: String {
        let measured = uptime.map { SLASettings.percent($0) } ?? "nothing measured"
        return "\(source) has used its \(SLAReport.duration(budgetMs)) of downtime for \(period.shortTitle): "
            + "\(SLASettings.percent(settings.target)) promised, \(measured)\(complete ? "" : " so far")"
    }

    /// What the period's end tells when it was missed: "payments-api: 99.82% in November against
    /// 99.95% promised — a 10% credit; claim by 2027-01-30".
    package var missedSentence: String {
        let measured = uptime.map { SLASettings.percent($0) } ?? "nothing measured"
        let credit = credit.map { "a \(SLASettings.percent($0.credit)) credit; claim by \(claimByDay)" } ?? "no credit in its schedule"
        return "\(source): \(measured) in \(period.shortTitle) against \(SLASettings.percent(settings.target)) promised — \(credit)"
    }
}
