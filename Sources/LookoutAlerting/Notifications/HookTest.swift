import Foundation
import LookoutCore
import ResilientHTTP

/// A clearly marked test notification through one hook, sent once, now (not through the outbox),
/// with the receiver's answer: `lookout hooks test NAME` and `POST /api/v1/hooks/NAME/test`.
package enum HookTest {
    /// What the receiver said.
    package struct Answer: Sendable {
        package var httpStatus: Int?
        package var body: String
        /// Why it did not arrive (no answer, or not a 2xx), for people.
        package var problem: String?
        package var ok: Bool { problem == nil }
    }

    /// The test alert's rule name: providers draw it neutral, with "Test" first.
    static let rule = "LookoutTest"

    /// The test alert: info severity, of no source, saying it needs no action.
    static func alert(nowMs: Int64) -> Alert {
        Alert(
            fingerprint: "lookout-test", rule: rule, source: nil, severity: "info",
            labels: ["alertname": rule, "severity": "info"],
            annotations: [
                "summary": "Test: a notification from Lookout — no action needed",
                "description": "This is a test of the hook, sent by an operator (lookout hooks test). Nothing is down.",
            ],
            startedAtMs: nowMs, resolvedAtMs: nil, id: nil)
    }

    package static func payload(for hook: HookConfig, externalURL: String, nowMs: Int64) -> String {
        HookRouter(hooks: [hook], externalURL: externalURL).payload(for: hook, .firing(alert(nowMs: nowMs)), nowMs: nowMs)
    }

    package static func send(_ hook: HookConfig, externalURL: String, transport: CurlTransport = .lookout()) async -> Answer {
        let nowMs = Timestamp.nowMs()
        if case .own(let send) = NotificationProviders.provider(hook).delivery {
            let outcome = await send(payload(for: hook, externalURL: externalURL, nowMs: nowMs), hook)
            return Answer(httpStatus: nil, body: outcome.reply, problem: outcome.error)
        }
        let request = OutboxDeliverer.request(hook, payload: payload(for: hook, externalURL: externalURL, nowMs: nowMs), delivery: "test-\(nowMs)")
        let result = await transport.perform(request)
        let body = PrintableText.escape(String(decoding: result.body.prefix(2000), as: UTF8.self))
        guard let status = result.httpStatus else { return Answer(httpStatus: nil, body: "", problem: "no answer: \(result.curlMessage)") }
        return Answer(httpStatus: status, body: body, problem: (200..<300).contains(status) ? nil : "the receiver answered \(status)")
    }
}
