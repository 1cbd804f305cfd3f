import LookoutAlerting
import LookoutCore
import LookoutStore
import ResilientHTTP

/// The parts above the source list: Lookout's own problems, announcements, maintenance and the
/// open incidents.
extension StatusPage {
    /// Lookout's own troubles: a database it cannot write, hooks that cannot deliver, a stretch
    /// before this start in which it did not run.
    func problems(nowMs: Int64) -> String {
        var items: [String] = []
        if let gap = context.recentGap(nowMs: nowMs) {
            items.append(StatusPage.gapNote(gap))
        }
        if let problem = context.writer.status.lastError {
            items.append("Records cannot be written to the database (\(HTML.escape(problem))); they are kept in memory and written when it works again.")
        }
        for (hook, stats) in context.outbox.hookStats.sorted(by: { $0.key < $1.key }) {
            if let error = stats.lastError {
                items.append("Alert hook <strong>\(HTML.escape(hook))</strong> cannot deliver: \(HTML.escape(error)) Notifications wait in the outbox.")
            }
        }
        let setAside = (try? OutboxStore(database: context.database).setAside()) ?? [:]
        for (hook, count) in setAside.sorted(by: { $0.key < $1.key }) where count > 0 {
            let why = context.outbox.hookStats[hook]?.lastSetAside.map { " (the last: \(HTML.escape($0)))" } ?? ""
            items.append(
                "Alert hook <strong>\(HTML.escape(hook))</strong> refused \(count) notification\(count == 1 ? "" : "s"), set aside so later ones go on\(why). "
                    + "Fix the receiver, then send them again: <code>POST /api/v1/hooks/\(HTML.escape(hook))/retry</code>.")
        }
        guard !items.isEmpty else { return "" }
        return "<section class=\"problems\" aria-label=\"Lookout problems\"><ul>" + items.map { "<li>\($0)</li>" }.joined() + "</ul></section>\n"
    }

    /// One line per broken source, worst first: what is broken, why, since when, what Lookout
    /// is doing about it and what to try. Service-wide alerts first; info alerts folded away.
    func incidents(_ view: View) -> String {
        let snapshot = view.snapshot
        let holds = context.alerts.heldBack
        let firing = context.alerts.firing
        var bySource: [String: [Alert]] = [:]
        var serviceWide: [Alert] = []
        var silenced: [Alert] = []
        for alert in firing {
            if holds[alert.fingerprint]?.silenced == true {
                silenced.append(alert)
            } else if let source = alert.source {
                bySource[source, default: []].append(alert)
            } else {
                serviceWide.append(alert)
            }
        }
        struct Line {
            var rank: Int
            var sinceMs: Int64
            var html: String
        }
        var lines: [Line] = []
        for (index, record) in snapshot.records.enumerated() where snapshot.maintenance[record.name] == nil {
            let alerts = (bySource[record.name] ?? []).sorted { StatusPage.rank($0.severity) < StatusPage.rank($1.severity) }
            guard record.incident != nil || !alerts.isEmpty else { continue }
            // A source that is down is an open incident, whatever its alerts: its breaker's info
            // alert fires at once, the error-rate ones minutes later, and meanwhile it was folded
            // away among the info alerts.
            // A source that works is no open incident, whatever still fires for it (a certificate
            // about to expire, an alert not yet resolved): it is folded away with the info ones.
            let working = record.incident == nil && record.last?.ok == true
            let rank = working ? 3 : min(alerts.first.map { StatusPage.rank($0.severity) } ?? 2, record.incident != nil ? 2 : 3)
            let since = record.incident?.downSinceMs ?? alerts.map(\.startedAtMs).min() ?? view.nowMs
            lines.append(Line(rank: rank, sinceMs: since, html: incidentLine(index, alerts: alerts, holds: holds, view)))
        }
        for alert in serviceWide {
            var html = "<li class=\"incident sev-\(HTML.escape(alert.severity))\"><strong>\(HTML.escape(alert.rule))</strong> "
            html += "<span class=\"tag\">\(HTML.escape(alert.severity))</span> \(HTML.escape(alert.summary)) "
            html += "<small>for \(since(alert, view))</small></li>"
            if !view.isPublic { lines.append(Line(rank: StatusPage.rank(alert.severity) - 1, sinceMs: alert.startedAtMs, html: html)) }
        }
        lines.sort { ($0.rank, $0.sinceMs) < ($1.rank, $1.sinceMs) }
        let main = lines.filter { $0.rank < 3 }
        let info = lines.filter { $0.rank >= 3 }
        var html = ""
        if !main.isEmpty {
            let title = view.isPublic ? "Current problems" : "Open incidents"
            html += "<section class=\"incidents\" aria-label=\"\(title)\"><h2>\(title) (\(main.count))</h2><ul>"
            html += main.map(\.html).joined() + "</ul></section>\n"
        }
        guard !view.isPublic else { return html }
        if !info.isEmpty {
            html += "<details class=\"incidents info\"><summary>\(info.count) working source\(info.count == 1 ? "" : "s") with alerts</summary><ul>"
            html += info.map(\.html).joined() + "</ul></details>\n"
        }
        if !silenced.isEmpty {
            html += "<details class=\"incidents silenced\"><summary>Silenced (\(silenced.count))</summary><ul>"
            for alert in silenced.prefix(50) {
                html += "<li><strong>\(HTML.escape(alert.rule))</strong> \(HTML.escape(alert.summary))"
                if let hold = holds[alert.fingerprint] { html += " <small>\(HTML.escape(hold.reason))</small>" }
                html += "</li>"
            }
            html += "</ul></details>\n"
        }
        return html
    }

