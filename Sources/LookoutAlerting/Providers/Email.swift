import Foundation
import LookoutCore
import ResilientHTTP

/// Email through an SMTP relay: the outbox keeps `{"subject", "text", "html"}`, sent as one
/// multipart/alternative message.
enum EmailProvider: NotificationProvider {
    static let type: HookType = "email"
    static let ownKeys = ["from", "to", "username", "password", "password_file", "starttls", "ca_file"]
    static let urlDescription = "SMTP"

    /// The sender, the recipients, the relay's login and how it is trusted.
    struct Settings: ProviderSettings {
        var from = ""
        var to: [String] = []
        var username: String?
        /// From `password_file` or `${ENV}`; never logged or stored.
        var password: String?
        /// STARTTLS required on smtp:// (default): the message and password never go in the clear.
        var startTLS = true
        var caFile: String?
    }

    static func urlProblem(_ url: String) -> String? {
        guard let parts = URLParts(url), ["smtp", "smtps"].contains(parts.scheme.lowercased()), parts.host?.isEmpty == false else {
            return "\"\(url)\" is not an SMTP URL (use smtp://host:587 with STARTTLS, or smtps://host:465)"
        }
        return nil
    }

    static func read(_ keys: inout HookKeys, into hook: inout HookConfig) {
        var mail = Settings()
        if let from = keys.string("from") {
            if isMailAddress(from) { mail.from = from } else { keys.problem("from", "\"\(from)\" is not a mail address") }
        } else {
            keys.require("from", "the sender's address")
        }
        if let list = keys.strings("to") {
            for address in list where !isMailAddress(address) { keys.problem("to", "\"\(address)\" is not a mail address") }
            mail.to = list
            if list.isEmpty { keys.problem("to", "must list at least one recipient") }
        } else {
            keys.require("to", "the recipients")
        }
        mail.username = keys.string("username")
        if keys.has("password_file") || keys.has("password") { mail.password = keys.secret(inline: "password", file: "password_file") }
        if let flag = keys.bool("starttls") { mail.startTLS = flag }
        mail.caFile = keys.filePath("ca_file")
        hook.settings = HookSettings(mail)
    }

    static let delivery = NotificationDelivery.own { payload, hook in
        let outcome = await mail(payload, hook)
        return OwnDelivery(reply: "SMTP \(outcome.replyCode)", error: outcome.error.map { "the mail server refused the message: \($0)" })
    }

    /// `name@host`: one @, something on both sides, no spaces, brackets or line breaks.
    static func isMailAddress(_ text: String) -> Bool {
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else { return false }
        return !text.contains { $0.isWhitespace || "<>,;\"".contains($0) }
    }

    /// Sends an outbox row through the hook's SMTP server.
    static func mail(_ payload: String, _ hook: HookConfig) async -> SMTPSender.Outcome {
        let object = (try? JSONSerialization.jsonObject(with: Data(payload.utf8))) as? [String: String] ?? [:]
        let mail = hook.settings.get(Settings.self) ?? Settings()
        let message = MailMessage(
            from: mail.from, to: mail.to, subject: object["subject"] ?? "Lookout", text: object["text"] ?? payload, html: object["html"] ?? "",
            mailer: LookoutVersion.userAgent)
        let server = SMTPServer(
            url: hook.url, username: mail.username, password: mail.password, startTLS: mail.startTLS, caFile: mail.caFile)
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
