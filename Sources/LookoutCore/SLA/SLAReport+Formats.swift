import Foundation
import ResilientHTTP

/// The report as the API, the CSV and `lookout sla` give it: one set of fields, three shapes.
extension SLAReport {
    /// The report's fields into the object being written (`/api/v1/sla`).
    package func write(into json: inout JSONWriter) {
        json.field("source") { $0.string(source) }
        json.field("period") { $0.string(period.description) }
        json.field("from") { $0.string(Timestamp.rfc3339(startMs)) }
        json.field("to") { $0.string(Timestamp.rfc3339(endMs)) }
        json.field("time_zone") { $0.string(settings.timeZone) }
        json.field("complete") { $0.bool(complete) }
        json.field("measured_until") { $0.string(Timestamp.rfc3339(measuredUntilMs)) }
        json.field("target") { $0.number(settings.target) }
        json.field("uptime") { $0.number(uptime) }
        json.field("met") { $0.bool(met) }
        json.field("measured_seconds") { $0.number(Double(measuredMs) / 1000) }
        json.field("downtime_seconds") { $0.number(Double(downtimeMs) / 1000) }
        json.field("excluded_seconds") { $0.number(Double(excludedMs) / 1000) }
        json.field("not_measured_seconds") { $0.number(Double(unmeasuredMs) / 1000) }
        json.field("not_measured") { json in
            json.array { json in
                for span in unmeasured.spans {
                    json.object { json in
                        json.field("from") { $0.string(Timestamp.rfc3339(span.lowerBound)) }
                        json.field("to") { $0.string(Timestamp.rfc3339(span.upperBound)) }
                    }
                }
            }
        }
        json.field("budget") { json in
            json.object { json in
                json.field("allowed_seconds") { $0.number(Double(budgetMs) / 1000) }
                json.field("used_seconds") { $0.number(Double(downtimeMs) / 1000) }
                json.field("left_seconds") { $0.number(Double(budgetLeftMs) / 1000) }
                json.field("remaining_ratio") { $0.number(budgetRemainingRatio) }
                json.field("exhausted_at") { $0.string(budgetExhaustedAtMs.map(Timestamp.rfc3339)) }
            }
        }
        json.field("credit") { $0.number(credit?.credit) }
        json.field("credit_below") { $0.number(credit?.below) }
        json.field("claim_by") { $0.string(claimByDay) }
        json.field("outages") { json in
            json.array { json in
                for outage in outages { outage.write(into: &json) }
            }
        }
    }

    /// One row per outage (RFC 4180: CRLF, every field that needs it quoted, quotes doubled).
    package static let csvHeader = [
        "source", "period", "start", "end", "duration_seconds", "counted_seconds", "excluded_seconds", "not_measured_seconds", "category", "reason",
        "http_status", "server_message", "detail", "failed_probes", "location", "vendor_acknowledged", "vendor_lag_seconds", "vendor_incident",
    ]

    package func csvRows() -> [[String]] {
        outages.map { outage in
            let end = outage.endMs ?? measuredUntilMs
            return [
                source, period.description, Timestamp.rfc3339(outage.startMs), outage.endMs.map(Timestamp.rfc3339) ?? "",
                SLAReport.seconds(end - outage.startMs), SLAReport.seconds(outage.countedMs), SLAReport.seconds(outage.excludedMs),
                SLAReport.seconds(outage.unmeasuredMs), outage.stored.category, outage.stored.reason, outage.stored.httpStatus.map(String.init) ?? "",
                outage.stored.serverMessage ?? "", outage.stored.detail, String(outage.stored.failedProbes), outage.stored.location ?? "",
                outage.stored.vendorAcknowledgedMs.map(Timestamp.rfc3339) ?? "", outage.vendorLagMs.map(SLAReport.seconds) ?? "",
                outage.stored.vendorIncident ?? "",
            ]
        }
    }

    /// A CSV file of `reports`' outages, header first.
    package static func csv(_ reports: [SLAReport]) -> String {
        var text = csvLine(csvHeader)
        for report in reports {
            for row in report.csvRows() { text += csvLine(row) }
        }
        return text
    }

