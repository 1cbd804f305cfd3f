import LookoutCore
import LookoutStore
import MicroHTTPServer

/// Availability per UTC day over the last N days (1 to 3,650, default 30) and in total, for SLA
/// reports beyond what the page's bars show, read from the history tiers (days, then hours, then
/// minutes): `GET /api/v1/sources/NAME/availability?days=N` for one source,
/// `GET /api/v1/availability?days=N[&group=G]` for every configured source (or a group's), in
/// config order.
struct AvailabilityRoutes: Sendable {
    let context: LookoutContext

    func install(into router: inout Router) {
        router.get("/api/v1/sources/:name/availability") { request in availability(request) }
        router.get("/api/v1/availability") { request in everySource(request) }
    }

    func availability(_ request: HTTPRequest) -> HTTPResponse {
        let name = request.pathParameters["name"] ?? ""
        guard context.monitor.config.sources.contains(where: { $0.name == name }) else { return APIRoutes.error("no source named \(name)", status: 404) }
        return respond(request, source: name) { report, json in
            json.object { json in
                json.field("source") { $0.string(name) }
                report.window(into: &json)
                report.days(of: name, into: &json)
            }
        }
    }

    func everySource(_ request: HTTPRequest) -> HTTPResponse {
        let config = context.monitor.config
        var sources = config.sources
        if let group = request.query["group"] {
            sources = sources.filter { config.statusPage.group(of: $0) == group }
            guard !sources.isEmpty else { return APIRoutes.error("no group named \(group)", status: 404) }
        }
        return respond(request, source: nil) { report, json in
            json.object { json in
                report.window(into: &json)
                json.field("sources") { json in
                    json.array { json in
                        for source in sources {
                            json.object { json in
                                json.field("source") { $0.string(source.name) }
                                report.days(of: source.name, into: &json)
                            }
                        }
                    }
                }
            }
        }
    }

    /// The days read for one request, and the window they cover.
    private struct Report {
        let found: [String: [HistoryStore.Day]]
        let sinceMs: Int64
        let nowMs: Int64

        func window(into json: inout JSONWriter) {
            json.field("from") { $0.string(Timestamp.rfc3339(sinceMs)) }
            json.field("to") { $0.string(Timestamp.rfc3339(nowMs)) }
        }

        /// A source's totals and its days, as fields of the object being written.
        func days(of source: String, into json: inout JSONWriter) {
            let days = found[source] ?? []
            let probes = days.reduce(0) { $0 &+ $1.probes }
            let failures = days.reduce(0) { $0 &+ $1.failures }
            json.field("probes") { $0.int(Int64(probes)) }
            json.field("failures") { $0.int(Int64(failures)) }
            json.field("availability") { $0.number(HealthWindow.availability(probes: probes, failures: failures)) }
            json.field("days") { json in
                json.array { json in
                    for day in days {
                        json.object { json in
                            json.field("day") { $0.string(String(Timestamp.rfc3339(day.dayMs).prefix(10))) }
                            json.field("probes") { $0.int(Int64(day.probes)) }
                            json.field("failures") { $0.int(Int64(day.failures)) }
                            json.field("availability") { $0.number(day.availability) }
                        }
                    }
                }
            }
        }
    }

    /// Reads the days of `source` (nil: every source) over the request's `days` and answers
    /// with what `write` makes of them.
    private func respond(_ request: HTTPRequest, source: String?, _ write: (Report, inout JSONWriter) -> Void) -> HTTPResponse {
        let database = context.database
        var days = 30
        if let text = request.query["days"] {
            guard let parsed = Int(text), (1...3650).contains(parsed) else { return APIRoutes.error("days must be a whole number from 1 to 3650", status: 400) }
            days = parsed
        }
        let now = Timestamp.nowMs()
        let today = HealthWindow.floor(now, to: HealthWindow.day)
        let since = today - Int64(days - 1) * HealthWindow.day
        let report: Report
        do {
            report = Report(found: try HistoryStore.days(database, source: source, sinceMs: since), sinceMs: since, nowMs: now)
        } catch {
            return APIRoutes.error("cannot read the history: \(error)", status: 500)
        }
        var json = JSONWriter(capacity: 256 + report.found.values.reduce(0) { $0 + $1.count } * 96)
        write(report, &json)
        return .json(json.bytes)
    }
}
