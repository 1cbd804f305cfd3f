import LookoutCore
import MicroHTTPServer

/// Shields-style SVG badges for READMEs and wikis: `/badge/NAME/status.svg`,
/// `/badge/NAME/uptime/24h.svg` (also `7d`, `30d`) and `/badge/NAME/response-time.svg`.
/// The same for a group as `/badge/group:NAME/…` (source names cannot hold a colon): its
/// roll-up state, the uptime of all its sources together, the median of their response times.
/// Each reads one snapshot; an unknown source, group or window is a 404 badge.
package struct Badges: Sendable {
    let context: LookoutContext

    package init(context: LookoutContext) {
        self.context = context
    }

    static let colors = (ok: "#1a7f37", warn: "#9a6700", down: "#cf222e", neutral: "#59636e", maintenance: "#6639ba")
    static let windows: [String: Int64] = ["24h": HealthWindow.day, "7d": 7 * HealthWindow.day, "30d": HealthWindow.thirtyDays]

    func install(into router: inout Router) {
        router.get("/badge/:name/:kind") { request in badge(request.pathParameters["name"] ?? "", kind: request.pathParameters["kind"] ?? "") }
        router.get("/badge/:name/uptime/:window") { request in
            badge(request.pathParameters["name"] ?? "", kind: "uptime/" + (request.pathParameters["window"] ?? ""))
        }
    }

    /// A `/badge/…` path no route took: a group whose name holds `/` (the page links it
    /// percent-encoded, and the path arrives decoded), read by its kind at the end; anything
    /// else is the documented 404 badge, never a text answer echoing the path.
    package func unrouted(_ path: String) -> HTTPResponse {
        let rest = path.dropFirst("/badge/".count)
        for kind in ["status.svg", "response-time.svg"] + Badges.windows.keys.sorted().map({ "uptime/\($0).svg" }) {
            let suffix = "/" + kind
            if rest.hasPrefix("group:"), rest.hasSuffix(suffix), rest.count > suffix.count + 6 {
                return groupBadge(String(rest.dropFirst(6).dropLast(suffix.count)), kind: kind)
            }
        }
        return Badges.svg(label: "lookout", value: "no such badge", color: Badges.colors.neutral, status: 404)
    }

    package func badge(_ name: String, kind: String) -> HTTPResponse {
        if name.hasPrefix("group:") { return groupBadge(String(name.dropFirst(6)), kind: kind) }
        let snapshot = context.monitor.snapshot(names: [name])
        // A source kept from the public page (`public: false`) has no badge either.
        guard let record = snapshot.records.first, record.name == name, record.source.isPublic else {
            return Badges.svg(label: "lookout", value: "no such source", color: Badges.colors.neutral, status: 404)
        }
        switch kind {
        case "status.svg":
            if snapshot.maintenance[name] != nil { return Badges.svg(label: name, value: "maintenance", color: Badges.colors.maintenance) }
            guard let last = record.last else { return Badges.svg(label: name, value: "pending", color: Badges.colors.neutral) }
            return last.ok
                ? Badges.svg(label: name, value: "up", color: Badges.colors.ok)
                : Badges.svg(label: name, value: "down", color: Badges.colors.down)
        case "response-time.svg":
            guard let p50 = record.recentDurations.quantile(0.5) else {
                return Badges.svg(label: "response time", value: "no data", color: Badges.colors.neutral)
            }
            let ms = Int((p50 * 1000).rounded())
            return Badges.svg(
                label: "response time", value: "\(ms) ms", color: ms < 300 ? Badges.colors.ok : ms < 1000 ? Badges.colors.warn : Badges.colors.down)
        default:
            guard kind.hasPrefix("uptime/"), kind.hasSuffix(".svg"),
                let windowMs = Badges.windows[String(kind.dropFirst(7).dropLast(4))]
            else { return Badges.svg(label: "lookout", value: "no such badge", color: Badges.colors.neutral, status: 404) }
            return uptime(label: "uptime " + kind.dropFirst(7).dropLast(4), snapshot.counts(0, windowMs: windowMs).map { [$0] } ?? [])
        }
    }

    func groupBadge(_ group: String, kind: String) -> HTTPResponse {
        let config = context.monitor.config
        let names = config.sources.filter { $0.isPublic && config.statusPage.group(of: $0) == group }.map(\.name)
        let snapshot = context.monitor.snapshot(names: names)
        let members = Array(snapshot.records.indices)
        guard !names.isEmpty, !members.isEmpty else { return Badges.svg(label: "lookout", value: "no such group", color: Badges.colors.neutral, status: 404) }
        switch kind {
        case "status.svg":
            let state = StatusPage.rollUp(members.map { snapshot.maintenance[snapshot.records[$0].name] != nil ? nil : snapshot.records[$0].last?.ok })
            let color = [("ok", Badges.colors.ok), ("degraded", Badges.colors.warn), ("down", Badges.colors.down)].first { $0.0 == state.0 }?.1
            return Badges.svg(label: group, value: state.1.lowercased(), color: color ?? Badges.colors.neutral)
        case "response-time.svg":
            let medians = members.compactMap { snapshot.records[$0].recentDurations.quantile(0.5) }
            guard let median = SourceRecord.RecentDurations.quantile(medians, 0.5) else {
                return Badges.svg(label: "response time", value: "no data", color: Badges.colors.neutral)
            }
            let ms = Int((median * 1000).rounded())
            return Badges.svg(
                label: "response time", value: "\(ms) ms", color: ms < 300 ? Badges.colors.ok : ms < 1000 ? Badges.colors.warn : Badges.colors.down)
        default:
            guard kind.hasPrefix("uptime/"), kind.hasSuffix(".svg"), let windowMs = Badges.windows[String(kind.dropFirst(7).dropLast(4))] else {
                return Badges.svg(label: "lookout", value: "no such badge", color: Badges.colors.neutral, status: 404)
            }
            return uptime(label: "uptime " + kind.dropFirst(7).dropLast(4), members.compactMap { snapshot.counts($0, windowMs: windowMs) })
        }
    }

    /// An uptime badge over the counts of one or more sources.
    func uptime(label: String, _ counts: [BucketCounts]) -> HTTPResponse {
        guard let ratio = HealthWindow.availability(counts.reduce(BucketCounts(), +)) else {
            return Badges.svg(label: label, value: "no data", color: Badges.colors.neutral)
        }
        let color = ratio >= 0.999 ? Badges.colors.ok : ratio >= 0.99 ? Badges.colors.warn : Badges.colors.down
        return Badges.svg(label: label, value: StatusPage.percent(ratio), color: color)
    }

    /// A flat two-part badge; widths from a per-character estimate (Verdana 11 px).
    static func svg(label: String, value: String, color: String, status: Int = 200) -> HTTPResponse {
        func width(_ text: String) -> Int { text.count * 7 + 10 }
        let left = width(label)
        let right = width(value)
        let total = left + right
        let label = HTML.escape(label)
        let value = HTML.escape(value)
        let svg = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(total)" height="20" role="img" aria-label="\(label): \(value)">\
            <title>\(label): \(value)</title>\
            <rect width="\(left)" height="20" fill="#555"/><rect x="\(left)" width="\(right)" height="20" fill="\(color)"/>\
            <g fill="#fff" text-anchor="middle" font-family="Verdana,DejaVu Sans,sans-serif" font-size="11">\
            <text x="\(left / 2)" y="14">\(label)</text><text x="\(left + right / 2)" y="14">\(value)</text></g></svg>
            """
        return HTTPResponse(
            status: status, headers: ["Content-Type": "image/svg+xml; charset=utf-8", "Cache-Control": "max-age=60, public"],
            body: .bytes(Array(svg.utf8)))
    }
}