    static func csvLine(_ fields: [String]) -> String {
        fields.map { field in
            // A field a spreadsheet would run as a formula is prefixed with a quote (OWASP).
            var value = field
            if let first = value.first, "=+-@\t\r".contains(first), Double(value) == nil { value = "'" + value }
            guard value.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return value }
            return "\"" + value.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        }.joined(separator: ",") + "\r\n"
    }

    static func seconds(_ ms: Int64) -> String {
        ms % 1000 == 0 ? String(ms / 1000) : String(format: "%.3f", Double(ms) / 1000)
    }

    /// What `lookout sla` prints for one source.
    package var text: String {
        var lines: [String] = []
        let measured = uptime.map { SLASettings.percent($0) } ?? "nothing measured"
        lines.append("\(source) — \(period.title) (\(settings.timeZone))\(complete ? "" : ", so far")")
        lines.append("  promised \(SLASettings.percent(settings.target)), measured \(measured): \(met ? "met" : "missed")")
        var budget = "  budget \(SLAReport.duration(budgetMs)), used \(SLAReport.duration(downtimeMs)), "
        budget += budgetLeftMs >= 0 ? "left \(SLAReport.duration(budgetLeftMs))" : "over by \(SLAReport.duration(-budgetLeftMs))"
        if let exhausted = budgetExhaustedAtMs { budget += "; ran out \(Timestamp.rfc3339(exhausted))" }
        lines.append(budget)
        if let credit {
            lines.append("  credit \(SLASettings.percent(credit.credit)) (below \(SLASettings.percent(credit.below))); claim by \(claimByDay)")
        }
        if excludedMs > 0 { lines.append("  excluded (maintenance) \(SLAReport.duration(excludedMs))") }
        if unmeasuredMs > 0 { lines.append("  not measured (Lookout not running) \(SLAReport.duration(unmeasuredMs))") }
        for outage in outages {
            let end = outage.endMs.map(Timestamp.rfc3339) ?? "ongoing"
            var line = "  - \(Timestamp.rfc3339(outage.startMs)) → \(end) \(SLAReport.duration(outage.countedMs)) \(outage.stored.reason)"
            if let status = outage.stored.httpStatus { line += " HTTP \(status)" }
            if let words = outage.stored.serverMessage { line += " \"\(PrintableText.escape(words))\"" }
            line += ", \(outage.stored.failedProbes) failed probes"
            if let lag = outage.vendorLagMs { line += ", vendor acknowledged after \(SLAReport.duration(lag))" }
            lines.append(line)
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

extension SLAReport.Outage {
    func write(into json: inout JSONWriter) {
        json.object { json in
            json.field("start") { $0.string(Timestamp.rfc3339(startMs)) }
            json.field("end") { $0.string(endMs.map(Timestamp.rfc3339)) }
            json.field("began_before_period") { $0.bool(beganBefore) }
            json.field("goes_on_after_period") { $0.bool(goesOnAfter) }
            json.field("counted_seconds") { $0.number(Double(countedMs) / 1000) }
            json.field("excluded_seconds") { $0.number(Double(excludedMs) / 1000) }
            json.field("not_measured_seconds") { $0.number(Double(unmeasuredMs) / 1000) }
            json.field("category") { $0.string(stored.category) }
            json.field("reason") { $0.string(stored.reason) }
            json.field("http_status") { $0.int(stored.httpStatus.map(Int64.init)) }
            json.field("server_message") { $0.string(stored.serverMessage) }
            json.field("detail") { $0.string(stored.detail) }
            json.field("failed_probes") { $0.int(Int64(stored.failedProbes)) }
            json.field("location") { $0.string(stored.location) }
            json.field("vendor_acknowledged") { $0.string(stored.vendorAcknowledgedMs.map(Timestamp.rfc3339)) }
            json.field("vendor_lag_seconds") { $0.number(vendorLagMs.map { Double($0) / 1000 }) }
            json.field("vendor_incident") { $0.string(stored.vendorIncident) }
        }
    }
}
