import Foundation
import ResilientHTTP

/// The page's style and script, inline: the page needs nothing from anywhere else.
extension StatusPage {
    static func head(title: String) -> String {
        """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <noscript><meta http-equiv="refresh" content="15"></noscript>
        <title>\(HTML.escape(title)) status</title>
        \(style)
        </head><body>
        <h1>\(HTML.escape(title))</h1>
        <div id="announce" class="sr" aria-live="polite" role="status"></div>

        """
    }

    static let style = "<style>\(styleSource)</style>"

    static let styleSource = """

        :root { color-scheme: light dark; --bg: #fff; --fg: #1f2328; --muted: #59636e; --line: #d1d9e0; --none: #d1d9e0;
          --ok: #1a7f37; --down: #cf222e; --degraded: #9a6700; --major: #bc4c00; --pending: #59636e; --offline: #6639ba; }
        @media (prefers-color-scheme: dark) { :root { --bg: #0d1117; --fg: #e6edf3; --muted: #9198a1; --line: #3d444d; --none: #3d444d;
          --ok: #3fb950; --down: #f85149; --degraded: #d29922; --major: #db6d28; --pending: #9198a1; --offline: #ab7df8; } }
        body { font: 15px/1.45 system-ui, -apple-system, sans-serif; margin: 0 auto; max-width: 80rem; padding: 1rem; background: var(--bg); color: var(--fg); }
        h1 { font-size: 1.4rem; margin: 0 0 .75rem; } h2 { font-size: 1.05rem; margin: 0 0 .4rem; }
        a { color: inherit; }
        .sr { position: absolute; left: -10000px; }
        .banner { padding: .75rem 1rem; border-radius: .5rem; font-weight: 600; border-left: .5rem solid; margin: 0 0 1rem; }
        .banner.ok { border-color: var(--ok); } .banner.down { border-color: var(--down); } .banner.degraded { border-color: var(--degraded); }
        .banner.pending { border-color: var(--pending); } .banner.offline { border-color: var(--offline); }
        .problems, .incidents, .maint, .peers, .announcement { border: 1px solid var(--line); border-radius: .5rem; padding: .5rem 1rem; margin-bottom: 1rem; }
        .problems { border-color: var(--down); } .incidents ul, .problems ul, .maint ul, .peers ul { margin: 0; padding-left: 1.2rem; }
        .incident { margin: .3rem 0; } .incident .cause { font-weight: 600; } .doing { color: var(--muted); }
        details.incidents > summary { cursor: pointer; color: var(--muted); }
        .announcement { border-left: .5rem solid var(--degraded); } .announcement.state-resolved { border-left-color: var(--ok); }
        .announcement.state-monitoring { border-left-color: var(--offline); } .announcement p { margin: .3rem 0; overflow-wrap: anywhere; }
        .meta { color: var(--muted); font-size: .9rem; } .peer-sources .state { margin-right: .6rem; font-weight: 400; } .past h2 { margin-top: 1rem; }
        .tag { font-size: .75rem; border: 1px solid var(--line); border-radius: 1rem; padding: 0 .4rem; }
        .sev-critical .tag, .sev-down .tag { border-color: var(--down); color: var(--down); } .sev-warning .tag { border-color: var(--degraded); color: var(--degraded); }
        .summary, .foot { color: var(--muted); margin: 0; }
        .bar-head { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: center; justify-content: space-between; margin-bottom: .5rem; }
        .bar-head input { font: inherit; padding: .2rem .4rem; width: 14rem; max-width: 60vw; }
        details.group { border: 1px solid var(--line); border-radius: .5rem; margin-bottom: .75rem; padding: 0 .5rem; }
        details.group > summary { cursor: pointer; padding: .5rem; } details.group > summary h2 { display: inline; }
        table { border-collapse: collapse; width: 100%; table-layout: fixed; }
        \(columnWidths)
        th, td { text-align: left; padding: .5rem; vertical-align: top; } tbody { border-top: 1px solid var(--line); }
        tr.history td { padding-top: 0; }
        th[scope=row] .name { display: block; font-weight: 600; text-decoration: none; }
        .strip { display: flex; gap: 2px; margin: .2rem 0; } .strip i { width: 5px; height: 12px; border-radius: 1px; background: var(--ok); }
        .strip i.f { background: var(--down); } .strip + br { display: none; } th small, td small { color: var(--muted); overflow-wrap: anywhere; }
        .state { font-weight: 600; } .state::before { content: "● "; }
        .state.ok { color: var(--ok); } .state.down { color: var(--down); } .state.pending { color: var(--pending); } .state.degraded { color: var(--degraded); } .state.maintenance { color: var(--offline); }
        .hint { display: block; } details code { font-size: .8rem; overflow-wrap: anywhere; }
        .spark { vertical-align: middle; } .spark path { fill: none; stroke: var(--down); stroke-width: 1.5; } .spark.zero path { stroke: var(--ok); }
        .hist { display: flex; flex-wrap: wrap; gap: .25rem 1.5rem; align-items: flex-end; }
        .uptime { flex: 1 1 24rem; min-width: 0; }
        .bars { display: flex; gap: 1px; height: 1.6rem; } .bars i { flex: 1; border-radius: 1px; background: var(--ok); }
        .bars i.n { background: var(--none); } .bars i.w { background: var(--degraded); } .bars i.m { background: var(--major); } .bars i.d { background: var(--down); }
        .axis { display: flex; justify-content: space-between; color: var(--muted); font-size: .75rem; }
        .avail { margin: 0; font-size: .85rem; color: var(--muted); } .avail b { color: var(--fg); } .avail span { white-space: nowrap; margin-right: .5rem; }
        figure.rt { margin: 0; width: 15rem; } svg.rt { width: 100%; height: auto; font-size: 9px; fill: var(--muted); }
        svg.rt path { fill: none; stroke-width: 1.5; } svg.rt .p50 { stroke: var(--ok); } svg.rt .p95 { stroke: var(--degraded); stroke-dasharray: 3 2; }
        svg.rt .axis { stroke: var(--line); } figcaption { font-size: .75rem; color: var(--muted); }
        .k50::before { content: "— "; color: var(--ok); } .k95::before { content: "- - "; color: var(--degraded); }
        .rt-none { font-size: .85rem; color: var(--muted); margin: 0; }
        .fallback { color: var(--degraded); } progress { width: 8rem; vertical-align: middle; }
        [hidden] { display: none !important; }
        @media (max-width: 720px) {
          thead { display: none; } table, tbody, tr, th, td { display: block; width: auto; }
          tbody { border: 1px solid var(--line); border-radius: .5rem; margin-bottom: .75rem; padding: .25rem; }
          th, td { border: 0; padding: .25rem .5rem; }
          td[data-label]::before { content: attr(data-label) ": "; color: var(--muted); font-size: .85rem; }
          figure.rt { width: 100%; }
          /* A healthy card folds to its name, state, latest probes and bars; tapping the name opens it. */
          tbody[data-state="ok"]:not(:target) th small, tbody[data-state="ok"]:not(:target) td[data-label]:not([data-label="State"]),
          tbody[data-state="ok"]:not(:target) .avail, tbody[data-state="ok"]:not(:target) figure.rt,
          tbody[data-state="ok"]:not(:target) .axis { display: none; }
          tbody[data-state="ok"]:not(:target) td[data-label="State"]::before { content: none; }
          tbody[data-state="ok"]:not(:target) th .name::after { content: " ›"; color: var(--muted); font-weight: 400; }
        }

        """

