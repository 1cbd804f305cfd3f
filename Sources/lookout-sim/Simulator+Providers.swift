import Foundation
import MicroHTTPServer

/// Receivers that check a notification the way each provider documents its API, and answer as
/// the provider does: Slack incoming webhooks, Teams Workflows webhooks, PagerDuty Events API v2,
/// Discord webhooks and ntfy's JSON publishing. `POST /providers/throttle?count=N&retry_after=S`
/// makes the next N requests answer 429 with `Retry-After: S` (with `&path=PREFIX`, the next N
/// to paths starting with PREFIX). Every request is in `/webhook/log`.
extension Simulator {
    /// Records the request; answers 429 while throttled, 400 with the provider's body when
    /// `check` finds a problem, else `accepted`.
    /// `throttled` answers a throttled request (default: 429 with `Retry-After: S`).
    func receive(
        _ request: HTTPRequest, check: ([String: Any]) -> String?, rejected: (String) -> HTTPResponse, accepted: ([String: Any]) -> HTTPResponse,
        throttled: ((Int) -> HTTPResponse)? = nil
    ) -> HTTPResponse {
        var delivery = WebhookDelivery(
            receivedAtMs: Int64(Date().timeIntervalSince1970 * 1000), delivery: request.headers["X-Lookout-Delivery"],
            signature: request.headers["X-Lookout-Signature"], contentType: request.headers["Content-Type"], body: request.body, path: request.path)
        delivery.method = request.method
        delivery.query = request.query
        delivery.authorization = request.headers["Authorization"]
        delivery.gotifyKey = request.headers["X-Gotify-Key"]
        let retryAfter = state.withLock { state -> Int? in
            if let prefix = state.throttleByPath.keys.first(where: { request.path.hasPrefix($0) }), let rule = state.throttleByPath[prefix], rule.count > 0 {
                state.throttleByPath[prefix] = (rule.count - 1, rule.retryAfter)
                return rule.retryAfter
            }
            guard state.throttle.count > 0 else { return nil }
            state.throttle.count -= 1
            return state.throttle.retryAfter
        }
        if let retryAfter {
            delivery.throttled = true
            state.withLock { $0.webhooks.append(delivery) }
            if let throttled { return throttled(retryAfter) }
            var response = HTTPResponse.json(#"{"error":"rate_limited"}"#, status: 429)
            response.headers.set("Retry-After", String(retryAfter))
            return response
        }
        let object = (try? JSONSerialization.jsonObject(with: Data(request.body))) as? [String: Any]
        let problem =
            request.headers["Content-Type"]?.hasPrefix("application/json") != true
            ? "Content-Type is not application/json" : object.map(check) ?? "the body is not a JSON object"
        delivery.problem = problem
        state.withLock { $0.webhooks.append(delivery) }
        if let problem { return rejected(problem) }
        return accepted(object ?? [:])
    }

    static func text(_ value: Any?, max: Int) -> Bool {
        guard let text = value as? String else { return false }
        return !text.isEmpty && text.count <= max
    }

    /// Slack: `text` and/or blocks (here inside attachments); header text ≤ 150, section text
    /// ≤ 3,000; answers `ok` or `invalid_blocks` / `invalid_payload` (plain text).
    func slack(_ request: HTTPRequest) async -> HTTPResponse {
        receive(
            request,
            check: { body in
                guard body["text"] is String || body["blocks"] != nil || body["attachments"] != nil else { return "no text, blocks or attachments" }
                let attachments = body["attachments"] as? [[String: Any]] ?? []
                for block in (body["blocks"] as? [[String: Any]] ?? []) + attachments.flatMap({ $0["blocks"] as? [[String: Any]] ?? [] }) {
                    let text = (block["text"] as? [String: Any])?["text"]
                    switch block["type"] as? String {
                    case "header": if !Simulator.text(text, max: 150) { return "header text missing or over 150 characters" }
                    case "section": if !Simulator.text(text, max: 3000) { return "section text missing or over 3000 characters" }
                    case "actions", "context", "divider": continue
                    default: return "unknown block type \(block["type"] ?? "nil")"
                    }
                }
                return nil
            }, rejected: { _ in .text("invalid_blocks", status: 400) }, accepted: { _ in .text("ok") })
    }

    /// Teams Workflows: a message with Adaptive Card attachments; answers 202.
    func teams(_ request: HTTPRequest) async -> HTTPResponse {
        receive(
            request,
            check: { body in
                guard body["type"] as? String == "message", let attachments = body["attachments"] as? [[String: Any]], !attachments.isEmpty else {
                    return "not a message with attachments"
                }
                for attachment in attachments {
                    guard attachment["contentType"] as? String == "application/vnd.microsoft.card.adaptive",
                        let card = attachment["content"] as? [String: Any], card["type"] as? String == "AdaptiveCard", card["version"] is String,
                        let blocks = card["body"] as? [[String: Any]], !blocks.isEmpty
                    else { return "attachment is not an Adaptive Card" }
                }
                return nil
            }, rejected: { problem in .json(Simulator.jsonText(["error": ["code": "BadRequest", "message": problem]]), status: 400) },
            accepted: { _ in HTTPResponse(status: 202) })
    }

    /// PagerDuty Events API v2: routing_key, event_action, dedup_key ≤ 255; a trigger needs
    /// payload.summary ≤ 1024, source and severity; answers 202 with the dedup_key.
    func pagerDuty(_ request: HTTPRequest) async -> HTTPResponse {
        receive(
            request,
            check: { body in
                guard Simulator.text(body["routing_key"], max: 64) else { return "routing_key is missing" }
                guard let action = body["event_action"] as? String, ["trigger", "acknowledge", "resolve"].contains(action) else {
                    return "event_action is invalid"
                }
                if let key = body["dedup_key"], !Simulator.text(key, max: 255) { return "dedup_key is over 255 characters" }
                if action != "trigger" { return body["dedup_key"] == nil ? "dedup_key is required to \(action)" : nil }
                guard let payload = body["payload"] as? [String: Any] else { return "payload is missing" }
                guard Simulator.text(payload["summary"], max: 1024) else { return "payload.summary is missing or over 1024 characters" }
                guard Simulator.text(payload["source"], max: 255) else { return "payload.source is missing" }
                guard let severity = payload["severity"] as? String, ["critical", "error", "warning", "info"].contains(severity) else {
                    return "payload.severity must be critical, error, warning or info"
                }
                return nil
            },
            rejected: { problem in
                .json(Simulator.jsonText(["status": "invalid event", "message": "Event object is invalid", "errors": [problem]]), status: 400)
            },
            accepted: { body in
                .json(Simulator.jsonText(["status": "success", "message": "Event processed", "dedup_key": body["dedup_key"] as? String ?? ""]), status: 202)
            })
    }

    /// Discord: content ≤ 2,000, at most 10 embeds (title ≤ 256, description ≤ 4,096, fields ≤ 25,
    /// colour a number); answers 204.
    func discord(_ request: HTTPRequest) async -> HTTPResponse {
        receive(
            request,
            check: { body in
                if let content = body["content"], !Simulator.text(content, max: 2000) { return "content is over 2000 characters" }
                let embeds = body["embeds"] as? [[String: Any]] ?? []
                guard body["content"] != nil || !embeds.isEmpty else { return "Cannot send an empty message" }
                guard embeds.count <= 10 else { return "more than 10 embeds" }
                for embed in embeds {
                    if let title = embed["title"], !Simulator.text(title, max: 256) { return "embed title over 256 characters" }
                    if let description = embed["description"], !Simulator.text(description, max: 4096) { return "embed description over 4096 characters" }
                    if let color = embed["color"], !(color is NSNumber) { return "embed color is not a number" }
                    if (embed["fields"] as? [Any] ?? []).count > 25 { return "more than 25 fields" }
                }
                return nil
            }, rejected: { _ in .json(#"{"code": 50035, "message": "Invalid Form Body"}"#, status: 400) }, accepted: { _ in HTTPResponse(status: 204) })
    }

    /// ntfy JSON publishing: topic and message; priority 1–5; answers the message event.
    func ntfy(_ request: HTTPRequest) async -> HTTPResponse {
        receive(
            request,
            check: { body in
                guard Simulator.text(body["topic"], max: 64) else { return "topic is missing" }
                guard Simulator.text(body["message"], max: 4096) else { return "message is missing" }
                if let priority = body["priority"] as? Int, !(1...5).contains(priority) { return "priority must be 1 to 5" }
                return nil
            }, rejected: { problem in .json(Simulator.jsonText(["code": 40001, "http": 400, "error": problem]), status: 400) },
            accepted: { body in .json(Simulator.jsonText(["id": "sim", "event": "message", "topic": body["topic"] as? String ?? ""])) })
    }

    func throttleProviders(_ request: HTTPRequest) async -> HTTPResponse {
        let count = max(0, request.intQuery("count") ?? 1)
        let retryAfter = max(0, request.intQuery("retry_after") ?? 1)
        if let path = request.query["path"], !path.isEmpty {
            state.withLock { $0.throttleByPath[path] = (count, retryAfter) }
        } else {
            state.withLock { $0.throttle = (count, retryAfter) }
        }
        return .json(Simulator.jsonText(["count": count, "retry_after": retryAfter]))
    }
}
