import Foundation
import LookoutCore
import LookoutStore
import MicroHTTPServer

/// `/api/v1/announcements`: notes for the status page's readers. Anyone may list them; posting,
/// updating and deleting take the admin token.
///
/// - `POST /api/v1/announcements` `{"title", "message", "state", "sources": [...]}` → 201 `{"id"}`
/// - `POST /api/v1/announcements/ID` `{"state", "message"}` adds an update (a timeline entry)
/// - `DELETE /api/v1/announcements/ID` removes one posted by mistake
struct AnnouncementRoutes: Sendable {
    let context: LookoutContext
    let page: StatusPage
    var monitor: Monitor { context.monitor }

    func install(into router: inout Router) {
        router.get("/api/v1/announcements") { _ in list() }
        router.post("/api/v1/announcements") { request in post(request) }
        router.post("/api/v1/announcements/:id") { request in update(request) }
        router.add("DELETE", "/api/v1/announcements/:id") { request in delete(request) }
    }

    func list() -> HTTPResponse {
        let now = Timestamp.nowMs()
        var all = monitor.config.announcements
        all += (try? AnnouncementStore(database: context.database).recent(sinceMs: now - 30 * HealthWindow.day)) ?? []
        var json = JSONWriter()
        json.object { json in
            json.field("announcements") { json in
                json.array { json in
                    for announcement in all.sorted(by: { $0.updatedAtMs > $1.updatedAtMs }) {
                        json.object { json in
                            json.field("id") { $0.string(announcement.id) }
                            json.field("title") { $0.string(announcement.title) }
                            json.field("state") { $0.string(announcement.state.rawValue) }
                            json.field("sources") { json in json.array { json in for name in announcement.sources { json.string(name) } } }
                            json.field("posted_at") { $0.string(Timestamp.rfc3339(announcement.postedAtMs)) }
                            json.field("updated_at") { $0.string(Timestamp.rfc3339(announcement.updatedAtMs)) }
                            json.field("updates") { json in
                                json.array { json in
                                    for update in announcement.updates {
                                        json.object { json in
                                            json.field("at") { $0.string(Timestamp.rfc3339(update.atMs)) }
                                            json.field("state") { $0.string(update.state.rawValue) }
                                            json.field("message") { $0.string(update.message) }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        return .json(json.bytes)
    }

    /// The checks both POSTs share: admin, a database, a JSON object body.
    private func body(_ request: HTTPRequest) -> Result<(LookoutDatabase, [String: Any]), Refusal> {
        if let refusal = AdminAuth.refusal(request, token: monitor.config.adminToken) { return .failure(Refusal(response: refusal)) }
        let database = context.database
        guard let body = try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any] else {
            return .failure(Refusal(response: APIRoutes.error("the body must be a JSON object", status: 400)))
        }
        return .success((database, body))
    }

    struct Refusal: Error {
        var response: HTTPResponse
    }

    /// The `state` and `message` of a new announcement or an update; a 400 naming the field.
    private func update(from body: [String: Any], known allowed: [String]) -> Result<Announcement.Update, Refusal> {
        if let refusal = APIRoutes.unknownField(in: body, allowed: allowed) { return .failure(Refusal(response: refusal)) }
        let states = Announcement.State.allCases.map(\.rawValue).joined(separator: ", ")
        guard let text = body["state"] as? String, let state = Announcement.State(rawValue: text) else {
            return .failure(Refusal(response: APIRoutes.error("state: must be one of \(states)", status: 400)))
        }
        guard let message = body["message"] as? String else {
            return .failure(Refusal(response: APIRoutes.error("message: must be a string", status: 400)))
        }
        if let problem = Announcement.problem(title: nil, message: message, sources: [], known: []) {
            return .failure(Refusal(response: APIRoutes.error(problem, status: 400)))
        }
        return .success(Announcement.Update(atMs: Timestamp.nowMs(), state: state, message: message))
    }

    func post(_ request: HTTPRequest) -> HTTPResponse {
        let (database, body): (LookoutDatabase, [String: Any])
        switch self.body(request) {
        case .success(let value): (database, body) = value
        case .failure(let refusal): return refusal.response
        }
        let first: Announcement.Update
        switch update(from: body, known: ["title", "message", "state", "sources"]) {
        case .success(let value): first = value
        case .failure(let refusal): return refusal.response
        }
        guard let title = body["title"] as? String else { return APIRoutes.error("title: must be a string", status: 400) }
        guard body["sources"] == nil || body["sources"] is [String] else { return APIRoutes.error("sources: must be a list of source names", status: 400) }
        let sources = body["sources"] as? [String] ?? []
        let known = Set(monitor.config.sources.map(\.name))
        if let problem = Announcement.problem(title: title, message: nil, sources: sources, known: known) { return APIRoutes.error(problem, status: 400) }
        do {
            let id = try AnnouncementStore(database: database).add(title: title, sources: sources, first: first, createdBy: request.remoteAddress)
            page.history.invalidate()
            AdminAuth.audit(request, context, "announcement added", ["id": "\(id)", "title": title, "state": first.state.rawValue])
            return .json(JSONText.ordered([("id", .string(String(id))), ("state", .string(first.state.rawValue))]).rendered, status: 201)
        } catch {
            return APIRoutes.error("cannot store the announcement: \(error)", status: 500)
        }
    }

    func update(_ request: HTTPRequest) -> HTTPResponse {
        let (database, body): (LookoutDatabase, [String: Any])
        switch self.body(request) {
        case .success(let value): (database, body) = value
        case .failure(let refusal): return refusal.response
        }
        guard let id = AnnouncementRoutes.id(request) else { return AnnouncementRoutes.badID(request) }
        switch update(from: body, known: ["state", "message"]) {
        case .success(let update):
            do {
                guard try AnnouncementStore(database: database).update(id, with: update) else {
                    return APIRoutes.error("no announcement \(id) (the config's announcements change in the config)", status: 404)
                }
                page.history.invalidate()
                AdminAuth.audit(request, context, "announcement updated", ["id": "\(id)", "state": update.state.rawValue])
                return .json(JSONText.ordered([("id", .string(String(id))), ("state", .string(update.state.rawValue))]).rendered)
            } catch {
                return APIRoutes.error("cannot store the update: \(error)", status: 500)
            }
        case .failure(let refusal): return refusal.response
        }
    }

    func delete(_ request: HTTPRequest) -> HTTPResponse {
        if let refusal = AdminAuth.refusal(request, token: monitor.config.adminToken) { return refusal }
        let database = context.database
        guard let id = AnnouncementRoutes.id(request) else { return AnnouncementRoutes.badID(request) }
        do {
            guard try AnnouncementStore(database: database).delete(id) else { return APIRoutes.error("no announcement \(id)", status: 404) }
            page.history.invalidate()
            AdminAuth.audit(request, context, "announcement deleted", ["id": "\(id)"])
            return .json(JSONText.ordered([("id", .string(String(id))), ("status", .string("deleted"))]).rendered)
        } catch {
            return APIRoutes.error("cannot delete the announcement: \(error)", status: 500)
        }
    }

    static func id(_ request: HTTPRequest) -> Int64? {
        Int64(request.pathParameters["id"] ?? "").flatMap { $0 > 0 ? $0 : nil }
    }

    static func badID(_ request: HTTPRequest) -> HTTPResponse {
        APIRoutes.error("id must be an announcement's number, not \"\(request.pathParameters["id"] ?? "")\"", status: 400)
    }
}
