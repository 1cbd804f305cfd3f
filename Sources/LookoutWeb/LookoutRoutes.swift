import LookoutCore
import MicroHTTPServer

/// Every route Lookout serves.
package enum LookoutRoutes {
    package static func router(_ context: LookoutContext) -> Router {
        let monitor = context.monitor
        let metrics = MetricsExposition(context: context)
        let status = StatusPage(context: context)
        var router = Router()
        // On every answer: no content sniffing, no framing (clickjacking of the admin page), no
        // referrer leaking the on-call URL, no plugins or base-URL tricks, and no script or style
        // but the page's own (allowed by hash: the page has no external assets).
        router.defaultHeaders = [
            "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer", "X-Frame-Options": "DENY",
            "Content-Security-Policy": StatusPage.contentSecurityPolicy,
        ]
        // With status_page.public, `/` is the page for customers and the full page moves to
        // `/oncall`, behind the admin token (without one it is off, as the admin API is: open, it
        // would show anyone what the public page leaves out); `/public` previews the public one.
        router.get("/") { request in
            let audience: StatusPage.Audience = monitor.config.statusPage.isPublic ? .public : .onCall
            return page(status.renderBytes(audience: audience, filter: request.query["q"]), request)
        }
        router.get("/public") { request in page(status.renderBytes(audience: .public, filter: request.query["q"]), request) }
        router.get("/oncall") { request in
            if monitor.config.statusPage.isPublic, let refusal = AdminAuth.refusal(request, token: monitor.config.adminToken, browser: true) {
                return refusal
            }
            return page(status.renderBytes(audience: .onCall, filter: request.query["q"]), request)
        }
        router.get("/metrics") { request in
            let body = metrics.renderBody()
            // Prometheus asks for gzip; 30 MB at 10,000 sources goes out about ten times smaller.
            if Gzip.accepted(by: request), let compressed = Gzip.compress(UnsafeRawBufferPointer(start: body.pointer, count: body.count)) {
                return HTTPResponse(
                    headers: ["Content-Type": "text/plain; version=0.0.4; charset=utf-8", "Content-Encoding": "gzip", "Vary": "Accept-Encoding"],
                    body: .owned(compressed))
            }
            return HTTPResponse(
                headers: ["Content-Type": "text/plain; version=0.0.4; charset=utf-8", "Vary": "Accept-Encoding"],
                body: .owned(body))
        }
        APIRoutes(context: context).install(into: &router)
        MaintenanceRoutes(context: context).install(into: &router)
        AnnouncementRoutes(context: context, page: status).install(into: &router)
        AvailabilityRoutes(context: context).install(into: &router)
        SLARoutes(context: context).install(into: &router)
        StatuspageRoutes(page: status).install(into: &router)
        let badges = Badges(context: context)
        badges.install(into: &router)
        PushRoutes(context: context).install(into: &router)
        let probe = ProbeEndpoint(context: context)
        // A /probe call mostly waits for its transfer: its task runs on the transfer loop, as
        // scheduled probes do, so neither the start nor the answer crosses to the pool and back.
        let transport = probe.client.transport
        router.get("/probe", executor: { transport.executor }) { request in await probe.handle(request) }
        router.notFound = { path in
            if path.hasPrefix("/badge/") { return badges.unrouted(path) }
            return path.hasPrefix("/api/")
                ? APIRoutes.error("no such endpoint: \(path) (see /api/v1/status, /api/v1/sources/NAME, /api/v1/alerts)", status: 404)
                // A push URL carries its token: never echoed.
                : .text(path.hasPrefix("/push/") ? "not found\n" : "not found: \(path)\n", status: 404)
        }
        router.get("/-/healthy") { _ in .text("Lookout is healthy.\n") }
        router.get("/-/ready") { _ in
            if case .damaged(let problems) = context.database.integrityStatus {
                return .text("Lookout is not ready: the database is damaged (quick_check: \(problems)).\n", status: 503)
            }
            if let problem = context.writer.status.lastError ?? context.database.unwritableReason {
                return .text("Lookout is not ready: the database cannot be written (\(problem)).\n", status: 503)
            }
            return monitor.registry.everySourceProbed
                ? .text("Lookout is ready.\n") : .text("Lookout is not ready: the first round has not finished.\n", status: 503)
        }
        router.post("/-/reload") { request in
            if let refusal = AdminAuth.refusal(request, token: monitor.config.adminToken) { return refusal }
            switch monitor.reloadConfig() {
            case .refused(let problems):
                return .json(JSONText.object(["status": .string("error"), "problems": .array(problems.map { .string($0) })]), status: 400)
            case .noFile:
                return .json(#"{"status":"reloaded"}"#)
            case .reloaded(let change):
                AdminAuth.audit(request, context, "config reloaded", change.metadata)
                func names(_ list: [String]) -> JSONText { .array(list.map { .string($0) }) }
                return .json(
                    JSONText.ordered([
                        ("status", .string("reloaded")),
                        (
                            "sources",
                            JSONText.ordered([
                                ("added", names(change.sourcesAdded)), ("removed", names(change.sourcesRemoved)), ("changed", names(change.sourcesChanged)),
                            ])
                        ),
                        (
                            "hooks",
                            JSONText.ordered([
                                ("added", names(change.hooksAdded)), ("removed", names(change.hooksRemoved)), ("changed", names(change.hooksChanged)),
                            ])
                        ),
                        ("restart_needed", names(change.needsRestart)),
                    ]).rendered)
            }
        }
        return router
    }

    /// An HTML page, gzipped when the browser takes it (the page for 1,000 sources is a few MB).
    static func page(_ bytes: [UInt8], _ request: HTTPRequest) -> HTTPResponse {
        if Gzip.accepted(by: request), let compressed = bytes.withUnsafeBytes({ Gzip.compress($0) }) {
            return HTTPResponse(
                headers: ["Content-Type": "text/html; charset=utf-8", "Content-Encoding": "gzip", "Vary": "Accept-Encoding"], body: .owned(compressed))
        }
        return HTTPResponse(headers: ["Content-Type": "text/html; charset=utf-8", "Vary": "Accept-Encoding"], body: .bytes(bytes))
    }
}
