import Foundation
import LookoutCore

/// The HTML status page: an overall banner and one row per source with its last result.
/// No scripts and no external assets; it refreshes itself every 15 seconds.
public struct StatusPage: Sendable {
    public let board: SourceStatusBoard

    public init(board: SourceStatusBoard) {
        self.board = board
    }

    public func render(now: Date = Date()) -> String {
        let entries = board.snapshot()
        let failing = entries.filter { $0.last?.ok == false }
        let banner: (String, String)
        if entries.isEmpty || entries.allSatisfy({ $0.last == nil }) {
            banner = ("pending", "Waiting for the first probes")
        } else if failing.isEmpty {
            banner = ("ok", "Operational")
        } else if failing.count == entries.count {
            banner = ("down", "Outage: every source is failing")
        } else {
            banner = ("degraded", "Degraded: some sources are unavailable; results from the others are current")
        }
        var html = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <meta http-equiv="refresh" content="15">
            <title>Lookout status</title>
            <style>
            :root { color-scheme: light dark; --ok: #1a7f37; --down: #cf222e; --degraded: #9a6700; --pending: #57606a; }
            body { font: 15px/1.4 system-ui, sans-serif; margin: 1rem auto; max-width: 72rem; padding: 0 1rem; }
            .banner { padding: .75rem 1rem; border-radius: .5rem; color: #fff; font-weight: 600; }
            .banner.ok { background: var(--ok); } .banner.down { background: var(--down); }
            .banner.degraded { background: var(--degraded); } .banner.pending { background: var(--pending); }
            table { border-collapse: collapse; width: 100%; margin-top: 1rem; }
            th, td { text-align: left; padding: .4rem .5rem; border-bottom: 1px solid #8884; vertical-align: top; }
            .state { font-weight: 600; } .state.ok { color: var(--ok); } .state.down { color: var(--down); } .state.pending { color: var(--pending); }
            </style></head><body>
            <h1>Lookout</h1>
            <p class="banner \(banner.0)" role="status" aria-live="polite">\(HTML.escape(banner.1))</p>
            <table><thead><tr><th>Source</th><th>State</th><th>Last result</th><th>HTTP</th><th>Duration</th><th>Checked</th></tr></thead><tbody>

            """
        for entry in entries {
            let name = HTML.escape(entry.source.name)
            guard let last = entry.last else {
                html += "<tr><td>\(name)<br><small>\(HTML.escape(entry.source.url))</small></td><td class=\"state pending\">Pending</td><td>not probed yet</td><td></td><td></td><td></td></tr>\n"
                continue
            }
            let state = last.ok ? ("ok", "Up") : ("down", "Down")
            let detail: String
            if let failure = last.failure {
                detail = "<strong>\(HTML.escape(failure.category.title))</strong><br>\(HTML.escape(last.message ?? ""))<br><small>\(HTML.escape(failure.category.recoverySuggestion))</small>"
            } else {
                detail = "OK"
            }
            let ago = max(0, Int(now.timeIntervalSince1970 - Double(last.timestampMs) / 1000))
            html += "<tr><td>\(name)<br><small>\(HTML.escape(entry.source.url))</small></td><td class=\"state \(state.0)\">\(state.1)</td><td>\(detail)</td><td>\(last.httpStatus.map(String.init) ?? "–")</td><td>\(String(format: "%.0f ms", last.durationSeconds * 1000))</td><td>\(ago) s ago</td></tr>\n"
        }
        html += "</tbody></table>\n<p><small>Refreshes every 15 s · <a href=\"/metrics\">metrics</a></small></p>\n</body></html>\n"
        return html
    }
}
