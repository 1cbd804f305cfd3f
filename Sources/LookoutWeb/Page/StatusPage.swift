import Foundation
import LookoutAlerting
import LookoutCore
import LookoutStore
import ResilientHTTP
import Synchronization

/// The HTML status page (SPEC section 8). From the top: the banner; Lookout's own problems;
/// open announcements and maintenance; the open incidents, one line per source, worst first;
/// then the sources by group, each with its 90-day bar, availability and response-time chart;
/// past announcements last. No external assets; readable without JavaScript; light and dark;
/// phone width. A small script refreshes the content every 15 s in place (keeping the scroll
/// position and open groups), filters as one types and announces state changes to screen
/// readers; without scripts a meta refresh and the `?q=` filter do the same.
///
/// Two audiences: on-call engineers get everything; the public page (`status_page.public`)
/// leaves out URLs, error details, breaker internals and admin hints.
package struct StatusPage: Sendable {
    package enum Audience: Sendable { case onCall, `public` }

    package let context: LookoutContext
    let history: PageHistory

    package init(context: LookoutContext) {
        self.context = context
        history = PageHistory(database: context.database)
    }

    /// What one render works from.
    struct View {
        var snapshot: RegistrySnapshot
        var audience: Audience
        var nowMs: Int64
        var days: DayAxis
        /// Alert episodes of the last 90 days per source, for the bars' titles.
        var episodes: [String: [AlertStore.Episode]]
        /// Maintenance that began in those 90 days, for the bars' titles.
        var maintenanceDays: [DayAxis.Maintenance]
        /// The other instances (`peers`), as last fetched.
        var peers: [Peers.Peer] = []
        /// Per source name, its state as each reachable peer sees it (other locations).
        var elsewhere: [String: [(peer: String, state: String)]] = [:]
        /// Shards that the instances disagree on, run twice or never (`ShardCoverage`).
        var shardProblems: [String] = []
        /// Per source name, what its vendor says (`vendor_status`).
        var vendors: [String: VendorView] = [:]
        var isPublic: Bool { audience == .public }
    }

    package func render(nowMs: Int64 = Timestamp.nowMs(), audience: Audience = .onCall, filter: String? = nil) -> String {
        String(decoding: renderBytes(nowMs: nowMs, audience: audience, filter: filter), as: UTF8.self)
    }

    /// The page as UTF-8, as the server sends it.
    package func renderBytes(nowMs: Int64 = Timestamp.nowMs(), audience: Audience = .onCall, filter: String? = nil) -> [UInt8] {
        // The public page leaves out the sources kept from it (`public: false`).
        let config = context.monitor.config
        let hidden = audience == .public && config.sources.contains { !$0.isPublic }
        let snapshot = context.monitor.snapshot(nowMs: nowMs, names: hidden ? config.sources.filter(\.isPublic).map(\.name) : nil)
        let stored = history.load(nowMs: nowMs)
        let days = DayAxis(nowMs: nowMs)
        var view = View(
            snapshot: snapshot, audience: audience, nowMs: nowMs, days: days, episodes: stored.episodes,
            maintenanceDays: history.maintenance(context.monitor.maintenance.windows, days: days))
        view.vendors = StatusPage.vendorViews(snapshot, watch: context.monitor.vendors)
        let peers = context.peers.peers.filter { !$0.isSelf }
        if !peers.isEmpty {
            view.peers = peers
            view.shardProblems = ShardCoverage.problems(context, snapshot: snapshot)
            for peer in peers where peer.problem == nil {
                // The public page does not give out addresses.
                let label = audience == .public && peer.label == peer.url ? "another location" : peer.label
                for source in peer.sources { view.elsewhere[source.name, default: []].append((label, source.state)) }
            }
        }
        let settings = snapshot.config.statusPage
        let filter = filter?.trimmingCharacters(in: .whitespacesAndNewlines).prefix(100).lowercased() ?? ""
        var html = HTMLOutput(capacity: 16_384 + snapshot.records.count * 8_000)
        html += StatusPage.head(title: settings.title)
        let banner = view.isPublic ? StatusPage.publicBanner(snapshot.overall) : StatusPage.banner(snapshot.overall)
        html += "<main id=\"content\">\n<p class=\"banner \(banner.0)\" id=\"banner\">\(HTML.escape(banner.1))</p>\n"
        if !view.isPublic { html += problems(nowMs: nowMs) }
        let announcements = (snapshot.config.announcements + stored.announcements).sorted { $0.updatedAtMs > $1.updatedAtMs }
        let publicNames = view.isPublic ? Dictionary(snapshot.records.map { ($0.name, $0.source.publicName) }) { first, _ in first } : nil
        html += StatusPage.openAnnouncements(announcements.filter(\.isOpen), nowMs: nowMs, publicNames: publicNames)
        html += maintenanceSection(view)
        html += incidents(view)
        html += peersSection(view)
        html += vendorsSection(view)
        sources(view, filter: String(filter), into: &html)
        html += StatusPage.pastAnnouncements(
            announcements.filter { !$0.isOpen && nowMs - $0.updatedAtMs <= 30 * HealthWindow.day }, nowMs: nowMs, publicNames: publicNames)
        html += "</main>\n"
        if view.isPublic {
            html += "<p class=\"foot\">Updated \(HTML.escape(Timestamp.rfc3339(nowMs))) · Lookout</p>\n"
        } else {
            html +=
                "<p class=\"foot\"><a href=\"/metrics\">metrics</a> · <a href=\"/api/v1/status\">status JSON</a> · <a href=\"/api/v1/alerts\">alerts</a> · <a href=\"/public\">public page</a> · Lookout \(LookoutVersion.string)</p>\n"
        }
        html += StatusPage.script
        html += "</body></html>\n"
        return html.bytes
    }

    /// The banner customers read: Statuspage's words.
    static func publicBanner(_ overall: String) -> (String, String) {
        switch overall {
        case "operational": ("ok", "All Systems Operational")
        case "degraded": ("degraded", "Partial System Outage")
        case "outage": ("down", "Major System Outage")
        case "offline": ("offline", "Status unknown: the monitor cannot reach the network")
        default: ("pending", "Checking")
        }
    }

    static func banner(_ overall: String) -> (String, String) {
        switch overall {
        case "operational": ("ok", "Operational: every source answers as expected")
        case "degraded": ("degraded", "Degraded: some sources are unavailable; results from the others are current")
        case "outage": ("down", "Outage: every source is failing")
        case "offline": ("offline", "Offline: Lookout cannot reach the network; per-source results are held back")
        default: ("pending", "Waiting for the first probes")
        }
    }

    /// The sources by group: each group a `<details>`, open unless all its sources are well.
    func sources(_ view: View, filter: String, into html: inout HTMLOutput) {
        let snapshot = view.snapshot
        let settings = snapshot.config.statusPage
        var groups: [String: [Int]] = [:]
        var order: [String] = []
        for (index, source) in snapshot.sources.enumerated() {
            if !filter.isEmpty && !StatusPage.matches(source, filter) { continue }
            let group = settings.group(of: source) ?? ""
            if groups[group] == nil { order.append(group) }
            groups[group, default: []].append(index)
        }
        // Named groups in the order they first appear, ungrouped sources last.
        if let ungrouped = order.firstIndex(of: ""), order.count > 1 { order.append(order.remove(at: ungrouped)) }
        let up = snapshot.records.indices.count { snapshot.records[$0].last?.ok == true }
        html += "<section class=\"sources\" aria-label=\"Sources\"><div class=\"bar-head\">"
        html +=
            "<p class=\"summary\">\(up) of \(snapshot.records.count) sources up · updated \(StatusPage.time(Timestamp.clock(view.nowMs), atMs: view.nowMs))</p>"
        html += "<form method=\"get\" role=\"search\"><label for=\"filter\">Filter</label> "
        html += "<input id=\"filter\" name=\"q\" type=\"search\" value=\"\(HTML.escape(filter))\" placeholder=\"name, group or label\" autocomplete=\"off\"> "
        html += "<button type=\"submit\">Filter</button></form></div>\n"
        if !filter.isEmpty && order.isEmpty {
            html += "<p>No source matches “\(HTML.escape(filter))”. <a href=\"?\">Show all</a></p>"
        }
        var usedIDs: Set<String> = []
        for group in order {
            let members = groups[group] ?? []
            let state = StatusPage.rollUp(
                members.map { index in
                    snapshot.maintenance[snapshot.records[index].name] != nil ? nil : snapshot.records[index].last?.ok
                })
            let name = group.isEmpty ? (order.count > 1 ? "Other sources" : "Sources") : group
            // Names that slug alike ("A B", "A-B") get -2, -3…: ids stay unique.
            var id = "group-" + StatusPage.slug(name)
            if usedIDs.contains(id) { id += "-\((2...).first { !usedIDs.contains(id + "-\($0)") } ?? 2)" }
            usedIDs.insert(id)
            let healthy = members.filter { snapshot.records[$0].last?.ok == true }.count
            // Collapsed when all is well, unless a filter narrowed the list.
            let open = state.0 != "ok" || !filter.isEmpty || order.count == 1
            html += "<details class=\"group\" id=\"\(id)\" data-state=\"\(state.0)\"\(open ? " open" : "")><summary>"
            html +=
                "<h2>\(HTML.escape(name))</h2> <span class=\"state \(state.0)\">\(state.1)</span> <small>\(healthy) of \(members.count) up</small></summary>\n"
            html += "<table>" + StatusPage.columnHeaders(for: view)
            for index in members { source(index, view, into: &html) }
            html += "</table></details>\n"
        }
        html += "</section>\n"
    }

    /// A group's state from its members' last results (nil: not probed, or in maintenance).
    static func rollUp(_ results: [Bool?]) -> (String, String) {
        let known = results.compactMap { $0 }
        let down = known.filter { !$0 }.count
        if known.isEmpty { return results.isEmpty ? ("pending", "Empty") : ("pending", "Pending") }
        if down == 0 { return ("ok", "Operational") }
        return down == known.count ? ("down", "Outage") : ("degraded", "Degraded")
    }

    /// Whether a source's name, group or a label value contains `filter` (lowercased).
    static func matches(_ source: SourceConfig, _ filter: String) -> Bool {
        if source.name.lowercased().contains(filter) { return true }
        if let group = source.group, group.lowercased().contains(filter) { return true }
        return source.labels.values.contains { $0.lowercased().contains(filter) }
    }

    /// An id-safe form of a group name.
    static func slug(_ name: String) -> String {
        let bytes = name.lowercased().utf8.map { byte -> UInt8 in
            (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39) ? byte : UInt8(ascii: "-")
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// What the page reads from the database — alert episodes and posted announcements — kept
/// for 15 s (the refresh period), so a page for 1,000 sources does not query on every view.
final class PageHistory: Sendable {
    struct Loaded: Sendable {
        var atMs: Int64
        var episodes: [String: [AlertStore.Episode]]
        var announcements: [Announcement]
    }

    let database: LookoutDatabase?
    private let cache = Mutex<Loaded?>(nil)
    /// Bumped by `invalidate`: a load that began before it does not store its older result.
    private let generation = Atomic<Int>(0)

    init(database: LookoutDatabase?) {
        self.database = database
    }

    func load(nowMs: Int64) -> Loaded {
        if let cached = cache.withLock({ $0 }), cached.atMs <= nowMs, nowMs - cached.atMs < 15_000 { return cached }
        let began = generation.load(ordering: .acquiring)
        var loaded = Loaded(atMs: nowMs, episodes: [:], announcements: [])
        if let database {
            let since = nowMs - 90 * HealthWindow.day
            let episodes = (try? AlertStore(database: database).episodes(sinceMs: since)) ?? []
            loaded.episodes = Dictionary(grouping: episodes, by: \.source)
            loaded.announcements = (try? AnnouncementStore(database: database).recent(sinceMs: nowMs - 30 * HealthWindow.day)) ?? []
        }
        cache.withLock { cache in
            if generation.load(ordering: .acquiring) == began { cache = loaded }
        }
        return loaded
    }

    private let maintenanceCache = Mutex<(dayMs: Int64, windows: [MaintenanceWindow], found: [DayAxis.Maintenance])?>(nil)

    /// The maintenance of the bars' 90 days, worked out again only when the day or the windows
    /// change (a recurring window costs a few calendar computations per day).
    func maintenance(_ windows: [MaintenanceWindow], days: DayAxis) -> [DayAxis.Maintenance] {
        let today = days.startsMs.last ?? 0
        if let cached = maintenanceCache.withLock({ $0 }), cached.dayMs == today, cached.windows == windows { return cached.found }
        let found = days.maintenance(windows)
        maintenanceCache.withLock { $0 = (today, windows, found) }
        return found
    }

    /// Forgets the cache (after an announcement is posted).
    func invalidate() {
        cache.withLock { cache in
            generation.add(1, ordering: .releasing)
            cache = nil
        }
    }
}
