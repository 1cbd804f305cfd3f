import Foundation
import Yams

/// `status_page: {public, title, group_by}`.
extension StatusPageSettings: ConfigReadable {
    enum Key: String, ConfigKey {
        case `public`, title
        case groupBy = "group_by"
        case publicDetails = "public_details"
    }

    mutating func read(_ page: ConfigSection<Key>, _ reader: inout ConfigReader) {
        if let value = reader.bool(page[.public]) { isPublic = value }
        if let entry = page[.title], let value = reader.string(entry) {
            if value.isEmpty || value.count > 100 {
                reader.problem(entry, "must be 1 to 100 characters")
            } else if let problem = DisplayText.problem(value, multiline: false) {
                reader.problem(entry, problem)
            } else {
                title = value
            }
        }
        if let value = reader.string(page[.groupBy]) { groupByLabel = value }
        if let value = reader.bool(page[.publicDetails]) { publicDetails = value }
    }
}

/// `announcements:`, each `title`, `message`, `state` (investigating, identified, monitoring,
/// resolved), `at` (RFC 3339) and optional `sources`.
extension Announcement {
    enum Key: String, ConfigKey { case title, message, state, at, sources }
}

extension ConfigReader {
    mutating func readAnnouncements(_ node: Node, sources: [SourceConfig]) -> [Announcement] {
        guard let list = sequence(node, "announcements") else { return [] }
        let known = Set(sources.map(\.name))
        var announcements: [Announcement] = []
        for (index, item) in list.enumerated() {
            guard let fields = section(item, "announcements[\(index)]", Announcement.Key.self) else { continue }
            let before = problems.count
            for key in [Announcement.Key.title, .message, .state, .at] { require(fields, key) }
            let title = string(fields[.title])
            let message = string(fields[.message])
            let names = strings(fields[.sources]) ?? []
            if let found = Announcement.problem(title: title, message: message, sources: names, known: known) {
                let field = String(found.prefix { $0 != ":" })
                let key = Announcement.Key(rawValue: field) ?? .title
                problem(fields[key]?.value ?? item, fields.path(key), String(found.dropFirst(field.count + 2)))
            }
            let state: Announcement.State? = choice(fields[.state], "a state")
            let atMs = timestamp(fields[.at])
            guard problems.count == before, let title, let message, let state, let atMs else { continue }
            announcements.append(
                Announcement(
                    id: "config-\(index + 1)", title: title, sources: names, updates: [Announcement.Update(atMs: atMs, state: state, message: message)]))
        }
        return announcements
    }
}
