import Foundation
import LookoutAlerting
import LookoutCore
import LookoutStore
import MicroHTTPServer
import ResilientHTTP

/// The JSON API (read) and the admin endpoints (write, behind the admin token).
struct APIRoutes: Sendable {
    let context: LookoutContext
    var monitor: Monitor { context.monitor }

    func install(into router: inout Router) {
        router.get("/api/v1/status") { request in .json(StatusAPI(context: context).statusBytes(peers: request.query["local"] != "1")) }
        router.get("/api/v1/sources/:name") { request in sourceDetail(request) }
        router.get("/api/v1/sources/:name/errors") { request in errors(request) }
        router.get("/api/v1/alerts") { _ in alerts() }
        router.post("/api/v1/sources/:name/probe") { request in await probeNow(request) }
        router.post("/api/v1/sources/:name/breaker") { request in breaker(request) }
        router.post("/api/v1/silences") { request in silence(request) }
        router.post("/api/v1/hooks/:name/test") { request in await testHook(request) }
        router.post("/api/v1/hooks/:name/retry") { request in retrySetAside(request) }
        router.get("/api/v1/silences") { _ in silences() }
        router.add("DELETE", "/api/v1/silences/:id") { request in expireSilence(request) }
    }

    /// Every API error: `{"error": "bad_request", "message": "limit must be …"}` — a code for
    /// scripts, a sentence for people.
    static func error(_ message: String, status: Int) -> HTTPResponse {
        let code =
            switch status {
            case 400: "bad_request"
            case 401: "unauthorized"
            case 403: "forbidden"
            case 404: "not_found"
            case 413: "too_large"
            case 503: "unavailable"
            default: status >= 500 ? "internal_error" : "error"
            }
        return .json(JSONText.ordered([("error", .string(code)), ("message", .string(message))]).rendered, status: status)
    }

    /// A 400 naming the first field of `body` (in name order) that is not one of `allowed`, or
    /// nil: a misspelt or misplaced field is refused, never silently left out (a window with
    /// `weekdays` beside `ends_at` would otherwise be stored as a one-off). `hint` may say where
    /// the field belongs instead.
    static func unknownField(in body: [String: Any], allowed: [String], hint: (String) -> String? = { _ in nil }) -> HTTPResponse? {
        guard let unknown = body.keys.sorted().first(where: { !allowed.contains($0) }) else { return nil }
        let shown = unknown.count > 64 ? unknown.prefix(64) + "…" : Substring(unknown)
        return error(hint(unknown) ?? "\(shown): unknown field (use \(allowed.joined(separator: ", ")))", status: 400)
    }

    /// The snapshot of the source the path names (first) and of the sources it depends on, if
    /// it is configured.
    func snapshot(_ request: HTTPRequest) -> RegistrySnapshot? {
        let name = request.pathParameters["name"] ?? ""
        let snapshot = monitor.snapshot(names: [name] + monitor.dependencies(of: name))
        return snapshot.records.first?.name == name ? snapshot : nil
    }

    func sourceDetail(_ request: HTTPRequest) -> HTTPResponse {
        guard let snapshot = snapshot(request) else { return APIRoutes.error("no source named \(request.pathParameters["name"] ?? "")", status: 404) }
        let entry = snapshot.records[0]
        let name = entry.source.name
        let now = snapshot.nowMs
        var json = JSONWriter()
        json.object { json in
            json.field("source") { json in
                StatusAPI.writeSource(
                    entry, health: snapshot.summaries[0], breaker: snapshot.breakers[0], blockedBy: snapshot.blockedBy(0),
                    maintenance: snapshot.maintenance[name], alerts: context.alerts.firing.filter { $0.source == name }.map(\.rule),
                    vendor: entry.source.vendorStatus.map { monitor.vendors.view($0, source: name) }, nowMs: now, to: &json)
            }
            json.field("config") { json in
                json.object { json in
                    json.field("interval_seconds") { $0.number(entry.source.interval.seconds) }
                    json.field("timeout_seconds") { $0.number(entry.source.timeout.seconds) }
                    json.field("fallback") { $0.string(entry.source.fallback) }
                    json.field("labels") { json in
                        json.object { json in
                            for (key, value) in entry.source.labels.sorted(by: { $0.key < $1.key }) { json.field(key) { $0.string(value) } }
                        }
                    }
                }
            }
            let counters = entry.client
            json.field("calls") { json in
                json.object { json in
                    for kind in CallKind.allCases { json.field(kind.rawValue) { $0.int(Int64(counters.calls[kind])) } }
                }
            }
            json.field("retry_success_ratio_15m") { $0.number(snapshot.summaries[0]?.retrySuccessRatio) }
            json.field("errors") { $0.string("/api/v1/sources/\(name)/errors") }
        }
        return .json(json.bytes)
    }