    /// How long an alert has fired, e.g. "3h 39m": one that began before a stop says how much
    /// of that Lookout did not run.
    func since(_ alert: Alert, _ view: View) -> String {
        StatusPage.time(Timestamp.human(view.nowMs - alert.startedAtMs), atMs: alert.startedAtMs) + AlertService.notRunningNote(alert)
    }

    /// "Lookout was not running for 2h 14m (from 04:55 UTC to 07:09 UTC): …", the days added
    /// when it spans more than one.
    package static func gapNote(_ gap: MonitoringGap) -> String {
        let sameDay = Timestamp.day(gap.fromMs) == Timestamp.day(gap.toMs)
        func at(_ ms: Int64) -> String {
            StatusPage.time(sameDay ? Timestamp.clock(ms) : Timestamp.day(ms) + " " + Timestamp.clock(ms), atMs: ms)
        }
        return "Lookout was not running for \(Timestamp.human(gap.durationMs)) (from \(at(gap.fromMs)) to \(at(gap.toMs))): "
            + "nothing was probed then, and alerts that began before it count that time."
    }

    static func rank(_ severity: String) -> Int {
        switch severity {
        case "critical": 0
        case "warning": 1
        default: 3
        }
    }

    private func incidentLine(_ index: Int, alerts: [Alert], holds: [String: AlertHold], _ view: View) -> String {
        let snapshot = view.snapshot
        let record = snapshot.records[index]
        let name = HTML.escape(view.isPublic ? record.source.publicName : record.name)
        // The worst alert names the line, unless it is only informational: then the source is down.
        let severity = alerts.first.map(\.severity).flatMap { $0 == "info" && record.incident != nil ? nil : $0 } ?? "down"
        let anchor = view.isPublic ? StatusPage.slug(record.source.publicName) : name
        var html = "<li class=\"incident sev-\(HTML.escape(severity))\" data-source=\"\(anchor)\"><a href=\"#source-\(anchor)\"><strong>\(name)</strong></a> "
        if view.isPublic {
            let state = record.incident != nil ? ("down", "Major outage") : ("degraded", "Degraded performance")
            html += "<span class=\"state \(state.0)\">\(state.1)</span>"
            if let incident = record.incident {
                html += " for \(StatusPage.time(Timestamp.human(incident.downForMs(nowMs: view.nowMs)), atMs: incident.downSinceMs))"
            }
            return html + "</li>"
        }
        html += "<span class=\"tag\">\(HTML.escape(severity))</span> "
        if let incident = record.incident {
            let cause = incident.cause
            // The line starts with the source's name: the upstream's words follow without
            // "Error while probing NAME:" again.
            if let failure = cause.failure {
                html += "<span class=\"cause\">\(HTML.escape(failure.title)): “\(HTML.escape(String(failure.whatHappened.prefix(200))))”</span>"
            }
            html += " · down for \(StatusPage.time(Timestamp.human(incident.downForMs(nowMs: view.nowMs)), atMs: incident.downSinceMs))"
            html += " <small>(\(incident.failedProbes) failed probe\(incident.failedProbes == 1 ? "" : "s"))</small>"
            html += StatusPage.vendorLine(record, view)
        } else if let alert = alerts.first {
            html += "<span class=\"cause\">\(HTML.escape(alert.summary))</span>"
            html += " · for \(since(alert, view))"
            // No probe has failed since the start (a breaker restored open waits out its time),
            // or the source works again while its error rate is still high: what failed when
            // the alert fired, in the upstream's words.
            if let cause = alerts.lazy.compactMap({ $0.annotations["description"] }).first, cause != alert.summary {
                let words = ProbeResult.withoutOpening(cause, source: record.name)
                html += "<br><small class=\"fired\">When it fired: “\(HTML.escape(String(words.prefix(200))))”</small>"
            }
        }
        html +=
            "<br><span class=\"doing\">\(StatusPage.doing(record, breaker: snapshot.breakers[index], blockedBy: snapshot.blockedBy(index), nowMs: view.nowMs))</span>"
        if let suggestion = record.incident?.cause.failure?.recoverySuggestion, !suggestion.isEmpty {
            html += "<small class=\"hint\">\(HTML.escape(suggestion))</small>"
        }
        if !alerts.isEmpty {
            // Which alerts paged, and which are held back and why, each reason once.
            let notified = alerts.filter { holds[$0.fingerprint] == nil }.map { HTML.escape($0.rule) }
            var held: [String: [String]] = [:]
            for alert in alerts { if let hold = holds[alert.fingerprint] { held[hold.reason, default: []].append(HTML.escape(alert.rule)) } }
            var parts: [String] = []
            if !notified.isEmpty { parts.append("Alerts: " + notified.joined(separator: ", ")) }
            for (reason, names) in held.sorted(by: { $0.key < $1.key }) {
                parts.append("not notified: " + names.joined(separator: ", ") + " (" + HTML.escape(reason) + ")")
            }
            html += "<small class=\"hint\">" + parts.joined(separator: " · ") + "</small>"
        }
        return html + "</li>"
    }