    static let script = "<script>\(scriptSource)</script>\n"

    static let scriptSource = """

        (function () {
          function states(root) {
            var map = {};
            root.querySelectorAll('tbody[data-state]').forEach(function (row) { map[row.id] = row.dataset.state; });
            return map;
          }
          function filter() {
            var box = document.getElementById('filter');
            if (!box) return;
            var text = box.value.trim().toLowerCase();
            document.querySelectorAll('tbody[data-filter]').forEach(function (body) {
              body.hidden = text !== '' && body.dataset.filter.indexOf(text) < 0;
            });
            document.querySelectorAll('details.group').forEach(function (group) {
              var shown = group.querySelectorAll('tbody[data-filter]:not([hidden])').length;
              group.hidden = shown === 0;
              if (text !== '' && shown > 0) group.open = true;
            });
          }
          document.addEventListener('input', function (event) { if (event.target.id === 'filter') filter(); });
          setInterval(function () {
            if (document.activeElement && document.activeElement.id === 'filter') return;
            fetch(location.pathname + location.search, {cache: 'no-store'}).then(function (r) { return r.text(); }).then(function (text) {
              var next = new DOMParser().parseFromString(text, 'text/html').getElementById('content');
              var current = document.getElementById('content');
              if (!next || !current) return;
              var before = states(current), after = states(next), changes = [];
              Object.keys(after).forEach(function (id) {
                if (before[id] && before[id] !== after[id]) changes.push(id.replace('source-', '') + ' is now ' + after[id]);
              });
              var open = {}, box = document.getElementById('filter');
              current.querySelectorAll('details[id]').forEach(function (d) { open[d.id] = d.open; });
              next.querySelectorAll('details[id]').forEach(function (d) { if (d.id in open) d.open = open[d.id]; });
              var typed = box ? box.value : null;
              var y = window.scrollY;
              current.replaceWith(next);
              if (typed !== null && document.getElementById('filter')) document.getElementById('filter').value = typed;
              filter();
              window.scrollTo(0, y);
              if (changes.length) document.getElementById('announce').textContent = changes.join('. ');
            }).catch(function () {});
          }, 15000);
        })();

        """

    /// The Content-Security-Policy of every answer: nothing loads from anywhere, the only script
    /// and style that run are the page's own (by their SHA-256), the script may fetch the page
    /// again, and no site may frame the page.
    package static let contentSecurityPolicy =
        "default-src 'none'; script-src '\(hashSource(scriptSource))'; style-src '\(hashSource(styleSource))'; "
        + "connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

    /// A CSP hash source: `sha256-` and the base64 of the digest of `text`'s UTF-8 bytes.
    package static func hashSource(_ text: String) -> String {
        let hasher = SHA256()
        hasher.update(Array(text.utf8))
        return "sha256-" + Data(hasher.finalize()).base64EncodedString()
    }
}
