import LookoutCore
import LookoutStore
import MicroHTTPServer

/// `GET /api/v1/sources/NAME/availability?days=N`: a source's availability per UTC day over the
/// last N days (1 to 3,650, default 30) and in total — for SLA reports beyond what the page's
/// bars show — read from the history tiers (days, then hours, then minutes).
struct AvailabilityRoutes: Sendable {
    let context: LookoutContext

    func install(into router: inout Router) {
        router.get("/api/v1/sources/:name/availability") { request in availability(request) }
    }

    func availability(_ request: HTTPRequest) -> HTTPResponse {
        let name = request.pathParameters["name"] ?? ""
        guard context.monitor.config.sources.contains(where: { $0.name == name }) else { return APIRoutes.error("no source named \(name)", status: 404) }
        guard let database = context.database else { return APIRoutes.error("no database", status: 503) }
        var days = 30
        if let text = request.query["days"] {
            guard let parsed = Int(text), (1...3650).contains(parsed) else { return APIRoutes.error("days must be a whole number from 1 to 3650", status: 400) }
            days = parsed
        }
        let now = Timestamp.nowMs()
        let today = HealthWindow.floor(now, to: HealthWindow.day)
        let since = today - Int64(days - 1) * HealthWindow.day
        let found: [HistoryStore.Day]
        do {
            found = try HistoryStore.days(database, source: name, sinceMs: since)[name] ?? []
        } catch {
            return APIRoutes.error("cannot read the history: \(error)", status: 500)
        }
        let probes = found.reduce(0) { $0 &+ $1.probes }
        let failures = found.reduce(0) { $0 &+ $1.failures }
        var json = JSONWriter(capacity: 256 + found.count * 96)
        json.object { json in
            json.field("source") { $0.string(name) }
            json.field("from") { $0.string(Timestamp.rfc3339(since)) }
            json.field("to") { $0.string(Timestamp.rfc3339(now)) }
            json.field("probes") { $0.int(Int64(probes)) }
            json.field("failures") { $0.int(Int64(failures)) }
            json.field("availability") { $0.number(probes > 0 ? 1 - Double(failures) / Double(probes) : nil) }
            json.field("days") { json in
                json.array { json in
                    for day in found {
                        json.object { json in
                            json.field("day") { $0.string(String(Timestamp.rfc3339(day.dayMs).prefix(10))) }
                            json.field("probes") { $0.int(Int64(day.probes)) }
                            json.field("failures") { $0.int(Int64(day.failures)) }
                            json.field("availability") { $0.number(day.probes > 0 ? 1 - Double(day.failures) / Double(day.probes) : nil) }
                        }
                    }
                }
            }
        }
        return .json(json.bytes)
    }
}
