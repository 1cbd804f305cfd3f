import Foundation
import LookoutCore
import ResilientHTTP

/// Email through an SMTP relay: the outbox keeps `{"subject", "text", "html"}`, sent as one
/// multipart/alternative message.
enum EmailProvider: NotificationProvider {
    static let type = HookConfig.HookType.email

    static let delivery = NotificationDelivery.own { payload, hook in
        let outcome = await mail(payload, hook)
        return OwnDelivery(reply: "SMTP \(outcome.replyCode)", error: outcome.error.map { "the mail server refused the message: \($0)" })
    }

    /// Sends an outbox row through the hook's SMTP server.
    static func mail(_ payload: String, _ hook: HookConfig) async -> SMTPSender.Outcome {
        let object = (try? JSONSerialization.jsonObject(with: Data(payload.utf8))) as? [String: String] ?? [:]
        let message = MailMessage(
            from: hook.mail.from, to: hook.mail.to, subject: object["subject"] ?? "Lookout", text: object["text"] ?? payload, html: object["html"] ?? "",
            mailer: LookoutVersion.userAgent)
        let server = SMTPServer(
            url: hook.url, username: hook.mail.username, password: hook.mail.password, startTLS: hook.mail.startTLS, caFile: hook.mail.caFile)
        return await SMTPSender.send(message, via: server)
    }

    static func body(_ summary: ProviderPayloads.Summary, _ send: NotificationGroups.Send, hook: HookConfig, externalURL: String, nowMs: Int64) -> String {
        email(summary, send, nowMs: nowMs)
    }

    /// An email, kept in the outbox as `{"subject", "text", "html"}` and sent as one
    /// multipart/alternative message. The subject fits a phone's notification: state, source and
    /// the gist of the cause, at most 78 characters.
    static func email(_ summary: ProviderPayloads.Summary, _ send: NotificationGroups.Send, nowMs: Int64) -> String {
        let subject =
            summary.isTest
            ? ProviderPayloads.clip(summary.title, 78)
            : summary.firing
                ? ProviderPayloads.clip("DOWN \(summary.source ?? summary.title): \(summary.gist)", 78)
                : ProviderPayloads.clip("RESOLVED \(summary.title)" + (summary.downFor.map { " (down \($0))" } ?? ""), 78)
        var text = "\(summary.headline)\n\n\(summary.causeLabel): \(summary.cause)\n"
        if let since = summary.since { text += "\n\(since)\n" }
        if let vendor = summary.vendor { text += "Vendor: \(vendor)\n" }
        text += "Alerts: \(summary.rules) (\(summary.severity))\nStatus page: \(summary.link)\n\n-- \nLookout\n"
        func escape(_ value: String) -> String {
            value.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
                .replacingOccurrences(of: "\"", with: "&quot;")
        }
        let color = summary.color
        var html = "<!doctype html><html><body style=\"font-family: sans-serif\">"
        html += "<h2 style=\"color: \(color)\">\(escape(summary.headline))</h2><p><strong>\(summary.causeLabel):</strong> \(escape(summary.cause))</p>"
        if let since = summary.since { html += "<p>\(escape(since))</p>" }
        if let vendor = summary.vendor { html += "<p><strong>Vendor:</strong> \(escape(vendor))</p>" }
        html += "<p><strong>Alerts:</strong> \(escape(summary.rules)) (\(escape(summary.severity)))</p>"
        html += "<p><a href=\"\(escape(summary.link))\">Status page</a></p></body></html>"
        return JSONText.ordered([("subject", .string(subject)), ("text", .string(text)), ("html", .string(html))]).rendered
    }
}
