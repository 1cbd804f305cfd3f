import LookoutCore
import ResilientHTTP

/// One source on the page: a `<tbody>` (a card at phone width) with its current state in the
/// first row and its history — 90-day bar, availability, response-time chart — in the second.
extension StatusPage {
    func source(_ index: Int, _ view: View, into output: inout HTMLOutput) {
        let entry = view.snapshot.records[index]
        let state = StatusPage.sourceState(index, view)
        let name = HTML.escape(entry.source.name)
        let columns = StatusPage.columns(for: view)
        // Customers read the public name only: no internal name or label in the page.
        let anchor = view.isPublic ? StatusPage.slug(entry.source.publicName) : name
        let filter =
            view.isPublic ? ([entry.source.publicName, entry.source.group ?? ""]).joined(separator: " ").lowercased() : StatusPage.filterText(entry.source)
        output += "<tbody id=\"source-\(anchor)\" data-state=\"\(state.0)\" data-filter=\"\(HTML.escape(filter))\"><tr>"
        for column in columns { column.write(index, view, into: &output) }
        output += "</tr>\n<tr class=\"history\"><td colspan=\"\(columns.count)\">"
        history(entry, view, into: &output)
        output += "</td></tr></tbody>\n"
    }

    /// The source's state class and word: maintenance over its last result.
    static func sourceState(_ index: Int, _ view: View) -> (String, String) {
        let record = view.snapshot.records[index]
        if view.isPublic {
            // Statuspage's words, which customers know.
            if view.snapshot.maintenance[record.name] != nil { return ("maintenance", "Under maintenance") }
            guard let last = record.last else { return ("pending", "Not checked yet") }
            return last.ok ? ("ok", "Operational") : record.outage.down ? ("down", "Major outage") : ("degraded", "Partial outage")
        }
        if view.snapshot.maintenance[record.name] != nil { return ("maintenance", "Maintenance") }
        return record.last.map { $0.ok ? ("ok", "Up") : ("down", "Down") } ?? ("pending", "Pending")
    }

    /// The first cell: the name, and for on-call the kind and URL.
    static func nameCell(_ index: Int, _ view: View) -> String {
        let entry = view.snapshot.records[index]
        // The name links to the source's own card: at phone width a healthy card is folded to its
        // name, state and bars, and opens when its name is tapped (`:target`).
        let anchor = view.isPublic ? StatusPage.slug(entry.source.publicName) : HTML.escape(entry.source.name)
        let name = HTML.escape(view.isPublic ? entry.source.publicName : entry.source.name)
        var html = "<th scope=\"row\"><a class=\"name\" href=\"#source-\(anchor)\">\(name)</a>"
        if !view.isPublic { html += "<small>\(HTML.escape(entry.source.kind.rawValue)) · \(HTML.escape(entry.displayURL))</small>" }
        if let description = entry.source.description { html += "<small class=\"description\">\(HTML.escape(description))</small>" }
        return html + "</th>"
    }

    /// The state, how long it has lasted, maintenance, other locations' view and what blocks it.
    static func stateCell(_ index: Int, _ view: View) -> String {
        let snapshot = view.snapshot
        let entry = snapshot.records[index]
        let maintenance = snapshot.maintenance[entry.name]
        let state = sourceState(index, view)
        var html = "<span class=\"state \(state.0)\">\(state.1)</span>" + StatusPage.strip(entry.recentOutcomes)
        if view.isPublic, let fallback = entry.last?.fallbackInUse {
            // The public page says which source stands in, by its public name.
            let stand = view.snapshot.config.sources.first { $0.name == fallback }.map(\.publicName) ?? "a fallback"
            html += "<br><small class=\"fallback\">Showing \(HTML.escape(stand)) while \(HTML.escape(entry.source.publicName)) is down</small>"
        }
        if let incident = entry.incident, maintenance == nil {
            html += "<br><small>for \(StatusPage.time(Timestamp.human(incident.downForMs(nowMs: view.nowMs)), atMs: incident.downSinceMs))</small>"
        }
        if let maintenance {
            let until = StatusPage.time("in " + Timestamp.human(maintenance.endsAtMs - view.nowMs), atMs: maintenance.endsAtMs)
            let note = maintenance.note.isEmpty ? maintenance.window : maintenance.note
            html += "<br><small class=\"hint\">\(HTML.escape(note)) · ends \(until)"
            html += view.isPublic ? "</small>" : "; no notifications, not counted in availability</small>"
        }
        if let others = view.elsewhere[entry.name] {
            let states = others.map { "\(HTML.escape($0.peer)) <span class=\"state \(StatusPage.stateClass($0.state))\">\(HTML.escape($0.state))</span>" }
            html += "<br><small class=\"hint\">Elsewhere: " + states.joined(separator: ", ") + "</small>"
        }
        html += StatusPage.vendorLine(entry, view)
        let blockedBy = snapshot.blockedBy(index)
        if !blockedBy.isEmpty && !view.isPublic {
            let links = blockedBy.map { "<a href=\"#source-\(HTML.escape($0))\">\(HTML.escape($0))</a>" }.joined(separator: ", ")
            html += "<br><small class=\"hint\">Blocked by \(links), which \(blockedBy.count == 1 ? "is" : "are") down; its alerts wait</small>"
        }
        return html
    }