    /// What Lookout is doing about a broken source, in one phrase.
    static func doing(_ record: SourceRecord, breaker: CircuitBreaker?, blockedBy: [String], nowMs: Int64) -> String {
        var parts: [String] = []
        switch breaker?.state {
        case .open?:
            let next = breaker?.nextAttemptAtMs ?? nowMs
            var text = "Breaker open: calls paused until \(time(Timestamp.clock(next), atMs: next))"
            if record.heldBackCalls > 0 { text += ", \(record.heldBackCalls) held back" }
            parts.append(text)
        case .halfOpen?: parts.append("Breaker half-open: a trial call decides")
        case .forcedOpen?: parts.append("Breaker forced open by an operator: no calls until reset")
        default:
            var text = "Probing every \(ConfigValues.format(record.source.interval))"
            if let attempts = record.incident?.cause.attempts, attempts > 1 { text += ", \(attempts) attempts each" }
            parts.append(text)
        }
        if !blockedBy.isEmpty {
            parts.append("waiting on " + blockedBy.map { "<a href=\"#source-\(HTML.escape($0))\">\(HTML.escape($0))</a>" }.joined(separator: ", "))
        }
        return parts.joined(separator: " · ")
    }

    /// The other instances of `peers`: each one's state and sources, and plainly which cannot be
    /// reached (since when, and why) — their sources are then not shown, never shown as healthy.
    func peersSection(_ view: View) -> String {
        guard !view.peers.isEmpty else { return "" }
        var html = "<section class=\"peers\" aria-label=\"Other instances\"><h2>Other instances (\(view.peers.count))</h2>"
        // Shards run twice or never: said first, on both pages (no addresses in them but labels).
        for problem in view.shardProblems { html += "<p class=\"shard-problem\" role=\"alert\">\(HTML.escape(problem))</p>" }
        html += "<ul>"
        for peer in view.peers {
            // The public page does not give out addresses.
            let label = HTML.escape(view.isPublic && peer.label == peer.url ? "another location" : peer.label)
            if let problem = peer.problem {
                let since = peer.failingSinceMs.map { " since " + StatusPage.time(Timestamp.clock($0), atMs: $0) } ?? ""
                html += "<li class=\"peer\" data-peer=\"unreachable\"><strong>\(label)</strong> <span class=\"state down\">Unreachable</span>\(since)"
                if !view.isPublic { html += ": \(HTML.escape(problem)) <small>(\(HTML.escape(peer.url)))</small>" }
                html += "; its sources are not shown.</li>"
                continue
            }
            guard peer.lastSuccessMs != nil else {
                html +=
                    "<li class=\"peer\" data-peer=\"pending\"><strong>\(label)</strong> <span class=\"state pending\">Waiting for its first answer</span></li>"
                continue
            }
            let up = peer.sources.filter { $0.state == "up" }.count
            let state = StatusPage.banner(peer.overall ?? "")
            html +=
                "<li class=\"peer\" data-peer=\"\(state.0)\"><strong>\(label)</strong> <span class=\"state \(state.0)\">\(HTML.escape(peer.overall ?? "unknown"))</span> · \(up) of \(peer.sources.count) sources up"
            let down = peer.sources.filter { $0.state == "down" }
            if !down.isEmpty {
                html +=
                    "<ul>"
                    + down.prefix(50).map { source in
                        var line = "<li><strong>\(HTML.escape(source.name))</strong> <span class=\"state down\">down</span>"
                        if let since = source.downSinceMs { line += " for " + StatusPage.time(Timestamp.human(view.nowMs - since), atMs: since) }
                        if let cause = source.cause, !view.isPublic { line += " · \(HTML.escape(cause))" }
                        return line + "</li>"
                    }.joined() + "</ul>"
            }
            html += "<details><summary>All \(peer.sources.count) sources</summary><p class=\"peer-sources\">"
            html += peer.sources.prefix(5_000).map { "<span class=\"state \(StatusPage.stateClass($0.state))\">\(HTML.escape($0.name))</span>" }.joined(
                separator: " ")
            html += "</p></details></li>"
        }
        return html + "</ul></section>\n"
    }

