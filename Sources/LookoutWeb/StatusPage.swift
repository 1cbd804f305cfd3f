import Foundation
import LookoutAlerting
import LookoutCore
import LookoutStore
import ResilientHTTP

/// The HTML status page (SPEC section 8): an overall banner, the firing alerts, then one row per
/// source. No external assets; readable without JavaScript; light and dark; phone width. A small
/// script refreshes the content every 15 s in place (keeping the scroll position) and announces
/// state changes to screen readers; without scripts a meta refresh does the same.
package struct StatusPage: Sendable {
    package let context: LookoutContext

    package init(context: LookoutContext) {
        self.context = context
    }

    package func render(nowMs: Int64 = Timestamp.nowMs()) -> String {
        let snapshot = context.monitor.snapshot(nowMs: nowMs)
        let entries = snapshot.records
        let banner: (String, String) = switch snapshot.overall {
        case "operational": ("ok", "Operational: every source answers as expected")
        case "degraded": ("degraded", "Degraded: some sources are unavailable; results from the others are current")
        case "outage": ("down", "Outage: every source is failing")
        case "offline": ("offline", "Offline: Lookout cannot reach the network; per-source results are held back")
        default: ("pending", "Waiting for the first probes")
        }
        var html = StatusPage.head
        html += "<main id=\"content\">\n<p class=\"banner \(banner.0)\" id=\"banner\">\(HTML.escape(banner.1))</p>\n"
        html += problems()
        html += firingAlerts()
        let up = entries.filter { $0.last?.ok == true }.count
        html += "<p class=\"summary\">\(up) of \(entries.count) sources up · updated \(HTML.escape(Timestamp.rfc3339(nowMs)))</p>\n"
        html += "<table><thead><tr><th scope=\"col\">Source</th><th scope=\"col\">State</th><th scope=\"col\">Last result</th>"
        html += "<th scope=\"col\">Error rate (1 h)</th><th scope=\"col\">Latency p50 / p95</th><th scope=\"col\">Breaker</th></tr></thead><tbody>\n"
        html.reserveCapacity(html.utf8.count + entries.count * 1200)
        for (index, entry) in entries.enumerated() {
            html += row(
                entry, health: snapshot.summaries[index], minutes: snapshot.minuteErrorRates(index), breaker: snapshot.breakers[index],
                blockedBy: snapshot.blockedBy(index), maintenance: snapshot.maintenance[entry.name], nowMs: nowMs)
        }
        html += "</tbody></table>\n</main>\n"
        html += "<p class=\"foot\"><a href=\"/metrics\">metrics</a> · <a href=\"/api/v1/status\">status JSON</a> · <a href=\"/api/v1/alerts\">alerts</a> · Lookout \(LookoutVersion.string)</p>\n"
        html += StatusPage.script
        html += "</body></html>\n"
        return html
    }

    /// Lookout's own troubles: a database it cannot write, hooks that cannot deliver.
    func problems() -> String {
        var items: [String] = []
        if let problem = context.writer?.status.lastError {
            items.append("Records cannot be written to the database (\(HTML.escape(problem))); they are kept in memory and written when it works again.")
        }
        for (hook, stats) in (context.outbox?.hookStats ?? [:]).sorted(by: { $0.key < $1.key }) {
            if let error = stats.lastError {
                items.append("Alert hook <strong>\(HTML.escape(hook))</strong> cannot deliver: \(HTML.escape(error)) Notifications wait in the outbox.")
            }
        }
        guard !items.isEmpty else { return "" }
        return "<section class=\"problems\" aria-label=\"Lookout problems\"><ul>" + items.map { "<li>\($0)</li>" }.joined() + "</ul></section>\n"
    }

    func firingAlerts() -> String {
        guard let service = context.alerts else { return "" }
        let holds = service.heldBack
        let all = service.firing
        let silenced = all.filter { holds[$0.fingerprint]?.silenced == true }
        let firing = all.filter { holds[$0.fingerprint]?.silenced != true }
        var html = ""
        if !firing.isEmpty {
            html += "<section class=\"alerts\" aria-label=\"Firing alerts\"><h2>Firing alerts (\(firing.count))</h2><ul>"
            html += alertItems(firing, holds: holds)
            html += "</ul></section>\n"
        }
        if !silenced.isEmpty {
            html += "<section class=\"alerts silenced\" aria-label=\"Silenced alerts\"><h2>Silenced (\(silenced.count))</h2><ul>"
            html += alertItems(silenced, holds: holds)
            html += "</ul></section>\n"
        }
        return html
    }

    private func alertItems(_ alerts: [Alert], holds: [String: AlertHold]) -> String {
        let nowMs = Timestamp.nowMs()
        var html = ""
        for alert in alerts.prefix(50) {
            let since = StatusPage.time(Timestamp.human(nowMs - alert.startedAtMs), atMs: alert.startedAtMs)
            html += "<li class=\"sev-\(HTML.escape(alert.severity))\"><strong>\(HTML.escape(alert.rule))</strong> "
            html += "<span class=\"tag\">\(HTML.escape(alert.severity))</span> \(HTML.escape(alert.summary)) <small>for \(since)</small>"
            if let hold = holds[alert.fingerprint] { html += " <small class=\"hint\">Not notified: \(HTML.escape(hold.reason))</small>" }
            html += "</li>"
        }
        if alerts.count > 50 { html += "<li>… and \(alerts.count - 50) more</li>" }
        return html
    }

    func row(
        _ entry: SourceRecord, health: HealthSummary?, minutes: [Double?], breaker: CircuitBreaker?, blockedBy: [String] = [],
        maintenance: MaintenanceCalendar.Entry? = nil, nowMs: Int64
    ) -> String {
        let name = HTML.escape(entry.source.name)
        var state: (String, String) = entry.last.map { $0.ok ? ("ok", "Up") : ("down", "Down") } ?? ("pending", "Pending")
        if maintenance != nil { state = ("maintenance", "Maintenance") }
        var html = "<tr id=\"source-\(name)\" data-state=\"\(state.0)\"><th scope=\"row\"><span class=\"name\">\(name)</span>"
        html += "<small>\(HTML.escape(entry.source.kind.rawValue)) · \(HTML.escape(entry.displayURL))</small></th>"
        html += "<td><span class=\"state \(state.0)\">\(state.1)</span>"
        if let incident = entry.incident {
            html += "<br><small>for \(StatusPage.time(Timestamp.human(incident.downForMs(nowMs: nowMs)), atMs: incident.downSinceMs))</small>"
        }
        if let maintenance {
            let until = StatusPage.time("in " + Timestamp.human(maintenance.endsAtMs - nowMs), atMs: maintenance.endsAtMs)
            let note = maintenance.note.isEmpty ? maintenance.window : maintenance.note
            html += "<br><small class=\"hint\">\(HTML.escape(note)) · ends \(until); no notifications, not counted in availability</small>"
        }
        if !blockedBy.isEmpty {
            let links = blockedBy.map { "<a href=\"#source-\(HTML.escape($0))\">\(HTML.escape($0))</a>" }.joined(separator: ", ")
            html += "<br><small class=\"hint\">Blocked by \(links), which \(blockedBy.count == 1 ? "is" : "are") down; its alerts wait</small>"
        }
        html += "</td><td>"
        if let last = entry.last {
            if let failure = last.failure {
                html += "<strong>\(HTML.escape(failure.title))</strong><br>\(HTML.escape(last.message ?? ""))"
                html += "<br><small class=\"hint\">\(HTML.escape(failure.recoverySuggestion))</small>"
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
            if let fallback = last.fallbackInUse {
                html += "<br><span class=\"fallback\">Using fallback: <a href=\"#source-\(HTML.escape(fallback))\">\(HTML.escape(fallback))</a></span>"
            }
            html += "<br><small>checked \(Timestamp.human(nowMs - last.timestampMs)) ago"
            if let success = entry.lastSuccessMs, !last.ok { html += " · last success \(Timestamp.human(nowMs - success)) ago" }
            if entry.lastSuccessMs == nil && !last.ok { html += " · no success yet" }
            html += "</small>"
        } else {
            html += "not probed yet"
        }
        if let download = entry.download { html += StatusPage.download(download) }
        // data-label: on a phone the header row is hidden and each value carries its label.
        html += "</td><td data-label=\"Error rate (1 h)\">"
        if let rate = health?.errorRate(windowMs: HealthWindow.hour) {
            html += StatusPage.fixed(rate * 100, 1) + "% " + StatusPage.sparkline(minutes)
        } else {
            html += "–"
        }
        html += "</td><td data-label=\"Response time p50 / p95\">"
        if let p50 = entry.recentDurations.quantile(0.5), let p95 = entry.recentDurations.quantile(0.95) {
            html += "\(StatusPage.milliseconds(p50)) / \(StatusPage.milliseconds(p95))"
        } else {
            html += "–"
        }
        html += "</td><td data-label=\"Circuit breaker\">" + StatusPage.breaker(breaker, nowMs: nowMs) + "</td></tr>\n"
        return html
    }

    static func breaker(_ breaker: CircuitBreaker?, nowMs: Int64) -> String {
        guard let breaker else { return "closed" }
        switch breaker.state {
        case .closed: return "closed"
        case .open:
            let wait = (breaker.nextAttemptAtMs ?? nowMs) - nowMs
            return "<span class=\"state down\">open</span><br><small>next try in \(Timestamp.human(max(0, wait)))</small>"
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

    /// An inline SVG of the last hour's error rate per minute; gaps where nothing was probed.
    static func sparkline(_ rates: [Double?]) -> String {
        let width = 120.0, height = 24.0
        let step = width / Double(max(1, rates.count - 1))
        // Built as bytes: 120 numbers per row, and String appends cost more than the numbers.
        var path: [UInt8] = []
        path.reserveCapacity(rates.count * 12)
        var drawing = false
        for (index, rate) in rates.enumerated() {
            guard let rate else {
                drawing = false
                continue
            }
            let x = Double(index) * step
            let y = height - 1 - min(1, max(0, rate)) * (height - 2)
            path.append(drawing ? UInt8(ascii: "L") : UInt8(ascii: "M"))
            appendTenths(x, to: &path)
            path.append(UInt8(ascii: " "))
            appendTenths(y, to: &path)
            path.append(UInt8(ascii: " "))
            drawing = true
        }
        let worst = rates.compactMap { $0 }.max() ?? 0
        return "<svg class=\"spark\" width=\"120\" height=\"24\" viewBox=\"0 0 120 24\" role=\"img\" aria-label=\"error rate over the last hour, at most \(Int((worst * 100).rounded()))%\"><path d=\"\(String(decoding: path, as: UTF8.self))\"/></svg>"
    }

    /// A non-negative coordinate with one decimal, as ASCII digits.
    static func appendTenths(_ value: Double, to out: inout [UInt8]) {
        let tenths = Int(max(0, value) * 10 + 0.5)
        var whole = tenths / 10
        var digits = InlineArray<20, UInt8>(repeating: 0)
        var count = 0
        repeat {
            digits[count] = UInt8(48 + whole % 10)
            whole /= 10
            count += 1
        } while whole > 0
        for index in stride(from: count - 1, through: 0, by: -1) { out.append(digits[index]) }
        out.append(UInt8(ascii: "."))
        out.append(UInt8(48 + tenths % 10))
    }

    static func milliseconds(_ seconds: Double) -> String {
        seconds < 1 ? fixed(seconds * 1000, 0) + " ms" : fixed(seconds, 2) + " s"
    }

    /// `value` with `places` decimals, without Foundation's slow `String(format:)`.
    static func fixed(_ value: Double, _ places: Int) -> String {
        guard value.isFinite else { return "–" }
        var scale: Int64 = 1
        for _ in 0..<places { scale *= 10 }
        let scaled = Int64((abs(value) * Double(scale)).rounded())
        var text = (value < 0 && scaled != 0 ? "-" : "") + String(scaled / scale)
        if places > 0 {
            let fraction = String(scaled % scale)
            text += "." + String(repeating: "0", count: places - fraction.count) + fraction
        }
        return text
    }

    /// A relative time with the absolute one for machines and on hover: `<time>4m</time>`.
    static func time(_ text: String, atMs: Int64) -> String {
        let absolute = HTML.escape(Timestamp.rfc3339(atMs))
        return "<time datetime=\"\(absolute)\" title=\"\(absolute)\">\(HTML.escape(text))</time>"
    }

    static let head = """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <noscript><meta http-equiv="refresh" content="15"></noscript>
        <title>Lookout status</title>
        <style>
        :root { color-scheme: light dark; --bg: #fff; --fg: #1f2328; --muted: #59636e; --line: #d1d9e0;
          --ok: #1a7f37; --down: #cf222e; --degraded: #9a6700; --pending: #59636e; --offline: #6639ba; }
        @media (prefers-color-scheme: dark) { :root { --bg: #0d1117; --fg: #e6edf3; --muted: #9198a1; --line: #3d444d;
          --ok: #3fb950; --down: #f85149; --degraded: #d29922; --pending: #9198a1; --offline: #ab7df8; } }
        body { font: 15px/1.45 system-ui, -apple-system, sans-serif; margin: 0 auto; max-width: 80rem; padding: 1rem; background: var(--bg); color: var(--fg); }
        h1 { font-size: 1.4rem; margin: 0 0 .75rem; } h2 { font-size: 1.05rem; margin: 0 0 .4rem; }
        a { color: inherit; }
        .banner { padding: .75rem 1rem; border-radius: .5rem; font-weight: 600; border-left: .5rem solid; margin: 0 0 1rem; }
        .banner.ok { border-color: var(--ok); } .banner.down { border-color: var(--down); } .banner.degraded { border-color: var(--degraded); }
        .banner.pending { border-color: var(--pending); } .banner.offline { border-color: var(--offline); }
        .problems, .alerts { border: 1px solid var(--line); border-radius: .5rem; padding: .5rem 1rem; margin-bottom: 1rem; }
        .problems { border-color: var(--down); } .alerts ul, .problems ul { margin: 0; padding-left: 1.2rem; }
        .tag { font-size: .75rem; border: 1px solid var(--line); border-radius: 1rem; padding: 0 .4rem; }
        .sev-critical .tag { border-color: var(--down); color: var(--down); } .sev-warning .tag { border-color: var(--degraded); color: var(--degraded); }
        .summary, .foot { color: var(--muted); }
        table { border-collapse: collapse; width: 100%; }
        th, td { text-align: left; padding: .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
        th[scope=row] .name { display: block; font-weight: 600; } th small, td small { color: var(--muted); overflow-wrap: anywhere; }
        .state { font-weight: 600; } .state::before { content: "● "; }
        .state.ok { color: var(--ok); } .state.down { color: var(--down); } .state.pending { color: var(--pending); } .state.degraded { color: var(--degraded); } .state.maintenance { color: var(--offline); }
        .hint { display: block; } details code { font-size: .8rem; overflow-wrap: anywhere; }
        .spark { vertical-align: middle; } .spark path { fill: none; stroke: var(--down); stroke-width: 1.5; }
        .fallback { color: var(--degraded); } progress { width: 8rem; vertical-align: middle; }
        @media (max-width: 720px) {
          thead { display: none; } table, tbody, tr, th, td { display: block; width: auto; }
          tr { border: 1px solid var(--line); border-radius: .5rem; margin-bottom: .75rem; padding: .25rem; }
          th, td { border: 0; padding: .25rem .5rem; }
          td[data-label]::before { content: attr(data-label) ": "; color: var(--muted); font-size: .85rem; }
        }
        </style></head><body>
        <h1>Lookout</h1>
        <div id="announce" class="sr" aria-live="polite" role="status" style="position:absolute;left:-10000px"></div>

        """

    static let script = """
        <script>
        (function () {
          function states(root) {
            var map = {};
            root.querySelectorAll('tr[data-state]').forEach(function (row) { map[row.id] = row.dataset.state; });
            return map;
          }
          setInterval(function () {
            fetch(location.pathname, {cache: 'no-store'}).then(function (r) { return r.text(); }).then(function (text) {
              var next = new DOMParser().parseFromString(text, 'text/html').getElementById('content');
              var current = document.getElementById('content');
              if (!next || !current) return;
              var before = states(current), after = states(next), changes = [];
              Object.keys(after).forEach(function (id) {
                if (before[id] && before[id] !== after[id]) changes.push(id.replace('source-', '') + ' is now ' + after[id]);
              });
              var y = window.scrollY;
              current.replaceWith(next);
              window.scrollTo(0, y);
              if (changes.length) document.getElementById('announce').textContent = changes.join('. ');
            }).catch(function () {});
          }, 15000);
        })();
        </script>

        """
}
