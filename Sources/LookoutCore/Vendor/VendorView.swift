/// What a vendor's page says about what one source watches (its `components`, or the page as a
/// whole), in one value that the page, the API, `lookout status`, notifications and metrics read
/// the same way.
package struct VendorView: Sendable, Equatable {
    package enum State: String, Sendable {
        /// Not read yet (just started, or just configured).
        case unread
        /// The last read failed: we cannot say what the vendor says.
        case unreadable
        case operational
        case maintenance
        /// The vendor admits a problem on what we watch: an incident or a component's status.
        case problem
    }

    package var state: State
    /// The vendor's page, by host.
    package var vendor: String
    /// The page's own name, if it gives one.
    package var pageName: String?
    /// The worst status of the watched components (or the page's).
    package var level: VendorPage.Level = .unknown
    /// The watched components that are not operational, with their status words.
    package var components: [(name: String, level: VendorPage.Level)] = []
    /// The most relevant open incident on what we watch (the worst, then the newest).
    package var incident: VendorPage.Incident?
    /// Maintenance in progress on what we watch.
    package var maintenance: VendorPage.Incident?
    /// Why the page cannot be read, and since when.
    package var problem: String?
    package var failingSinceMs: Int64?
    package var lastReadMs: Int64?
    /// Where a person reads more: the incident's link, else the page.
    package var link: String
    /// The source's outage being followed (or the last one): since when, and when the vendor
    /// acknowledged it, if it did.
    package var followed: (downSinceMs: Int64, acknowledgedAtMs: Int64?, incident: String?)?

    package static func == (lhs: VendorView, rhs: VendorView) -> Bool {
        lhs.state == rhs.state && lhs.vendor == rhs.vendor && lhs.level == rhs.level && lhs.incident == rhs.incident
            && lhs.maintenance == rhs.maintenance && lhs.problem == rhs.problem && lhs.components.map(\.name) == rhs.components.map(\.name)
            && lhs.followed?.downSinceMs == rhs.followed?.downSinceMs && lhs.followed?.acknowledgedAtMs == rhs.followed?.acknowledgedAtMs
    }

    /// Whether the vendor admits a problem on what we watch.
    package var reportsProblem: Bool { state == .problem }

    package static func of(_ reading: VendorWatch.Reading?, config: VendorStatusConfig) -> VendorView {
        var view = VendorView(state: .unread, vendor: VendorWatch.host(config.url), link: config.url)
        guard let reading else { return view }
        view.lastReadMs = reading.lastSuccessMs
        if let problem = reading.problem {
            view.state = .unreadable
            view.problem = problem
            view.failingSinceMs = reading.failingSinceMs
            return view
        }
        guard let page = reading.page else { return view }
        view.pageName = page.name
        let watched = Set(config.components.map { $0.lowercased() })
        func isWatched(_ component: VendorPage.Component) -> Bool {
            watched.contains(component.id.lowercased()) || watched.contains(component.name.lowercased())
        }
        // A watched group brings its members.
        let groups = Set(page.components.filter { $0.isGroup && isWatched($0) }.map(\.id))
        let components = page.components.filter { !$0.isGroup && (isWatched($0) || $0.groupID.map(groups.contains) == true) }
        let names = Set(components.flatMap { [$0.id.lowercased(), $0.name.lowercased()] }).union(watched)
        func concerns(_ incident: VendorPage.Incident) -> Bool {
            watched.isEmpty || incident.components.isEmpty || incident.components.contains { names.contains($0.lowercased()) }
        }
        let open = page.incidents.filter { $0.isOpen && concerns($0) }
        view.incident = open.filter { !$0.isMaintenance }.max { ($0.impact, $0.startedAtMs ?? 0) < ($1.impact, $1.startedAtMs ?? 0) }
        view.maintenance = open.first { $0.isMaintenanceInProgress }
        view.level = watched.isEmpty ? page.level : components.map(\.level).max() ?? .unknown
        if !watched.isEmpty && !page.format.listsEveryComponent {
            // The page names only what an incident or maintenance affects: a watched component
            // none names is working.
            view.level = max(view.level == .unknown ? .operational : view.level, view.maintenance != nil ? .maintenance : .operational)
        }
        if let incident = view.incident { view.level = max(view.level == .unknown ? .operational : view.level, incident.impact) }
        view.components = components.filter { $0.level != .operational }.map { ($0.name, $0.level) }
        if let link = view.incident?.shortlink ?? view.maintenance?.shortlink { view.link = link }
        if !watched.isEmpty && components.isEmpty && view.incident == nil && page.format.listsEveryComponent {
            view.state = .unreadable
            view.problem = "the page lists none of the components \(config.components.joined(separator: ", "))"
            return view
        }
        if view.level == .unknown && view.incident == nil && view.maintenance == nil {
            view.state = .unreadable
            view.problem = "its status is in words Lookout does not know"
            return view
        }
        view.state =
            view.incident != nil || view.level.isProblem ? .problem : view.maintenance != nil || view.level == .maintenance ? .maintenance : .operational
        return view
    }

    /// The vendor's time against ours: "4m after we saw it", "2m before we saw it", or "as we
    /// saw it" within a minute.
    static func relative(_ lagMs: Int64) -> String {
        lagMs >= 60_000 ? "\(Timestamp.human(lagMs)) after we saw it" : lagMs <= -60_000 ? "\(Timestamp.human(-lagMs)) before we saw it" : "as we saw it"
    }

    /// What the vendor said about an outage that has ended: "GitHub's status page reported it 4m
    /// after we saw it (‘Elevated error rates on API’)" or "… never reported it".
    package func sentence(endedOutageSince downSinceMs: Int64) -> String {
        let who = pageName.map { "\($0)'s status page" } ?? vendor
        guard let followed, followed.downSinceMs == downSinceMs else { return sentence(downSinceMs: nil) }
        guard let acknowledged = followed.acknowledgedAtMs else { return "\(who) never reported it" }
        return "\(who) reported it \(VendorView.relative(acknowledged - downSinceMs))" + (followed.incident.map { " (‘\($0)’)" } ?? "")
    }

    /// What the vendor says, in one sentence for people, told against our outage since
    /// `downSinceMs` (nil: the source is up): "the vendor reports it: ‘Elevated error rates on
    /// API’ (incident since 12:07 UTC, 4m after we saw it)", "the vendor reports nothing yet (all
    /// operational)", "the vendor page cannot be read (…)".
    package func sentence(downSinceMs: Int64?) -> String {
        let who = pageName.map { "\($0)'s status page" } ?? vendor
        switch state {
        case .unread: return "\(who) has not been read yet"
        case .unreadable: return "\(who) cannot be read" + (problem.map { " (\($0))" } ?? "")
        case .operational:
            return downSinceMs == nil ? "\(who) reports all operational" : "\(who) reports nothing yet (all operational)"
        case .maintenance:
            let until = maintenance?.endsAtMs.map { " until \(Timestamp.clock($0))" } ?? ""
            return "\(who) reports maintenance" + (maintenance.map { ": ‘\($0.name)’" } ?? "") + until
        case .problem:
            var words: String
            if let incident {
                words = "‘\(incident.name)’"
                var facts: [String] = []
                if let started = incident.startedAtMs { facts.append("incident since \(Timestamp.clock(started))") }
                let acknowledged = followed.flatMap { $0.downSinceMs == downSinceMs ? $0.acknowledgedAtMs : nil }
                if let since = downSinceMs, let started = acknowledged ?? incident.startedAtMs {
                    facts.append(VendorView.relative(started - since))
                }
                if !facts.isEmpty { words += " (\(facts.joined(separator: ", ")))" }
            } else {
                let named = components.prefix(3).map { "\($0.name): \($0.level.words)" }.joined(separator: ", ")
                words = named.isEmpty ? level.words : named
            }
            return downSinceMs == nil ? "\(who) reports \(words) while our probes pass" : "\(who) reports it: \(words)"
        }
    }
}
