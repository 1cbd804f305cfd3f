import Foundation
import LookoutCore

/// `/sla`: the printable SLA report, a section per source (under its group's heading): what was
/// promised, what was measured, the budget, the credit reached, the deadline to claim, and the
/// outages as evidence. A4 from a browser's "Print to PDF"; a card per outage at phone width.
struct SLAPage {
    let reports: [SLAReport]
    let title: String
    let query: [String: String]
    /// Which group each source is in, in config order (nil: none).
    var groups: [String: String] = [:]

    static let contentSecurityPolicy =
        "default-src 'none'; style-src '\(StatusPage.hashSource(styleSource))'; img-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

    static let styleSource = """

        :root { color-scheme: light dark; --fg: #1f2328; --bg: #fff; --muted: #59636e; --line: #d1d9e0; --ok: #1a7f37; --down: #cf222e; }
        @media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --bg: #0d1117; --muted: #9198a1; --line: #3d444d; --ok: #3fb950; --down: #f85149; } }
        body { font: 15px/1.45 system-ui, -apple-system, sans-serif; margin: 0 auto; max-width: 70rem; padding: 1rem; color: var(--fg); background: var(--bg); }
        h1 { font-size: 1.4rem; margin: 0 0 .25rem; } h2 { font-size: 1.15rem; margin: 0 0 .5rem; } h3 { font-size: 1rem; margin: 1rem 0 .4rem; }
        a { color: inherit; } .meta { color: var(--muted); margin: 0 0 1rem; } .meta a { margin-right: .75rem; }
        section.sla { border: 1px solid var(--line); border-left: .5rem solid var(--ok); border-radius: .5rem; padding: .75rem 1rem; margin: 0 0 1rem; }
        section.sla.missed { border-left-color: var(--down); }
        dl { display: grid; grid-template-columns: repeat(auto-fill, minmax(12rem, 1fr)); gap: .5rem 1rem; margin: 0; }
        dt { color: var(--muted); font-size: .85rem; } dd { margin: 0; font-weight: 600; overflow-wrap: anywhere; }
        .tag { font-size: .75rem; border: 1px solid; border-radius: 1rem; padding: 0 .4rem; font-weight: 400; }
        .missed .verdict { color: var(--down); } .met .verdict { color: var(--ok); }
        meter { width: 100%; height: .8rem; }
        table { border-collapse: collapse; width: 100%; font-size: .9rem; }
        th, td { text-align: left; padding: .35rem .5rem; vertical-align: top; border-top: 1px solid var(--line); overflow-wrap: anywhere; }
        .words { font-style: italic; } .none { color: var(--muted); }
        @media (max-width: 40rem) {
          table, thead, tbody, tr, th, td { display: block; } thead { display: none; }
          tr { border: 1px solid var(--line); border-radius: .4rem; margin: .5rem 0; padding: .25rem 0; }
          td { border: 0; padding: .15rem .5rem; } td::before { content: attr(data-label) ": "; color: var(--muted); }
        }
        @page { size: A4; margin: 14mm; }
        @media print { body { max-width: none; padding: 0; font-size: 10pt; } nav { display: none; } section.sla { break-inside: avoid-page; }
          :root { --fg: #000; --bg: #fff; } }

        """