    func errors(_ request: HTTPRequest) -> HTTPResponse {
        guard let entry = snapshot(request)?.records[0] else { return APIRoutes.error("no source named \(request.pathParameters["name"] ?? "")", status: 404) }
        let database = context.database
        var since: Int64 = 0
        if let text = request.query["since"] {
            guard let parsed = APIRoutes.time(text) else {
                return APIRoutes.error("since must be RFC 3339 (2026-11-22T10:00:00Z) or milliseconds since 1970", status: 400)
            }
            since = parsed
        }
        var limit = 100
        if let text = request.query["limit"] {
            guard let parsed = Int(text), (1...1000).contains(parsed) else {
                return APIRoutes.error("limit must be a whole number from 1 to 1000", status: 400)
            }
            limit = parsed
        }
        var before: Int64?
        if let text = request.query["before"] {
            guard let parsed = Int64(text) else { return APIRoutes.error("before must be an error record id (the next link carries it)", status: 400) }
            before = parsed
        }
        let rows: [(id: Int64, record: ErrorRecord)]
        do {
            rows = try ErrorRecordStore(database: database).page(source: entry.source.name, sinceMs: since, beforeID: before, limit: limit)
        } catch {
            return APIRoutes.error("cannot read the error records: \(error)", status: 500)
        }
        var json = JSONWriter()
        json.object { json in
            json.field("source") { $0.string(entry.source.name) }
            json.field("errors") { json in
                json.array { json in
                    for (id, record) in rows {
                        json.object { json in
                            json.field("id") { $0.int(id) }
                            json.field("at") { $0.string(Timestamp.rfc3339(record.tsMs)) }
                            json.field("category") { $0.string(record.category) }
                            json.field("reason") { $0.string(record.reason) }
                            json.field("http_status") { $0.int(record.httpStatus.map(Int64.init)) }
                            json.field("curl_code") { $0.int(record.curlCode.map(Int64.init)) }
                            json.field("message") { $0.string(record.message) }
                            json.field("server_message") { $0.string(record.serverMessage) }
                            json.field("attempt") { $0.int(Int64(record.attempt)) }
                            json.field("was_retried") { $0.bool(record.wasRetried) }
                            json.field("retry_succeeded") { $0.bool(record.retrySucceeded) }
                        }
                    }
                }
            }
            let next = rows.count == limit ? rows.last.map { "/api/v1/sources/\(entry.source.name)/errors?since=\(since)&limit=\(limit)&before=\($0.id)" } : nil
            json.field("next") { $0.string(next) }
        }
        return .json(json.bytes)
    }

    func alerts() -> HTTPResponse {
        let now = Timestamp.nowMs()
        let recent = (try? AlertStore(database: context.database).recent(sinceMs: now - HealthWindow.day)) ?? context.alerts.firing
        let holds = context.alerts.heldBack
        var json = JSONWriter()
        json.object { json in
            json.field("alerts") { json in
                json.array { json in
                    for alert in recent {
                        json.object { json in
                            json.field("id") { $0.int(alert.id) }
                            json.field("fingerprint") { $0.string(alert.fingerprint) }
                            json.field("state") { $0.string(!alert.firing ? "resolved" : holds[alert.fingerprint]?.silenced == true ? "silenced" : "firing") }
                            json.field("rule") { $0.string(alert.rule) }
                            json.field("severity") { $0.string(alert.severity) }
                            json.field("source") { $0.string(alert.source) }
                            json.field("started_at") { $0.string(Timestamp.rfc3339(alert.startedAtMs)) }
                            json.field("resolved_at") { $0.string(alert.resolvedAtMs.map(Timestamp.rfc3339)) }
                            // Why a firing alert is not notified: silenced, or held back by a critical one.
                            json.field("held_back") { $0.string(alert.firing ? holds[alert.fingerprint]?.reason : nil) }
                            json.field("labels") { json in
                                json.object { json in for (k, v) in alert.labels.sorted(by: { $0.key < $1.key }) { json.field(k) { $0.string(v) } } }
                            }
                            json.field("annotations") { json in
                                json.object { json in for (k, v) in alert.annotations.sorted(by: { $0.key < $1.key }) { json.field(k) { $0.string(v) } } }
                            }
                        }
                    }
                }
            }
            json.field("silences") { json in
                json.array { json in
                    for silence in context.alerts.activeSilences(nowMs: now) { APIRoutes.write(silence, to: &json) }
                }
            }
        }
        return .json(json.bytes)
    }

