import Foundation

/// A note to the status page's readers about an incident or planned work: what is affected,
/// and a timeline of updates, the newest of which says where things stand.
package struct Announcement: Sendable, Equatable {
    /// Atlassian Statuspage's incident states, which readers know.
    package enum State: String, Sendable, CaseIterable {
        case investigating, identified, monitoring, resolved
    }

    /// One step of the timeline.
    package struct Update: Sendable, Equatable {
        package var atMs: Int64
        package var state: State
        package var message: String

        package init(atMs: Int64, state: State, message: String) {
            self.atMs = atMs
            self.state = state
            self.message = message
        }
    }

    package static let maxTitle = 200
    package static let maxMessage = 5_000
    package static let maxSources = 100

    /// `config-N` for the config's, the row id for the API's.
    package var id: String
    package var title: String
    /// Affected sources (may be empty: the whole service).
    package var sources: [String]
    /// Oldest first; never empty.
    package var updates: [Update]

    package init(id: String, title: String, sources: [String], updates: [Update]) {
        self.id = id
        self.title = title
        self.sources = sources
        self.updates = updates
    }

    package var state: State { updates.last?.state ?? .resolved }
    package var isOpen: Bool { state != .resolved }
    package var postedAtMs: Int64 { updates.first?.atMs ?? 0 }
    package var updatedAtMs: Int64 { updates.last?.atMs ?? 0 }

    /// What is wrong with a title, message and sources, naming the field; nil when fine.
    package static func problem(title: String?, message: String?, sources: [String], known: Set<String>) -> String? {
        if let title {
            if title.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty { return "title: must not be empty" }
            if title.count > maxTitle { return "title: at most \(maxTitle) characters (got \(title.count))" }
            if let problem = DisplayText.problem(title, multiline: false) { return "title: \(problem)" }
        }
        if let message {
            if message.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty { return "message: must not be empty" }
            if message.count > maxMessage { return "message: at most \(maxMessage) characters (got \(message.count))" }
            if let problem = DisplayText.problem(message, multiline: true) { return "message: \(problem)" }
        }
        if sources.count > maxSources { return "sources: at most \(maxSources)" }
        if let unknown = sources.first(where: { !known.contains($0) }) { return "sources: no source is named \"\(unknown)\"" }
        return nil
    }
}
