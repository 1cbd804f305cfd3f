import Foundation
import ResilientHTTP

/// Reading a vendor's page: Statuspage v2 (`/api/v2/summary.json`, also what incident.io and
/// Lookout publish), Instatus (`/summary.json`), Better Stack (`/index.json`) and an Atom or RSS
/// incident history. Every value is checked for its type; a missing list is empty; an unknown
/// status word is `.unknown`, never operational; texts are made printable and cut.
extension VendorPage {
    package struct Problem: Error, Sendable, Equatable {
        package var message: String
    }

    /// More JSON objects than this are not parsed: a hostile page's `[{},{},…]` would otherwise
    /// cost gigabytes once parsed.
    static let maxObjects = 20_000

    /// The page in `bytes`, in `format` or, when nil, the format the document has.
    package static func parse(_ bytes: [UInt8], as format: Format? = nil, nowMs: Int64 = Timestamp.nowMs()) -> Result<VendorPage, Problem> {
        guard let first = bytes.first(where: { !($0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D || $0 == 0xEF || $0 == 0xBB || $0 == 0xBF) })
        else { return .failure(Problem(message: "the page is empty")) }
        if format == .feed || (format == nil && first == UInt8(ascii: "<")) { return parseFeed(bytes, nowMs: nowMs) }
        guard first == UInt8(ascii: "{") else {
            return .failure(
                Problem(message: "the page is neither JSON nor a feed (it starts with \(printable(String(decoding: bytes.prefix(16), as: UTF8.self))))"))
        }
        // Counted before anything is built: each object or list becomes a Foundation container
        // of a few hundred bytes, and 60,000 components (3.5 MB) held 268 MB, a 4 MB page of
        // `[]` 170 MB. Braces inside strings count too: the bound only errs on the safe side.
        guard bytes.reduce(0, { $0 + ($1 == UInt8(ascii: "{") || $1 == UInt8(ascii: "[") ? 1 : 0) }) <= maxObjects else {
            return .failure(
                Problem(message: "the page has more than \(maxObjects) JSON objects and lists; it is not read (a status page's summary has hundreds)"))
        }
        guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any] else {
            return .failure(Problem(message: "the page is not a JSON object"))
        }
        switch format ?? detect(object) {
        case .statuspage?: return statuspage(object)
        case .instatus?: return instatus(object)
        case .betterstack?: return betterstack(object)
        case .incidentIOWidget?: return incidentIOWidget(object)
        case .feed?, nil:
            return .failure(Problem(message: "the page is JSON in no format Lookout reads (Statuspage v2, Instatus, Better Stack, incident.io's widget API)"))
        }
    }

    static func detect(_ object: [String: Any]) -> Format? {
        if let data = object["data"] as? [String: Any], data["attributes"] is [String: Any] { return .betterstack }
        // Statuspage has `scheduled_maintenances` too; only the widget has these two.
        if object["ongoing_incidents"] is [Any] || object["in_progress_maintenances"] is [Any] { return .incidentIOWidget }
        if object["activeIncidents"] != nil || object["activeMaintenances"] != nil { return .instatus }
        if let page = object["page"] as? [String: Any], page["status"] is String { return .instatus }
        if (object["status"] as? [String: Any])?["type"] is String { return .instatus }
        if (object["status"] as? [String: Any])?["indicator"] != nil || object["components"] is [Any] || object["incidents"] is [Any] {
            return .statuspage
        }
        return nil
    }

    // MARK: Statuspage v2

    static func statuspage(_ object: [String: Any]) -> Result<VendorPage, Problem> {
        let page = object["page"] as? [String: Any]
        let status = object["status"] as? [String: Any]
        guard status != nil || object["components"] is [Any] else {
            return .failure(Problem(message: "the page has neither `status` nor `components`: not Statuspage v2"))
        }
        var components: [Component] = []
        for item in list(object["components"]) {
            guard let id = text(item["id"]), let name = text(item["name"]) else { continue }
            components.append(
                Component(
                    id: id, name: name, level: Level(word: text(item["status"]) ?? ""), isGroup: item["group"] as? Bool ?? false,
                    groupID: text(item["group_id"])))
        }
        var incidents = list(object["incidents"]).compactMap { statuspageIncident($0, maintenance: false) }
        incidents += list(object["scheduled_maintenances"]).compactMap { statuspageIncident($0, maintenance: true) }
        var level = status.flatMap { text($0["indicator"]) }.map(Level.init(word:)) ?? .unknown
        if status == nil { level = components.filter { !$0.isGroup }.map(\.level).max() ?? .operational }
        return .success(VendorPage(format: .statuspage, name: page.flatMap { text($0["name"]) }, level: level, components: components, incidents: incidents))
    }

    static func statuspageIncident(_ item: [String: Any], maintenance: Bool) -> Incident? {
        guard let id = text(item["id"]), let name = text(item["name"]) else { return nil }
        let updates = list(item["incident_updates"])
        var named = list(item["components"]).flatMap { [text($0["id"]), text($0["name"])].compactMap { $0 } }
        for update in updates {
            for affected in list(update["affected_components"]) { named += [text(affected["code"]), text(affected["name"])].compactMap { $0 } }
        }
        let impact = text(item["impact"]) ?? "none"
        return Incident(
            id: id, name: name, status: text(item["status"]) ?? "investigating",
            impact: maintenance ? .maintenance : impact == "none" ? .degraded : Level(word: impact),
            latestUpdate: updates.first.flatMap { text($0["body"]).map(plain) }, shortlink: link(item["shortlink"]),
            startedAtMs: time(item["started_at"]) ?? time(item["scheduled_for"]) ?? time(item["created_at"]),
            updatedAtMs: time(item["updated_at"]), components: Array(Set(named)).sorted(), isMaintenance: maintenance,
            endsAtMs: time(item["scheduled_until"]))
    }

    // MARK: Instatus

    static func instatus(_ object: [String: Any]) -> Result<VendorPage, Problem> {
        let page = object["page"] as? [String: Any]
        guard
            page?["status"] is String || (object["status"] as? [String: Any])?["type"] is String || object["activeIncidents"] != nil
                || object["activeMaintenances"] != nil
        else {
            return .failure(Problem(message: "the page has none of Instatus's fields (page.status, status.type, activeIncidents): not Instatus"))
        }
        // Two shapes in use: `page.status` (UP, HASISSUES, UNDERMAINTENANCE) or `status.type`.
        let word = page.flatMap { text($0["status"]) } ?? (object["status"] as? [String: Any]).flatMap { text($0["type"]) }
        var incidents: [Incident] = []
        for item in list(object["activeIncidents"]) {
            guard let name = text(item["name"]) else { continue }
            incidents.append(
                Incident(
                    id: text(item["id"]) ?? name, name: name, status: (text(item["status"]) ?? "investigating").lowercased(),
                    impact: Level(word: text(item["impact"]) ?? "degraded"), shortlink: link(item["url"]),
                    startedAtMs: time(item["started"]), updatedAtMs: time(item["updatedAt"])))
        }
        for item in list(object["activeMaintenances"]) {
            guard let name = text(item["name"]) else { continue }
            let start = time(item["start"])
            let minutes = (item["duration"] as? Int) ?? text(item["duration"]).flatMap { Int($0) }
            let status = (text(item["status"]) ?? "NOTSTARTEDYET").uppercased()
            incidents.append(
                Incident(
                    id: text(item["id"]) ?? name, name: name,
                    status: status == "INPROGRESS" ? "in_progress" : status == "COMPLETED" ? "completed" : "scheduled", impact: .maintenance,
                    shortlink: link(item["url"]), startedAtMs: start, isMaintenance: true,
                    endsAtMs: start.flatMap { start in minutes.map { start + Int64(clamping: max(0, min($0, 525_600))) * 60_000 } }))
        }
        var level = word.map(Level.init(word:)) ?? .unknown
        if level == .unknown, word == nil { level = incidents.contains { !$0.isMaintenance } ? .degraded : .operational }
        return .success(VendorPage(format: .instatus, name: page.flatMap { text($0["name"]) }, level: level, incidents: incidents))
    }

    // MARK: Better Stack

    static func betterstack(_ object: [String: Any]) -> Result<VendorPage, Problem> {
        guard let data = object["data"] as? [String: Any], let attributes = data["attributes"] as? [String: Any] else {
            return .failure(Problem(message: "the page has no `data.attributes`: not Better Stack's index.json"))
        }
        var components: [Component] = []
        var incidents: [Incident] = []
        var resourceNames: [String: String] = [:]
        for item in list(object["included"]) {
            guard let attributes = item["attributes"] as? [String: Any] else { continue }
            let id = text(item["id"]) ?? ""
            switch text(item["type"]) {
            case "status_page_resource":
                guard let name = text(attributes["public_name"]) else { continue }
                resourceNames[id] = name
                components.append(Component(id: id, name: name, level: Level(word: text(attributes["status"]) ?? "")))
            case "status_report":
                guard let title = text(attributes["title"]) else { continue }
                let state = text(attributes["aggregate_state"]) ?? ""
                let maintenance = text(attributes["report_type"]) == "maintenance"
                let ends = time(attributes["ends_at"])
                let affected = list(attributes["affected_resources"]).compactMap { text($0["status_page_resource_id"]) }
                incidents.append(
                    Incident(
                        id: id, name: title, status: state == "resolved" || ends != nil ? "resolved" : maintenance ? "in_progress" : "investigating",
                        impact: maintenance ? .maintenance : Level(word: state), startedAtMs: time(attributes["starts_at"]),
                        components: affected, isMaintenance: maintenance, endsAtMs: ends))
            default: continue
            }
        }
        // Affected resources are named by id: add their names so `components:` may name either.
        for index in incidents.indices {
            incidents[index].components += incidents[index].components.compactMap { resourceNames[$0] }
        }
        return .success(
            VendorPage(
                format: .betterstack, name: text(attributes["company_name"]), level: Level(word: text(attributes["aggregate_state"]) ?? ""),
                components: components, incidents: incidents.filter(\.isOpen)))
    }

    // MARK: incident.io's widget API

    static func incidentIOWidget(_ object: [String: Any]) -> Result<VendorPage, Problem> {
        guard object["ongoing_incidents"] is [Any] || object["in_progress_maintenances"] is [Any] || object["scheduled_maintenances"] is [Any] else {
            return .failure(Problem(message: "the page has no `ongoing_incidents`: not incident.io's widget API"))
        }
        var components: [String: Component] = [:]
        /// The components an event affects, by id and name; those with a status of their own are
        /// listed as components too.
        func affected(_ item: [String: Any], level: Level) -> [String] {
            var named: [String] = []
            for component in list(item["affected_components"]) {
                let id = text(component["id"])
                let name = text(component["name"])
                named += [id, name].compactMap { $0 }
                guard let key = id ?? name else { continue }
                let stated = text(component["current_status"]).map(Level.init(word:))
                let now = stated.flatMap { $0 == .unknown ? nil : $0 } ?? level
                components[key] = Component(id: key, name: name ?? key, level: max(components[key]?.level ?? .operational, now))
            }
            return Array(Set(named)).sorted()
        }
        var incidents: [Incident] = []
        for item in list(object["ongoing_incidents"]) {
            guard let name = text(item["name"]) else { continue }
            // An ongoing incident is a problem, whatever word its impact is in.
            let impact = Level(word: text(item["current_worst_impact"]) ?? "")
            let level = impact.isProblem ? impact : .degraded
            incidents.append(
                Incident(
                    id: text(item["id"]) ?? name, name: name, status: text(item["status"]) ?? "investigating", impact: level,
                    latestUpdate: text(item["last_update_message"]).map(plain), shortlink: link(item["url"]),
                    updatedAtMs: time(item["last_update_at"]), components: affected(item, level: level)))
        }
        for (key, inProgress) in [("in_progress_maintenances", true), ("scheduled_maintenances", false)] {
            for item in list(object[key]) {
                guard let name = text(item["name"]) else { continue }
                incidents.append(
                    Incident(
                        id: text(item["id"]) ?? name, name: name, status: inProgress ? "in_progress" : "scheduled", impact: .maintenance,
                        latestUpdate: text(item["last_update_message"]).map(plain), shortlink: link(item["url"]),
                        startedAtMs: time(item["started_at"]) ?? time(item["starts_at"]), updatedAtMs: time(item["last_update_at"]),
                        components: affected(item, level: inProgress ? .maintenance : .operational), isMaintenance: true,
                        endsAtMs: time(item["scheduled_end_at"]) ?? time(item["ends_at"])))
            }
        }
        let open = incidents.filter { !$0.isMaintenance }.map(\.impact).max()
        let level = open ?? (incidents.contains { $0.isMaintenanceInProgress } ? .maintenance : .operational)
        return .success(
            VendorPage(
                format: .incidentIOWidget, name: text(object["page_title"]), level: level,
                components: components.values.sorted { $0.name < $1.name }.prefix(maxItems).map { $0 }, incidents: incidents))
    }

    // MARK: Values from outside

    /// A list of objects; anything else (missing, a string, `null`) is empty. Cut to `maxItems`.
    static func list(_ value: Any?) -> [[String: Any]] {
        ((value as? [Any]) ?? []).prefix(maxItems).compactMap { $0 as? [String: Any] }
    }

    /// A non-empty string (a number is taken as its digits: some pages give ids as numbers),
    /// printable and cut to `maxText`.
    static func text(_ value: Any?) -> String? {
        let raw: String
        switch value {
        case let string as String: raw = string
        case let number as Int: raw = String(number)
        default: return nil
        }
        let cleaned = printable(raw).trimmingCharacters(in: .whitespaces)
        return cleaned.isEmpty ? nil : cleaned
    }

    static func printable(_ raw: String) -> String {
        let escaped = PrintableText.escape(raw)
        return escaped.count <= maxText ? escaped : String(escaped.prefix(maxText - 1)) + "…"
    }

    /// An http(s) link, or nil: a vendor's `javascript:` is not a link.
    static func link(_ value: Any?) -> String? {
        guard let url = text(value), url.hasPrefix("https://") || url.hasPrefix("http://"), !url.contains(" ") else { return nil }
        return url
    }

    /// An RFC 3339 time, or an RFC 822 one (RSS, Instatus's `Date.toString()` is neither: nil).
    static func time(_ value: Any?) -> Int64? {
        guard let string = value as? String else { return nil }
        return Timestamp.parseRFC3339(string) ?? Timestamp.parseRFC822(string)
    }

    /// HTML made plain: tags dropped (a `<br>` or `<p>` becomes a space), the common entities
    /// decoded, runs of spaces folded. The result is text, escaped again wherever it is shown.
    static func plain(_ html: String) -> String {
        var out = ""
        var inTag = false
        for character in html {
            if inTag {
                if character == ">" {
                    inTag = false
                    out.append(" ")
                }
            } else if character == "<" {
                inTag = true
            } else {
                out.append(character)
            }
        }
        out = XMLSlice.decodeEntities(out)
        return printable(out.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" || $0 == "\r" }).joined(separator: " "))
    }
}
