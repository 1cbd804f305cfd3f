import Foundation
import LookoutCore
import LookoutStore
import MicroHTTPServer

/// `/api/v1/maintenance`: the windows in force or to come (the config's and those added here),
/// and windows — one-off or recurring — added and ended through the admin token.
struct MaintenanceRoutes: Sendable {
    let context: LookoutContext
    var monitor: Monitor { context.monitor }

    func install(into router: inout Router) {
        router.get("/api/v1/maintenance") { _ in list() }
        router.post("/api/v1/maintenance") { request in add(request) }
        router.add("DELETE", "/api/v1/maintenance/:id") { request in end(request) }
    }

    func list() -> HTTPResponse {
        let now = Timestamp.nowMs()
        var json = JSONWriter()
        json.object { json in
            json.field("windows") { json in
                json.array { json in
                    for window in monitor.maintenance.windows where window.activeUntilMs > now {
                        if case .once(_, let end) = window.schedule, end <= now { continue }
                        json.object { json in
                            json.field("id") { $0.int(window.id) }
                            json.field("name") { $0.string(window.name) }
                            json.field("sources") { json in json.array { json in for name in window.sources { json.string(name) } } }
                            json.field("matchers") { json in
                                json.object { json in for (k, v) in window.matchers.sorted(by: { $0.key < $1.key }) { json.field(k) { $0.string(v) } } }
                            }
                            switch window.schedule {
                            case .once(let start, let end):
                                json.field("starts_at") { $0.string(Timestamp.rfc3339(start)) }
                                json.field("ends_at") { $0.string(Timestamp.rfc3339(end)) }
                            case .recurring(let weekdays, let minute, let duration, let zone):
                                json.field("recurring") { json in
                                    json.object { json in
                                        json.field("weekdays") { json in
                                            json.array { json in for day in weekdays.sorted() { json.string(MaintenanceWindow.weekdayNames[day - 1]) } }
                                        }
                                        json.field("at") { $0.string(String(format: "%02d:%02d", minute / 60, minute % 60)) }
                                        json.field("duration_seconds") { $0.int(duration / 1000) }
                                        json.field("time_zone") { $0.string(zone) }
                                    }
                                }
                            }
                            json.field("active") { $0.bool(window.occurrence(atMs: now) != nil) }
                            json.field("note") { $0.string(window.note) }
                        }
                    }
                }
            }
        }
        return .json(json.bytes)
    }

