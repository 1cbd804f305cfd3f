import Foundation
import MicroHTTPServer

/// One payload received on `/webhook`.
struct WebhookDelivery: Sendable {
    var receivedAtMs: Int64
    var delivery: String?
    var signature: String?
    var contentType: String?
    var body: [UInt8]
    /// The receiver's path (`/webhook`, `/slack/T1`, `/pagerduty/v2/enqueue`…).
    var path = "/webhook"
    /// What the provider receiver found wrong (it answered 400); nil when accepted, or 429.
    var problem: String?
    /// The receiver answered 429 (throttled) instead of taking it.
    var throttled = false
    var method = "POST"
    /// The query string, and the headers a provider authenticates with (Authorization,
    /// X-Gotify-Key), for tests that check where a token went.
    var query: [String: String] = [:]
    var authorization: String?
    var gotifyKey: String?
}

/// `/webhook` stores every payload; `/webhook/log` lists them in arrival order as JSON.
extension Simulator {
    /// `?refuse=TEXT`: a body containing TEXT is refused with 400 (a poison notification),
    /// logged with its problem; every other body is taken.
    func webhook(_ request: HTTPRequest) async -> HTTPResponse {
        var delivery = WebhookDelivery(
            receivedAtMs: Int64(Date().timeIntervalSince1970 * 1000),
            delivery: request.headers["X-Lookout-Delivery"], signature: request.headers["X-Lookout-Signature"],
            contentType: request.headers["Content-Type"], body: request.body)
        if let refuse = request.query["refuse"], !refuse.isEmpty, request.bodyText.contains(refuse) {
            delivery.problem = "refused: the body contains \(refuse)"
            state.withLock { $0.webhooks.append(delivery) }
            return .json(#"{"error":"invalid payload"}"#, status: 400)
        }
        state.withLock { $0.webhooks.append(delivery) }
        return .json(#"{"status":"received"}"#)
    }

    func webhookLog(_ request: HTTPRequest) async -> HTTPResponse {
        let deliveries = state.withLock { $0.webhooks }
        let entries: [[String: Any]] = deliveries.map { delivery in
            var entry: [String: Any] = ["received_at_ms": delivery.receivedAtMs]
            entry["delivery"] = delivery.delivery ?? NSNull()
            entry["signature"] = delivery.signature ?? NSNull()
            entry["content_type"] = delivery.contentType ?? NSNull()
            if let payload = try? JSONSerialization.jsonObject(with: Data(delivery.body)) { entry["payload"] = payload }
            entry["raw"] = String(decoding: delivery.body, as: UTF8.self)
            entry["path"] = delivery.path
            entry["problem"] = delivery.problem ?? NSNull()
            entry["throttled"] = delivery.throttled
            entry["method"] = delivery.method
            entry["query"] = delivery.query
            entry["authorization"] = delivery.authorization ?? NSNull()
            entry["gotify_key"] = delivery.gotifyKey ?? NSNull()
            return entry
        }
        return .json(Simulator.jsonText(entries))
    }

    func webhookReset(_ request: HTTPRequest) async -> HTTPResponse {
        state.withLock { $0.webhooks.removeAll() }
        return .json(#"{"reset":true}"#)
    }
}