    // MARK: - Admin

    func refusal(_ request: HTTPRequest) -> HTTPResponse? {
        AdminAuth.refusal(request, token: monitor.config.adminToken)
    }

    func probeNow(_ request: HTTPRequest) async -> HTTPResponse {
        if let refusal = refusal(request) { return refusal }
        let name = request.pathParameters["name"] ?? ""
        guard let result = await monitor.scheduler.probeNow(name) else { return APIRoutes.error("no source named \(name)", status: 404) }
        return .json(StatusAPI.result(result))
    }

    func breaker(_ request: HTTPRequest) -> HTTPResponse {
        if let refusal = refusal(request) { return refusal }
        let name = request.pathParameters["name"] ?? ""
        guard snapshot(request) != nil else { return APIRoutes.error("no source named \(name)", status: 404) }
        guard let body = try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any],
            let text = body["action"] as? String, let action = ResilientClient.BreakerAction(rawValue: text)
        else {
            return APIRoutes.error(#"the body must be {"action": "reset" | "force_open" | "disable"}"#, status: 400)
        }
        if let refusal = APIRoutes.unknownField(in: body, allowed: ["action"]) { return refusal }
        // A source the client has not taken up yet (the moments between start and the first
        // apply) has no breaker to act on: saying "closed" would claim an action that did not happen.
        guard monitor.client.breaker(upstream: name, action), let state = monitor.client.breakers([name])[0]?.state.rawValue else {
            return APIRoutes.error("\(name)'s circuit breaker is not set up yet (the service is starting); try again shortly", status: 503)
        }
        AdminAuth.audit(request, context, "breaker \(text)", ["source": name, "state": state])
        return .json(JSONText.ordered([("source", .string(name)), ("state", .string(state))]).rendered)
    }

