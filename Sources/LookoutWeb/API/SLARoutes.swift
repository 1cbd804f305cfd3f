import LookoutCore
import LookoutStore
import MicroHTTPServer

/// SLA reports: `GET /api/v1/sla?period=2026-11[&source=NAME|&group=G]` (JSON),
/// `GET /api/v1/sla.csv?period=…` (one row per outage) and `GET /sla?period=…` (the printable
/// report). Without `period`, each source's current period. Behind the admin token when the
/// status page is public: the evidence names causes the public page leaves out.
package struct SLARoutes: Sendable {
    let context: LookoutContext

    func install(into router: inout Router) {
        router.get("/api/v1/sla") { request in
            respond(request) { reports in
                var json = JSONWriter(capacity: 1024 + reports.count * 1024)
                json.object { json in
                    json.field("reports") { json in
                        json.array { json in
                            for report in reports { json.object { report.write(into: &$0) } }
                        }
                    }
                }
                return .json(json.bytes)
            }
        }
        router.get("/api/v1/sla.csv") { request in
            respond(request) { reports in
                let name = "lookout-sla-\(request.query["period"].map { "\($0)" } ?? "current").csv"
                return HTTPResponse(
                    headers: ["Content-Type": "text/csv; charset=utf-8; header=present", "Content-Disposition": "attachment; filename=\"\(name)\""],
                    body: .bytes(Array(SLAReport.csv(reports).utf8)))
            }
        }
        router.get("/sla") { request in
            respond(request, browser: true) { reports in
                let config = context.monitor.config
                var page = SLAPage(reports: reports, title: config.statusPage.title, query: request.query)
                for source in config.sources { page.groups[source.name] = config.statusPage.group(of: source) }
                return HTTPResponse(
                    headers: ["Content-Type": "text/html; charset=utf-8", "Content-Security-Policy": SLAPage.contentSecurityPolicy],
                    body: .bytes(Array(page.render().utf8)))
            }
        }
    }

    /// Reads the reports the request asks for and answers with what `answer` makes of them; a
    /// wrong request is a 400 or 404 that says what to send instead.
    private func respond(_ request: HTTPRequest, browser: Bool = false, _ answer: ([SLAReport]) -> HTTPResponse) -> HTTPResponse {
        let config = context.monitor.config
        if config.statusPage.isPublic, let refusal = AdminAuth.refusal(request, token: config.adminToken, browser: browser) { return refusal }
        switch SLARoutes.reports(request.query, config: config, database: context.database, nowMs: Timestamp.nowMs()) {
        case .success(let reports): return answer(reports)
        case .failure(let problem): return APIRoutes.error(problem.message, status: problem.status)
        }
    }

    package struct Problem: Error {
        package var message: String
        package var status: Int
    }

    /// The reports `query` asks for (`period`, `source`, `group`), in config order.
    package static func reports(_ query: [String: String], config: LookoutConfig, database: LookoutDatabase, nowMs: Int64) -> Result<[SLAReport], Problem> {
        var sources = config.sources.filter { $0.sla != nil }
        if let name = query["source"] {
            guard let source = config.sources.first(where: { $0.name == name }) else {
                return .failure(Problem(message: "no source named \(name)", status: 404))
            }
            guard source.sla != nil else {
                return .failure(Problem(message: "source \(name) has no sla: give it one (sla: {target: 99.9%}) or in defaults", status: 404))
            }
            sources = [source]
        }
        if let group = query["group"] {
            sources = sources.filter { config.statusPage.group(of: $0) == group }
            guard !sources.isEmpty else { return .failure(Problem(message: "no group named \(group) with an sla", status: 404)) }
        }
        var period: SLAPeriod?
        if let text = query["period"] {
            do throws(SLAPeriod.Problem) { period = try SLAPeriod(parsing: text) } catch { return .failure(Problem(message: error.description, status: 400)) }
        }
        do {
            let reports = try SLAStore(database: database).reports(sources: sources, period: period, windows: config.maintenance, nowMs: nowMs)
            if let period, let early = reports.first(where: { $0.startMs > nowMs }) {
                return .failure(
                    Problem(message: "\(period) has not begun (it begins \(Timestamp.rfc3339(early.startMs)) in \(early.settings.timeZone))", status: 400))
            }
            return .success(reports)
        } catch {
            return .failure(Problem(message: "cannot read the outages: \(error)", status: 500))
        }
    }
}
