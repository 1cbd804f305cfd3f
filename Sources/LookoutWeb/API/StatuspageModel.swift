import LookoutCore
import LookoutStore

/// Lookout's own status in Statuspage v2's terms, public-safe as `/public` is (no causes, no
/// addresses): groups are component groups, sources components, outages and announcements
/// incidents with updates, maintenance windows scheduled maintenances. `/api/v2/*.json` and the
/// history feeds are written from it.
struct StatuspageModel {
    struct Component {
        var id: String
        var name: String
        var status: VendorPage.Level
        var groupID: String?
        var isGroup = false
        var members: [String] = []
        var position: Int
    }

    struct Update {
        var id: String
        var status: String
        var body: String
        var atMs: Int64
    }

    struct Incident {
        var id: String
        var name: String
        var status: String
        /// none, minor, major, critical, or maintenance.
        var impact: String
        var startedAtMs: Int64
        var updatedAtMs: Int64
        var resolvedAtMs: Int64?
        /// Newest first, as Statuspage lists them.
        var updates: [Update]
        var components: [String]
        var link: String
        var isMaintenance = false
        var scheduledUntilMs: Int64?
    }

    var pageName: String
    var pageURL: String
    var nowMs: Int64
    var components: [Component] = []
    /// Outages and announcements, newest first.
    var incidents: [Incident] = []
    var maintenances: [Incident] = []

    /// The page's indicator and description, from the worst component.
    var indicator: (String, String) {
        let worst = components.filter { !$0.isGroup }.map(\.status).max() ?? .operational
        switch worst {
        case .operational: return ("none", "All Systems Operational")
        case .maintenance: return ("maintenance", "Service Under Maintenance")
        case .degraded: return ("minor", "Minor Service Outage")
        case .partialOutage: return ("major", "Partial System Outage")
        case .majorOutage, .unknown: return ("critical", "Major System Outage")
        }
    }

    var unresolved: [Incident] { incidents.filter { $0.resolvedAtMs == nil } }

    static func id(_ kind: String, _ text: String) -> String {
        kind + "-" + String(StableHash.of(text), radix: 36)
    }