    func silence(_ request: HTTPRequest) -> HTTPResponse {
        if let refusal = refusal(request) { return refusal }
        let alerts = context.alerts
        guard let body = try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any] else {
            return APIRoutes.error("the body must be a JSON object", status: 400)
        }
        if let refusal = APIRoutes.unknownField(in: body, allowed: ["matchers", "starts_at", "ends_at", "comment"]) { return refusal }
        guard let matchers = body["matchers"] as? [String: String], !matchers.isEmpty else {
            return APIRoutes.error(#"matchers must be a non-empty object of label names to values, e.g. {"source": "acme"}"#, status: 400)
        }
        if let problem = alerts.problem(matchers: matchers) { return APIRoutes.error(problem, status: 400) }
        let now = Timestamp.nowMs()
        var starts = now
        if let startsText = body["starts_at"] {
            guard let text = startsText as? String, let parsed = APIRoutes.time(text) else {
                return APIRoutes.error("starts_at must be an RFC 3339 time", status: 400)
            }
            starts = max(now, parsed)
        }
        guard let endsText = body["ends_at"] as? String, let ends = APIRoutes.time(endsText) else {
            return APIRoutes.error("ends_at must be an RFC 3339 time", status: 400)
        }
        guard ends > now else { return APIRoutes.error("ends_at is in the past", status: 400) }
        guard ends > starts else { return APIRoutes.error("ends_at must be after starts_at", status: 400) }
        guard body["comment"] == nil || body["comment"] is String else { return APIRoutes.error("comment must be a string", status: 400) }
        let comment = body["comment"] as? String ?? ""
        do {
            let id = try alerts.addSilence(Silence(matchers: matchers, startsAtMs: starts, endsAtMs: ends, comment: comment, createdBy: request.remoteAddress))
            AdminAuth.audit(
                request, context, "silence added",
                [
                    "id": "\(id)", "matchers": matchers.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ","),
                    "until": Timestamp.rfc3339(ends), "comment": comment,
                ])
            return .json(JSONText.ordered([("id", .int(id)), ("ends_at", .string(Timestamp.rfc3339(ends)))]).rendered, status: 201)
        } catch {
            return APIRoutes.error("cannot store the silence: \(error)", status: 500)
        }
    }

    /// `POST /api/v1/hooks/NAME/test` (admin): a test notification through the hook, now.
    func testHook(_ request: HTTPRequest) async -> HTTPResponse {
        if let refusal = refusal(request) { return refusal }
        let config = monitor.config
        let name = request.pathParameters["name"] ?? ""
        guard let hook = config.hooks.first(where: { $0.name == name }) else { return APIRoutes.error("no hook is named \(name)", status: 404) }
        let answer = await HookTest.send(hook, externalURL: config.externalURL ?? "http://\(config.listen)")
        return .json(
            JSONText.ordered([
                ("hook", .string(hook.name)), ("type", .string(hook.type.rawValue)), ("delivered", .bool(answer.ok)),
                ("http_status", answer.httpStatus.map { .int(Int64($0)) } ?? .null), ("answer", .string(answer.body)),
                ("problem", answer.problem.map { .string($0) } ?? .null),
            ]).rendered)
    }

    /// `POST /api/v1/hooks/NAME/retry` (admin): queues the hook's set-aside notifications again.
    func retrySetAside(_ request: HTTPRequest) -> HTTPResponse {
        if let refusal = refusal(request) { return refusal }
        let name = request.pathParameters["name"] ?? ""
        guard monitor.config.hooks.contains(where: { $0.name == name }) else { return APIRoutes.error("no hook is named \(name)", status: 404) }
        let database = context.database
        do {
            let count = try OutboxStore(database: database).retrySetAside(hook: name, nowMs: Timestamp.nowMs())
            context.outbox.poke()
            AdminAuth.audit(request, context, "set-aside notifications queued again", ["hook": name, "queued": "\(count)"])
            return .json(JSONText.ordered([("hook", .string(name)), ("queued", .int(Int64(count)))]).rendered)
        } catch {
            return APIRoutes.error("cannot queue the notifications again: \(error)", status: 503)
        }
    }

    /// `GET /api/v1/silences`: the silences in force or still to come.
    func silences() -> HTTPResponse {
        var json = JSONWriter()
        json.object { json in
            json.field("silences") { json in
                json.array { json in
                    for silence in context.alerts.activeSilences() { APIRoutes.write(silence, to: &json) }
                }
            }
        }
        return .json(json.bytes)
    }

    /// `DELETE /api/v1/silences/ID` (admin): ends the silence now.
    func expireSilence(_ request: HTTPRequest) -> HTTPResponse {
        if let refusal = refusal(request) { return refusal }
        let alerts = context.alerts
        let text = request.pathParameters["id"] ?? ""
        guard let id = Int64(text), id > 0 else { return APIRoutes.error("id must be a silence's number, not \"\(text)\"", status: 400) }
        do {
            guard try alerts.expireSilence(id) else { return APIRoutes.error("no silence \(id) is in force", status: 404) }
            AdminAuth.audit(request, context, "silence expired", ["id": "\(id)"])
            return .json(JSONText.ordered([("id", .int(id)), ("status", .string("expired"))]).rendered)
        } catch {
            return APIRoutes.error("cannot expire the silence: \(error)", status: 500)
        }
    }

    static func write(_ silence: Silence, to json: inout JSONWriter) {
        json.object { json in
            json.field("id") { $0.int(silence.id) }
            json.field("matchers") { json in
                json.object { json in for (k, v) in silence.matchers.sorted(by: { $0.key < $1.key }) { json.field(k) { $0.string(v) } } }
            }
            json.field("starts_at") { $0.string(Timestamp.rfc3339(silence.startsAtMs)) }
            json.field("ends_at") { $0.string(Timestamp.rfc3339(silence.endsAtMs)) }
            json.field("comment") { $0.string(silence.comment) }
            json.field("created_by") { $0.string(silence.createdBy) }
        }
    }

    /// RFC 3339 or milliseconds since 1970.
    static func time(_ text: String) -> Int64? {
        Int64(text) ?? Timestamp.parseRFC3339(text)
    }
}