    /// The CSS class of a state as the status JSON names it (`up`, `down`, `pending`).
    static func stateClass(_ state: String) -> String {
        state == "up" ? "ok" : state == "down" ? "down" : "pending"
    }

    /// Maintenance in progress, and what starts in the next 7 days.
    func maintenanceSection(_ view: View) -> String {
        let windows = context.monitor.maintenance.windows
        // Customers read the public names of the sources shown to them.
        let sources = view.snapshot.config.sources.filter { !view.isPublic || $0.isPublic }
        var now: [String] = []
        var upcoming: [(Int64, String)] = []
        for window in windows {
            let covered = sources.filter { window.covers($0) }.map { view.isPublic ? $0.publicName : $0.name }
            guard !covered.isEmpty else { continue }
            let names =
                covered.count == sources.count
                ? "all sources" : covered.prefix(8).map(HTML.escape).joined(separator: ", ") + (covered.count > 8 ? " and \(covered.count - 8) more" : "")
            let note = HTML.escape(window.note.isEmpty ? window.name : window.note)
            if let (_, end) = window.occurrence(atMs: view.nowMs) {
                now.append(
                    "<li><strong>\(note)</strong> · \(names) · ends \(StatusPage.time(Timestamp.clock(end), atMs: end)) (in \(Timestamp.human(end - view.nowMs)))</li>"
                )
            } else if let (start, end) = window.next(afterMs: view.nowMs, withinMs: 7 * HealthWindow.day) {
                upcoming.append(
                    (
                        start,
                        "<li><strong>\(note)</strong> · \(names) · \(StatusPage.time(Timestamp.day(start) + " " + Timestamp.clock(start), atMs: start)) for \(Timestamp.human(end - start))</li>"
                    ))
            }
        }
        guard !now.isEmpty || !upcoming.isEmpty else { return "" }
        var html = "<section class=\"maint\" aria-label=\"Maintenance\">"
        if !now.isEmpty { html += "<h2>Maintenance in progress</h2><ul>" + now.joined() + "</ul>" }
        if !upcoming.isEmpty { html += "<h2>Upcoming maintenance</h2><ul>" + upcoming.sorted { $0.0 < $1.0 }.map(\.1).joined() + "</ul>" }
        return html + "</section>\n"
    }