    /// The model at `nowMs`, from the snapshot and the stored history (episodes, announcements).
    static func make(_ page: StatusPage, nowMs: Int64) -> StatuspageModel {
        let config = page.context.monitor.config
        // Public-safe: the sources kept from the public page are not here either.
        let snapshot = page.context.monitor.snapshot(nowMs: nowMs, names: config.sources.filter(\.isPublic).map(\.name))
        let stored = page.history.load(nowMs: nowMs)
        let base = config.externalURL ?? ""
        var model = StatuspageModel(pageName: config.statusPage.title, pageURL: base.isEmpty ? "/" : base, nowMs: nowMs)
        var groups: [String: Int] = [:]
        var componentIDs: [String: String] = [:]
        for (position, record) in snapshot.records.enumerated() {
            let componentID = id("c", record.name)
            componentIDs[record.name] = componentID
            let status: VendorPage.Level =
                snapshot.maintenance[record.name] != nil
                ? .maintenance : record.outage.down ? .majorOutage : record.last?.ok == false ? .partialOutage : .operational
            var groupID: String?
            if let group = config.statusPage.group(of: record.source) {
                let index =
                    groups[group]
                    ?? {
                        model.components.append(
                            Component(id: id("g", group), name: group, status: .operational, isGroup: true, position: model.components.count))
                        groups[group] = model.components.count - 1
                        return model.components.count - 1
                    }()
                model.components[index].members.append(componentID)
                model.components[index].status = max(model.components[index].status, status)
                groupID = model.components[index].id
            }
            model.components.append(Component(id: componentID, name: record.source.publicName, status: status, groupID: groupID, position: position + 1))
        }
        let publicNames = Dictionary(snapshot.records.map { ($0.name, $0.source.publicName) }) { first, _ in first }
        // Outages: a source's paging episodes that overlap are one incident.
        for (source, episodes) in stored.episodes where componentIDs[source] != nil {
            let paging = episodes.filter { $0.severity == "critical" || $0.severity == "warning" }.sorted { $0.startedAtMs < $1.startedAtMs }
            var merged: [(start: Int64, end: Int64?, critical: Bool)] = []
            for episode in paging {
                if let last = merged.last, last.end.map({ episode.startedAtMs <= $0 }) ?? true {
                    let end: Int64? = last.end.flatMap { end in episode.resolvedAtMs.map { max(end, $0) } }
                    merged[merged.count - 1] = (last.start, end, last.critical || episode.severity == "critical")
                } else {
                    merged.append((episode.startedAtMs, episode.resolvedAtMs, episode.severity == "critical"))
                }
            }
            for outage in merged {
                model.incidents.append(
                    outageIncident(
                        source, named: publicNames[source] ?? source, start: outage.start, end: outage.end, critical: outage.critical,
                        component: componentIDs[source]!, base: base))
            }
        }
        // A source down whose alert has not fired yet is an incident already.
        for i in snapshot.records.indices where snapshot.records[i].outage.down {
            let record = snapshot.records[i]
            guard let since = record.incident?.downSinceMs,
                !model.incidents.contains(where: { $0.components == [componentIDs[record.name]!] && $0.resolvedAtMs == nil })
            else { continue }
            model.incidents.append(
                outageIncident(
                    record.name, named: record.source.publicName, start: since, end: nil, critical: true, component: componentIDs[record.name]!, base: base))
        }
        let announcements = (config.announcements + stored.announcements)
        for announcement in announcements {
            let updates = announcement.updates.enumerated().reversed().map { index, update in
                Update(id: id("u", "\(announcement.id)/\(index)"), status: update.state.rawValue, body: update.message, atMs: update.atMs)
            }
            model.incidents.append(
                Incident(
                    id: id("a", announcement.id), name: announcement.title, status: announcement.state.rawValue, impact: "minor",
                    startedAtMs: announcement.postedAtMs, updatedAtMs: announcement.updatedAtMs,
                    resolvedAtMs: announcement.isOpen ? nil : announcement.updatedAtMs, updates: updates,
                    components: announcement.sources.compactMap { componentIDs[$0] }, link: base + "/#announcements"))
        }
        model.incidents.sort { $0.startedAtMs > $1.startedAtMs }
        model.incidents = Array(model.incidents.prefix(50))
        // Maintenance windows: the occurrence under way, or the next within a week.
        for window in page.context.monitor.maintenance.windows {
            let sources = snapshot.records.filter { window.covers($0.source) }.compactMap { componentIDs[$0.name] }
            guard !sources.isEmpty else { continue }
            let now = window.occurrence(atMs: nowMs)
            guard let (start, end) = now ?? window.next(afterMs: nowMs, withinMs: 7 * HealthWindow.day) else { continue }
            let status = now != nil ? "in_progress" : "scheduled"
            let body = window.note.isEmpty ? "Planned work on \(sources.count) source\(sources.count == 1 ? "" : "s")." : window.note
            model.maintenances.append(
                Incident(
                    id: id("m", "\(window.name)/\(start)"), name: window.name, status: status, impact: "maintenance", startedAtMs: start,
                    updatedAtMs: start, updates: [Update(id: id("u", "\(window.name)/\(start)"), status: status, body: body, atMs: start)],
                    components: sources, link: base + "/#maintenance", isMaintenance: true, scheduledUntilMs: end))
        }
        return model
    }

    /// One outage of `source`, told by the name customers read.
    static func outageIncident(_ source: String, named name: String, start: Int64, end: Int64?, critical: Bool, component: String, base: String) -> Incident {
        var updates = [
            Update(
                id: id("u", "\(source)/\(start)/0"), status: "investigating", body: "\(name) is not working as expected; we are looking into it.", atMs: start)
        ]
        if let end {
            updates.insert(Update(id: id("u", "\(source)/\(start)/1"), status: "resolved", body: "\(name) works as expected again.", atMs: end), at: 0)
        }
        return Incident(
            id: id("o", "\(source)/\(start)"), name: "\(name) outage", status: end == nil ? "investigating" : "resolved",
            impact: critical ? "major" : "minor", startedAtMs: start, updatedAtMs: end ?? start, resolvedAtMs: end, updates: updates,
            components: [component], link: base + "/#source-" + StatusPage.slug(name))
    }
}
