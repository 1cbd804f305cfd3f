/// What a vendor's own status page says, read from one of the machine-readable formats vendors
/// publish (see `VendorPage.parse`): its components and how they are, its open incidents and its
/// scheduled maintenance. Every text in here came from outside: it is printable, bounded
/// (`VendorPage.maxText`) and escaped wherever it is shown.
package struct VendorPage: Sendable, Equatable {
    /// How a component, or the page as a whole, is: Statuspage's words, which customers know.
    package enum Level: Int, Sendable, Comparable, CaseIterable {
        case operational, maintenance, degraded, partialOutage, majorOutage
        /// A status word the reader does not know: never taken for operational.
        case unknown

        package static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }

        /// Statuspage's component status (`partial_outage`), as `/api/v2` publishes it.
        package var statuspage: String {
            switch self {
            case .operational: "operational"
            case .maintenance: "under_maintenance"
            case .degraded: "degraded_performance"
            case .partialOutage: "partial_outage"
            case .majorOutage, .unknown: "major_outage"
            }
        }

        /// "Partial outage", as a page shows it.
        package var words: String {
            switch self {
            case .operational: "Operational"
            case .maintenance: "Under maintenance"
            case .degraded: "Degraded performance"
            case .partialOutage: "Partial outage"
            case .majorOutage: "Major outage"
            case .unknown: "Unknown"
            }
        }

        /// Whether the vendor admits a problem (maintenance is announced work, not a problem).
        package var isProblem: Bool { self >= .degraded && self != .unknown }

        /// Every format's word for a status, read case- and separator-blind
        /// (`partial_outage`, `PARTIALOUTAGE`, `downtime`…); `.unknown` for anything else.
        package init(word: String) {
            let key = String(word.lowercased().unicodeScalars.filter { $0 != "_" && $0 != "-" && $0 != " " })
            self =
                switch key {
                case "operational", "none", "up", "resolved", "ok": .operational
                case "undermaintenance", "maintenance", "inprogress", "maintenanceinprogress": .maintenance
                case "degradedperformance", "degraded", "minor", "minoroutage", "hasissues": .degraded
                case "partialoutage", "major": .partialOutage
                case "majoroutage", "critical", "fulloutage", "downtime", "down": .majorOutage
                default: .unknown
                }
        }
    }

    package struct Component: Sendable, Equatable {
        package var id: String
        package var name: String
        package var level: Level
        /// A group of components (Statuspage's `group: true`): matched by name, not shown alone.
        package var isGroup = false
        /// The group it belongs to, by id, if any.
        package var groupID: String?

        package init(id: String, name: String, level: Level, isGroup: Bool = false, groupID: String? = nil) {
            self.id = id
            self.name = name
            self.level = level
            self.isGroup = isGroup
            self.groupID = groupID
        }
    }

    package struct Incident: Sendable, Equatable {
        package var id: String
        package var name: String
        /// `investigating`, `identified`, `monitoring`, `resolved`… as the vendor says it.
        package var status: String
        /// How bad the vendor says it is: none/minor → degraded, major → partial, critical → major.
        package var impact: Level
        /// The latest update's words, if any.
        package var latestUpdate: String?
        package var shortlink: String?
        package var startedAtMs: Int64?
        package var updatedAtMs: Int64?
        /// The components it names, by id and by name (formats name one or the other).
        package var components: [String] = []
        /// Scheduled maintenance rather than an incident.
        package var isMaintenance = false
        /// Maintenance: when it is planned to end.
        package var endsAtMs: Int64?

        package init(
            id: String, name: String, status: String, impact: Level, latestUpdate: String? = nil, shortlink: String? = nil,
            startedAtMs: Int64? = nil, updatedAtMs: Int64? = nil, components: [String] = [], isMaintenance: Bool = false, endsAtMs: Int64? = nil
        ) {
            self.id = id
            self.name = name
            self.status = status
            self.impact = impact
            self.latestUpdate = latestUpdate
            self.shortlink = shortlink
            self.startedAtMs = startedAtMs
            self.updatedAtMs = updatedAtMs
            self.components = components
            self.isMaintenance = isMaintenance
            self.endsAtMs = endsAtMs
        }

        /// Whether it is still going on: not resolved, not completed.
        package var isOpen: Bool {
            !["resolved", "postmortem", "completed", "cancelled", "canceled"].contains(status.lowercased())
        }

        /// Maintenance under way now (not merely scheduled).
        package var isMaintenanceInProgress: Bool {
            isMaintenance && ["in_progress", "inprogress", "verifying", "ongoing"].contains(status.lowercased())
        }
    }

    package enum Format: String, Sendable, CaseIterable {
        /// Atlassian Statuspage's `/api/v2/summary.json`; incident.io and Lookout publish it too.
        case statuspage
        /// Instatus's `/summary.json`.
        case instatus
        /// Better Stack's `/index.json` (JSON:API).
        case betterstack
        /// An Atom or RSS incident history (`/history.atom`, `/history.rss`).
        case feed
        /// incident.io's widget API (`/api/v1/summary`): ongoing incidents, maintenance in
        /// progress and scheduled, each with the components it affects.
        case incidentIOWidget = "incidentio_widget"

        /// Whether the page lists every component with its status; the others name only the
        /// components an incident or maintenance affects, so one no open incident names works.
        package var listsEveryComponent: Bool { self == .statuspage || self == .betterstack }
    }

    package var format: Format
    /// The page's own name ("GitHub"), if it gives one.
    package var name: String?
    /// The page as a whole.
    package var level: Level
    package var components: [Component] = []
    /// Open incidents and scheduled maintenance, newest first (a feed's closed ones are dropped).
    package var incidents: [Incident] = []

    package init(format: Format, name: String? = nil, level: Level, components: [Component] = [], incidents: [Incident] = []) {
        self.format = format
        self.name = name
        self.level = level
        self.components = components
        self.incidents = incidents
    }

    /// Texts from a vendor are cut to this many characters.
    package static let maxText = 500
    /// At most this many components and incidents are kept from one page.
    package static let maxItems = 500
}