    /// `publicNames`: on the public page, the name customers read of each source shown there
    /// (the others are not named).
    static func openAnnouncements(_ announcements: [Announcement], nowMs: Int64, publicNames: [String: String]? = nil) -> String {
        guard !announcements.isEmpty else { return "" }
        return "<section class=\"announcements\" aria-label=\"Announcements\">"
            + announcements.map { article($0, nowMs: nowMs, publicNames: publicNames) }.joined() + "</section>\n"
    }

    static func pastAnnouncements(_ announcements: [Announcement], nowMs: Int64, publicNames: [String: String]? = nil) -> String {
        guard !announcements.isEmpty else { return "" }
        return "<section class=\"past\" aria-label=\"Past announcements\"><h2>Past announcements (30 days)</h2>"
            + announcements.map { article($0, nowMs: nowMs, publicNames: publicNames) }.joined() + "</section>\n"
    }

    static func article(_ announcement: Announcement, nowMs: Int64, publicNames: [String: String]? = nil) -> String {
        let state = announcement.state.rawValue
        var html =
            "<article class=\"announcement state-\(state)\" id=\"announcement-\(HTML.escape(announcement.id))\"><h2>\(HTML.escape(announcement.title))</h2>"
        html +=
            "<p class=\"meta\"><span class=\"tag\">\(state.capitalized)</span> · posted \(time(Timestamp.day(announcement.postedAtMs) + " " + Timestamp.clock(announcement.postedAtMs), atMs: announcement.postedAtMs))"
        if announcement.updates.count > 1 {
            html += " · updated \(time(Timestamp.human(nowMs - announcement.updatedAtMs) + " ago", atMs: announcement.updatedAtMs))"
        }
        let affected: [(anchor: String, name: String)] =
            publicNames.map { names in announcement.sources.compactMap { names[$0].map { (slug($0), $0) } } }
            ?? announcement.sources.map { ($0, $0) }
        if !affected.isEmpty {
            html += " · affects " + affected.map { "<a href=\"#source-\(HTML.escape($0.anchor))\">\(HTML.escape($0.name))</a>" }.joined(separator: ", ")
        }
        html += "</p><p>\(linkify(announcement.updates.last?.message ?? ""))</p>"
        if announcement.updates.count > 1 {
            html += "<details><summary>Earlier updates (\(announcement.updates.count - 1))</summary><ol reversed>"
            for update in announcement.updates.dropLast().reversed() {
                html +=
                    "<li><span class=\"tag\">\(update.state.rawValue.capitalized)</span> \(time(Timestamp.day(update.atMs) + " " + Timestamp.clock(update.atMs), atMs: update.atMs)): \(linkify(update.message))</li>"
            }
            html += "</ol></details>"
        }
        return html + "</article>"
    }

    /// Plain text, escaped, with http(s) links made clickable and line breaks kept.
    static func linkify(_ text: String) -> String {
        var html = ""
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if number > 0 { html += "<br>" }
            var words: [String] = []
            for word in line.split(separator: " ", omittingEmptySubsequences: false) {
                let lower = word.lowercased()
                if lower.hasPrefix("https://") || lower.hasPrefix("http://"), word.count > 8 {
                    // Trailing punctuation belongs to the sentence, not the link.
                    let trimmed = word.reversed().drop { ".,;:!?)".contains($0) }.reversed()
                    let link = String(trimmed)
                    let rest = String(word.dropFirst(link.count))
                    words.append("<a href=\"\(HTML.escape(link))\" rel=\"nofollow noopener\">\(HTML.escape(link))</a>\(HTML.escape(rest))")
                } else {
                    words.append(HTML.escape(String(word)))
                }
            }
            html += words.joined(separator: " ")
        }
        return html
    }
}