    /// The last probes at a glance: one mark each, oldest first, red for a failure.
    static func strip(_ outcomes: SourceRecord.RecentOutcomes) -> String {
        let passed = outcomes.passed
        guard !passed.isEmpty else { return "" }
        let failed = passed.count { !$0 }
        // As bytes: a String append for each of 20 probes was most of the state cell.
        var out: [UInt8] = []
        out.reserveCapacity(96 + passed.count * 17)
        out += "<span class=\"strip\" role=\"img\" aria-label=\"Last ".utf8
        appendInteger(UInt64(passed.count), to: &out)
        out += " probes: ".utf8
        appendInteger(UInt64(passed.count - failed), to: &out)
        out += " passed, ".utf8
        appendInteger(UInt64(failed), to: &out)
        out += " failed\">".utf8
        for ok in passed { out += ok ? StripBytes.passed : StripBytes.failed }
        out += "</span>".utf8
        return String(decoding: out, as: UTF8.self)
    }

    static func errorRateCell(_ index: Int, _ view: View) -> String {
        guard let rate = view.snapshot.summaries[index]?.errorRate(windowMs: HealthWindow.hour) else { return "–" }
        var out: [UInt8] = []
        out.reserveCapacity(1_600)
        StatusPage.appendFixed(rate * 100, 1, to: &out)
        out += "% ".utf8
        StatusPage.sparkline(view.snapshot.minuteErrorRates(index), into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    static func responseTimeCell(_ index: Int, _ view: View) -> String {
        let durations = view.snapshot.records[index].recentDurations
        guard let p50 = durations.quantile(0.5), let p95 = durations.quantile(0.95) else { return "–" }
        return "\(StatusPage.milliseconds(p50)) / \(StatusPage.milliseconds(p95))"
    }

    /// The text the filter box searches: name, group and label values.
    static func filterText(_ source: SourceConfig) -> String {
        ([source.name, source.group ?? ""] + source.labels.values.sorted()).joined(separator: " ").lowercased()
    }

    static func lastResult(_ entry: SourceRecord, nowMs: Int64) -> String {
        guard let last = entry.last else { return "not probed yet" }
        var html = ""
        if let failure = last.failure {
            html += "<strong>\(HTML.escape(failure.title))</strong><br>\(HTML.escape(last.message ?? ""))"
            html += "<small class=\"hint\">\(HTML.escape(failure.recoverySuggestion))</small>"
            html += "<details><summary>Details</summary><code>\(HTML.escape(failure.category.rawValue))/\(HTML.escape(failure.reason))"
            if let status = last.httpStatus { html += " · HTTP \(status)" }
            if let code = failure.curlCode { html += " · curl \(code)" }
            html += " · \(last.attempts) attempt\(last.attempts == 1 ? "" : "s")"
            if !failure.detail.isEmpty { html += " · \(HTML.escape(failure.detail))" }
            html += "</code></details>"
        } else {
            html += "OK\(last.httpStatus.map { " · HTTP \($0)" } ?? "")"
            if last.attempts > 1 { html += " <small>after \(last.attempts) attempts</small>" }
        }
        if let steps = last.steps {
            // A flow's steps, what each did: never what it captured.
            let parts = steps.map { step in
                let outcome = step.ok.map { $0 ? "✓" : "✗" } ?? "not run"
                let status = step.httpStatus.map { " \($0)" } ?? ""
                let time = step.ok == nil ? "" : " \(StatusPage.milliseconds(step.seconds))"
                return "\(step.isFinally ? "finally " : "")\(HTML.escape(step.name)) \(outcome)\(status)\(time)"
            }
            html += "<br><small class=\"steps\">\(parts.joined(separator: " · "))</small>"
        }
        if let wait = entry.serverWait(nowMs: nowMs) {
            html += "<br><small class=\"hint\">\(HTML.escape(wait.message.prefix(1).uppercased() + wait.message.dropFirst()))</small>"
        }
        if let fallback = last.fallbackInUse {
            html += "<br><span class=\"fallback\">Using fallback: <a href=\"#source-\(HTML.escape(fallback))\">\(HTML.escape(fallback))</a></span>"
        }
        html += "<br><small>checked \(Timestamp.human(nowMs - last.timestampMs)) ago"
        if let success = entry.lastSuccessMs, !last.ok { html += " · last success \(Timestamp.human(nowMs - success)) ago" }
        if entry.lastSuccessMs == nil && !last.ok { html += " · no success yet" }
        html += "</small>"
        if let download = entry.download { html += StatusPage.download(download) }
        return html
    }

    /// For the public page: whether it works and since when, no error text or internals.
    static func publicResult(_ entry: SourceRecord, nowMs: Int64) -> String {
        guard let last = entry.last else { return "not checked yet" }
        var html = last.ok ? "Working" : "Not working"
        html += "<br><small>checked \(Timestamp.human(nowMs - last.timestampMs)) ago</small>"
        return html
    }

    static func breaker(_ breaker: CircuitBreaker?, nowMs: Int64) -> String {
        guard let breaker else { return "closed" }
        switch breaker.state {
        case .closed: return "closed"
        case .open:
            // Each scheduled probe is the breaker's trial; it holds back retries.
            return "<span class=\"state down\">open</span><br><small>each probe is a trial; no retries</small>"
        case .halfOpen: return "<span class=\"state degraded\">half-open</span><br><small>trying again</small>"
        case .forcedOpen: return "<span class=\"state down\">forced open</span><br><small>by an operator</small>"
        case .disabled: return "disabled<br><small>by an operator</small>"
        }
    }

    static func download(_ progress: DownloadProgress) -> String {
        var html = "<div class=\"download\">"
        let percent = progress.ratio.map { Int(($0 * 100).rounded()) }
        html += "<progress max=\"100\" value=\"\(percent ?? 0)\" aria-label=\"download progress\">\(percent ?? 0)%</progress> "
        html += HTML.escape(progress.state.rawValue.replacingOccurrences(of: "_", with: " "))
        html += " · " + fixed(Double(progress.bytes) / 1_048_576, 1) + " MiB · " + fixed(progress.throughputBytesPerSecond / 1_048_576, 1) + " MiB/s"
        if progress.resumes > 0 { html += " · resumed \(progress.resumes)×" }
        switch progress.verified {
        case true?: html += " · SHA-256 verified"
        case false?: html += " · <strong>SHA-256 mismatch</strong>"
        case nil: if let digest = progress.sha256 { html += " · SHA-256 \(HTML.escape(String(digest.prefix(12))))…" }
        }
        return html + "</div>"
    }

    /// The 90-day bar, availability over 24 h, 7 d and 30 d, and the response-time chart.
    func history(_ entry: SourceRecord, _ view: View, into output: inout HTMLOutput) {
        let health = entry.health
        output += "<div class=\"hist\"><div class=\"uptime\">"
        let notes = StatusPage.dayNotes(entry.source, episodes: view.episodes[entry.name] ?? [], maintenance: view.maintenanceDays, axis: view.days)
        StatusPage.uptimeBars(health.days.buckets(DayAxis.count, nowMs: view.nowMs), notes: notes, axis: view.days, into: &output.bytes)
        var html = "</div><p class=\"avail\">Availability"
        for (label, windowMs) in [("24 h", HealthWindow.day), ("7 d", 7 * HealthWindow.day), ("30 d", HealthWindow.thirtyDays)] {
            let counts = health.counts(windowMs: windowMs, nowMs: view.nowMs)
            let value = HealthWindow.availability(counts).map(StatusPage.percent) ?? "–"
            html += " <span>\(label) <b>\(value)</b></span>"
        }
        html += "</p>"
        // Percentiles are for on-call, and for customers only with `public_details`.
        guard !view.isPublic || view.snapshot.config.statusPage.publicDetails else {
            output += html + "</div>"
            return
        }
        // The bars are hourly estimates from buckets; the latest figures are the row's.
        let recent = [entry.recentDurations.quantile(0.5), entry.recentDurations.quantile(0.95)].compactMap { $0 }
        output += html
        StatusPage.responseChart(
            health.latency.quantiles([0.5, 0.95], last: 24, nowMs: view.nowMs), latest: recent.count == 2 ? recent : nil, into: &output.bytes)
        output += "</div>"
    }
}

/// A probe's square in the strip of recent outcomes, as bytes.
private enum StripBytes {
    static let passed = Array("<i></i>".utf8)
    static let failed = Array("<i class=\"f\"></i>".utf8)
}
