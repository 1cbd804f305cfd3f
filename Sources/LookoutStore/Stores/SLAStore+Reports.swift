import Foundation
import LookoutCore

extension SLAStore {
    /// The SLA reports of `sources` (those with an `sla`) over `period`, or each one's current
    /// period when nil, at `nowMs`; `windows` are the config's maintenance windows (the admin
    /// API's are read here, ended ones included). One read of each table for all sources.
    /// With `previous`, each source's period before its current one (`period` nil).
    package func reports(sources: [SourceConfig], period: SLAPeriod?, previous: Bool = false, windows: [MaintenanceWindow], nowMs: Int64) throws
        -> [SLAReport]
    {
        let promised = sources.compactMap { source in source.sla.map { (source, $0) } }
        guard !promised.isEmpty else { return [] }
        let asked = promised.map { source, sla -> (SourceConfig, SLASettings, SLAPeriod, Range<Int64>) in
            let zone = TimeZone(identifier: sla.timeZone) ?? TimeZone(identifier: "UTC")!
            let current = SLAPeriod.holding(nowMs, kind: sla.period, in: zone)
            let chosen = period ?? (previous ? current.previous(in: zone) : current)
            let (start, end) = chosen.bounds(in: zone)
            return (source, sla, chosen, start..<end)
        }
        let fromMs = asked.map(\.3.lowerBound).min() ?? nowMs
        let toMs = asked.map(\.3.upperBound).max() ?? nowMs
        let outages = try outages(fromMs: fromMs, toMs: toMs)
        let (gaps, firstSeen) = try unmeasured(fromMs: fromMs, toMs: toMs, nowMs: nowMs)
        let added = try MaintenanceStore(database: database).current(nowMs: fromMs)
        let vendors = try vendorMaintenance(fromMs: fromMs, toMs: toMs)
        // Each window's stretches once, not once per source it covers.
        let stretches = (windows + added).map { ($0, Intervals($0.occurrences(in: fromMs..<toMs))) }
        return asked.map { source, sla, chosen, span in
            var excluded = Intervals()
            if sla.exclude.contains(.maintenance) {
                for (window, spans) in stretches where window.covers(source) {
                    for stretch in spans.clamped(to: span).spans { excluded.insert(stretch) }
                }
            }
            if sla.exclude.contains(.vendorMaintenance), let announced = vendors[source.name] {
                for stretch in announced.clamped(to: span).spans { excluded.insert(stretch) }
            }
            var notMeasured = gaps.clamped(to: span)
            // Before the source was first probed nobody measured it (a rename keeps the date).
            if let seen = firstSeen[source.name], seen > span.lowerBound { notMeasured.insert(span.lowerBound..<min(seen, span.upperBound)) }
            if firstSeen[source.name] == nil { notMeasured.insert(span) }
            return SLAReport(
                source: source.name, settings: sla, period: chosen, nowMs: nowMs, outages: outages[source.name] ?? [], unmeasured: notMeasured,
                excluded: excluded)
        }
    }
}