    /// `POST /api/v1/maintenance` `{"sources": [...], "matchers": {...}, "starts_at": …, "ends_at": …,
    /// "recurring": {…}, "note": "…"}`.
    func add(_ request: HTTPRequest) -> HTTPResponse {
        if let refusal = AdminAuth.refusal(request, token: monitor.config.adminToken) { return refusal }
        let database = context.database
        guard let body = try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any] else {
            return APIRoutes.error("the body must be a JSON object", status: 400)
        }
        let unknown = APIRoutes.unknownField(in: body, allowed: ["sources", "matchers", "starts_at", "ends_at", "recurring", "note"]) { field in
            MaintenanceRoutes.recurringFields.contains(field)
                ? "\(field): a recurring window's fields go inside recurring: {\(MaintenanceRoutes.recurringList)}" : nil
        }
        if let unknown { return unknown }
        let known = Set(monitor.config.sources.map(\.name))
        guard body["sources"] == nil || body["sources"] is [String] else { return APIRoutes.error("sources must be a list of source names", status: 400) }
        guard body["matchers"] == nil || body["matchers"] is [String: String] else {
            return APIRoutes.error("matchers must be an object of source label names to values", status: 400)
        }
        let sources = body["sources"] as? [String] ?? []
        let matchers = body["matchers"] as? [String: String] ?? [:]
        if let unknown = sources.first(where: { !known.contains($0) }) { return APIRoutes.error("sources: no source is named \"\(unknown)\"", status: 400) }
        guard !sources.isEmpty || !matchers.isEmpty else {
            return APIRoutes.error("name the sources (sources or matchers): a window over every source must be written in the config", status: 400)
        }
        let now = Timestamp.nowMs()
        var starts = now
        if let value = body["starts_at"] {
            guard let text = value as? String, let parsed = APIRoutes.time(text) else {
                return APIRoutes.error("starts_at must be an RFC 3339 time", status: 400)
            }
            starts = max(now, parsed)
        }
        var recurring: MaintenanceWindow.Schedule?
        if let value = body["recurring"] {
            switch MaintenanceRoutes.recurring(value) {
            case .success(let schedule): recurring = schedule
            case .failure(let problem): return APIRoutes.error(problem.message, status: 400)
            }
        }
        var ends = MaintenanceRoutes.noEnd
        if let value = body["ends_at"] {
            guard let text = value as? String, let parsed = APIRoutes.time(text) else {
                return APIRoutes.error("ends_at must be an RFC 3339 time", status: 400)
            }
            ends = parsed
        } else if recurring == nil {
            return APIRoutes.error("ends_at must be an RFC 3339 time (or give recurring: {\(MaintenanceRoutes.recurringList)})", status: 400)
        }
        guard ends > starts else { return APIRoutes.error("ends_at must be after starts_at (and in the future)", status: 400) }
        guard body["note"] == nil || body["note"] is String else { return APIRoutes.error("note must be a string", status: 400) }
        if let note = body["note"] as? String, let problem = DisplayText.problem(note, multiline: true) {
            return APIRoutes.error("note: \(problem)", status: 400)
        }
        let store = MaintenanceStore(database: database)
        do {
            let id = try store.add(
                sources: sources, matchers: matchers, startsAtMs: starts, endsAtMs: ends, recurring: recurring, note: body["note"] as? String ?? "",
                createdBy: request.remoteAddress)
            try monitor.maintenance.reload { try store.current(nowMs: now) }
            AdminAuth.audit(
                request, context, "maintenance window added",
                [
                    "id": "\(id)", "sources": sources.joined(separator: ","), "from": Timestamp.rfc3339(starts), "until": Timestamp.rfc3339(ends),
                ])
            return .json(
                JSONText.ordered([("id", .int(id)), ("starts_at", .string(Timestamp.rfc3339(starts))), ("ends_at", .string(Timestamp.rfc3339(ends)))]).rendered,
                status: 201)
        } catch {
            return APIRoutes.error("cannot store the window: \(error)", status: 500)
        }
    }

    /// A recurring window without `ends_at` recurs until it is ended (the year 9999).
    static let noEnd: Int64 = 253_402_300_799_000

    struct Problem: Error {
        var message: String
    }

    static let recurringFields = ["weekdays", "at", "duration", "time_zone"]
    static let recurringList = recurringFields.joined(separator: ", ")

    /// `{"weekdays": ["sun"], "at": "02:30", "duration": "1h", "time_zone": "Europe/Berlin"}`.
    static func recurring(_ value: Any) -> Result<MaintenanceWindow.Schedule, Problem> {
        guard let fields = value as? [String: Any] else {
            return .failure(Problem(message: "recurring must be an object: {\(recurringList)}"))
        }
        if let unknown = fields.keys.sorted().first(where: { !recurringFields.contains($0) }) {
            return .failure(Problem(message: "recurring.\(unknown): unknown field (use \(recurringList))"))
        }
        var weekdays = Set(1...7)
        if let value = fields["weekdays"] {
            guard let names = value as? [String], !names.isEmpty else {
                return .failure(Problem(message: "recurring.weekdays must be a list such as [\"sat\", \"sun\"]"))
            }
            weekdays = []
            for name in names {
                guard let day = MaintenanceWindow.weekday(named: name) else {
                    return .failure(Problem(message: "recurring.weekdays: \"\(name)\" is not a weekday (use mon, tue, wed, thu, fri, sat, sun)"))
                }
                weekdays.insert(day)
            }
        }
        guard let at = fields["at"] as? String, let minute = MaintenanceWindow.minuteOfDay(at) else {
            return .failure(Problem(message: "recurring.at must be a time of day, HH:MM (e.g. 02:30)"))
        }
        guard let text = fields["duration"] as? String, let duration = try? ConfigValues.parseDuration(text), duration.totalMilliseconds > 0,
            duration <= .seconds(7 * 86400)
        else {
            return .failure(Problem(message: "recurring.duration must be a duration from 1ms up to 7 days (e.g. 30m, 2h)"))
        }
        let zone = fields["time_zone"] as? String ?? "UTC"
        guard TimeZone(identifier: zone) != nil else {
            return .failure(Problem(message: "recurring.time_zone: \"\(zone)\" is not an IANA time zone (e.g. Europe/Berlin, UTC)"))
        }
        return .success(.recurring(weekdays: weekdays, minuteOfDay: minute, durationMs: duration.totalMilliseconds, timeZone: zone))
    }

    /// `DELETE /api/v1/maintenance/ID`: ends a window added through the API now.
    func end(_ request: HTTPRequest) -> HTTPResponse {
        if let refusal = AdminAuth.refusal(request, token: monitor.config.adminToken) { return refusal }
        let database = context.database
        let text = request.pathParameters["id"] ?? ""
        guard let id = Int64(text), id > 0 else { return APIRoutes.error("id must be a window's number, not \"\(text)\"", status: 400) }
        let store = MaintenanceStore(database: database)
        let now = Timestamp.nowMs()
        do {
            guard try store.end(id, nowMs: now) else { return APIRoutes.error("no maintenance window \(id) is in force or to come", status: 404) }
            try monitor.maintenance.reload { try store.current(nowMs: now) }
            AdminAuth.audit(request, context, "maintenance window ended", ["id": "\(id)"])
            return .json(JSONText.ordered([("id", .int(id)), ("status", .string("ended"))]).rendered)
        } catch {
            return APIRoutes.error("cannot end the window: \(error)", status: 500)
        }
    }
}
