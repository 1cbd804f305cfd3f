import Foundation
import Yams

/// `status_page:` and `announcements:`.
extension ConfigReader {
    mutating func readStatusPage(_ node: Node) -> StatusPageSettings {
        var settings = StatusPageSettings()
        guard let page = mapping(node, "status_page", known: ["public", "title", "group_by"]) else { return settings }
        if let flag = page["public"]?.value, let value = bool(flag, "status_page.public") { settings.isPublic = value }
        if let title = page["title"]?.value, let value = string(title, "status_page.title") {
            if value.isEmpty || value.count > 100 {
                problem(title, "status_page.title", "must be 1 to 100 characters")
            } else {
                settings.title = value
            }
        }
        if let label = page["group_by"]?.value, let value = string(label, "status_page.group_by") { settings.groupByLabel = value }
        return settings
    }

    /// Each: `title`, `message`, `state` (investigating, identified, monitoring, resolved), `at`
    /// (RFC 3339), optional `sources`.
    mutating func readAnnouncements(_ node: Node, sources: [SourceConfig]) -> [Announcement] {
        guard let list = sequence(node, "announcements") else { return [] }
        let known = Set(sources.map(\.name))
        var announcements: [Announcement] = []
        for (index, item) in list.enumerated() {
            let path = "announcements[\(index)]"
            guard let fields = mapping(item, path, known: ["title", "message", "state", "at", "sources"]) else { continue }
            let before = problems.count
            for key in ["title", "message", "state", "at"] where fields[key] == nil { problem(item, "\(path).\(key)", "is missing") }
            let title = fields["title"].flatMap { string($0.value, "\(path).title") }
            let message = fields["message"].flatMap { string($0.value, "\(path).message") }
            let names = fields["sources"].flatMap { strings($0.value, "\(path).sources") } ?? []
            if let found = Announcement.problem(title: title, message: message, sources: names, known: known) {
                let field = String(found.prefix { $0 != ":" })
                problem(fields[field]?.value ?? item, "\(path).\(field)", String(found.dropFirst(field.count + 2)))
            }
            var state: Announcement.State?
            if let node = fields["state"]?.value, let text = string(node, "\(path).state") {
                state = Announcement.State(rawValue: text)
                if state == nil {
                    problem(node, "\(path).state", "\"\(text)\" is not a state (\(Announcement.State.allCases.map(\.rawValue).joined(separator: ", ")))")
                }
            }
            let atMs = fields["at"].flatMap { timestamp($0.value, "\(path).at") }
            guard problems.count == before, let title, let message, let state, let atMs else { continue }
            announcements.append(
                Announcement(
                    id: "config-\(index + 1)", title: title, sources: names, updates: [Announcement.Update(atMs: atMs, state: state, message: message)]))
        }
        return announcements
    }
}