    func render() -> String {
        let period = reports.first?.period
        let heading = period.map { "SLA report: \($0.title)" } ?? "SLA report"
        var html = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(HTML.escape(heading)) — \(HTML.escape(title))</title>
            <style>\(SLAPage.styleSource)</style>
            </head><body>
            <h1>\(HTML.escape(heading))</h1>
            <p class="meta">\(HTML.escape(title)) · generated \(SLAPage.time(Timestamp.nowMs())) by Lookout</p>

            """
        html += navigation(period)
        if reports.isEmpty {
            html += "<p>No source has an <code>sla</code>: give one in <code>defaults</code>, a group or a source (see docs/sla.md).</p>\n"
        }
        var lastGroup: String??
        for report in reports {
            let group = groups[report.source]
            if group != nil, lastGroup != .some(group) { html += "<h2 class=\"group\">\(HTML.escape(group ?? ""))</h2>\n" }
            lastGroup = .some(group)
            html += section(report)
        }
        return html + "</body></html>\n"
    }

    private func navigation(_ period: SLAPeriod?) -> String {
        var links: [String] = []
        var own = query
        let shown = period?.description ?? "current"
        own["period"] = period?.description
        let filter = own.filter { $0.key == "source" || $0.key == "group" }.sorted { $0.key < $1.key }
        func link(_ path: String, _ periodText: String?) -> String {
            let parts = (periodText.map { [("period", $0)] } ?? []) + filter.map { ($0.key, $0.value) }
            let encoded = parts.map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: SLAStanding.queryValue) ?? "")" }.joined(separator: "&")
            return HTML.escape(path + (encoded.isEmpty ? "" : "?" + encoded))
        }
        if let period {
            let utc = TimeZone(identifier: "UTC")!
            let previous = period.previous(in: utc)
            links.append("<a href=\"\(link("/sla", previous.description))\">← \(HTML.escape(previous.title))</a>")
        }
        links.append("<a href=\"\(link("/api/v1/sla.csv", period?.description))\">CSV (\(HTML.escape(shown)))</a>")
        links.append("<a href=\"\(link("/api/v1/sla", period?.description))\">JSON</a>")
        return "<nav class=\"meta\">\(links.joined())</nav>\n"
    }

    private func section(_ report: SLAReport) -> String {
        let measured = report.uptime.map { SLASettings.percent($0) } ?? "nothing measured"
        let verdict = report.met ? (report.complete ? "met" : "met so far") : (report.complete ? "missed" : "missed so far")
        var budget = "\(SLAReport.duration(report.budgetMs)); used \(SLAReport.duration(report.downtimeMs)); "
        budget += report.budgetLeftMs >= 0 ? "\(SLAReport.duration(report.budgetLeftMs)) left" : "over by \(SLAReport.duration(-report.budgetLeftMs))"
        var figures: [(String, String)] = [
            ("Promised", HTML.escape(SLASettings.percent(report.settings.target))),
            ("Measured", "\(HTML.escape(measured)) <span class=\"tag verdict\">\(verdict)</span>"),
            ("Downtime budget", HTML.escape(budget)),
        ]
        if let exhausted = report.budgetExhaustedAtMs { figures.append(("Budget ran out", SLAPage.time(exhausted))) }
        let credit = report.credit.map { "\(SLASettings.percent($0.credit)) (below \(SLASettings.percent($0.below)))" } ?? "none"
        figures.append(("Credit reached", HTML.escape(credit)))
        figures.append(("Claim by", HTML.escape(report.claimByDay)))
        figures.append(("Not measured", HTML.escape(SLAReport.duration(report.unmeasuredMs)) + " <small>(Lookout not running)</small>"))
        if report.excludedMs > 0 { figures.append(("Maintenance excluded", HTML.escape(SLAReport.duration(report.excludedMs)))) }
        let days = "\(SLAPeriod.day(report.startMs, in: report.timeZone)) – \(SLAPeriod.day(report.endMs - 1, in: report.timeZone))"
        figures.append(("Period", "\(HTML.escape(days)) <small>(\(HTML.escape(report.settings.timeZone)))</small>"))
        var html = "<section class=\"sla \(report.met ? "met" : "missed")\" id=\"\(HTML.escape(report.source))\">\n"
        html += "<h2>\(HTML.escape(report.source))</h2>\n<dl>"
        for (name, value) in figures { html += "<div><dt>\(name)</dt><dd>\(value)</dd></div>" }
        html += "</dl>\n"
        let remaining = max(0, min(1, report.budgetRemainingRatio ?? 1))
        html +=
            "<meter min=\"0\" max=\"1\" low=\"0.25\" optimum=\"1\" value=\"\(remaining)\" title=\"budget left\">\(Int(remaining * 100))% of the budget left</meter>\n"
        html += outages(report)
        return html + "</section>\n"
    }

    private func outages(_ report: SLAReport) -> String {
        guard !report.outages.isEmpty else { return "<p class=\"none\">No outage in this period.</p>\n" }
        var html = "<h3>Outages (\(report.outages.count))</h3>\n<table><thead><tr>"
        let columns = ["Start", "End", "Downtime", "Cause", "Failed probes", "Seen from", "Vendor", "Maintenance"]
        for column in columns { html += "<th scope=\"col\">\(column)</th>" }
        html += "</tr></thead><tbody>\n"
        for outage in report.outages {
            var cause = HTML.escape(outage.stored.reason)
            if let status = outage.stored.httpStatus { cause += " · HTTP \(status)" }
            if let words = outage.stored.serverMessage, !words.isEmpty { cause += "<br><span class=\"words\">“\(HTML.escape(words))”</span>" }
            let vendor: String
            if let lag = outage.vendorLagMs {
                vendor = "acknowledged after \(HTML.escape(SLAReport.duration(lag)))" + (outage.stored.vendorIncident.map { ": " + HTML.escape($0) } ?? "")
            } else {
                vendor = "<span class=\"none\">not acknowledged</span>"
            }
            let start = SLAPage.time(outage.startMs) + (outage.beganBefore ? " <small>(began earlier)</small>" : "")
            let end = outage.endMs.map { SLAPage.time($0) + (outage.goesOnAfter ? " <small>(went on)</small>" : "") } ?? "ongoing"
            var downtime = HTML.escape(SLAReport.duration(outage.countedMs))
            if outage.unmeasuredMs > 0 { downtime += " <small>(\(HTML.escape(SLAReport.duration(outage.unmeasuredMs))) not measured)</small>" }
            let maintenance = outage.excludedMs > 0 ? HTML.escape(SLAReport.duration(outage.excludedMs)) + " excluded" : "<span class=\"none\">–</span>"
            let cells = [
                start, end, downtime, cause, String(outage.stored.failedProbes), HTML.escape(outage.stored.location ?? "this instance"), vendor,
                maintenance,
            ]
            html += "<tr>"
            for (column, cell) in zip(columns, cells) { html += "<td data-label=\"\(column)\">\(cell)</td>" }
            html += "</tr>\n"
        }
        return html + "</tbody></table>\n"
    }

    /// `2026-11-20 08:11:35 UTC` (to the second: the CSV and JSON keep the milliseconds).
    static func time(_ ms: Int64) -> String {
        let text = Timestamp.rfc3339(ms)
        return HTML.escape(text.prefix(19).replacingOccurrences(of: "T", with: " ") + " UTC")
    }
}
