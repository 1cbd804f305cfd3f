import Foundation
import Logging
import LookoutCore

/// A plain webhook: Alertmanager's webhook payload (version 4), or with `template` and `headers`
/// the body and headers the user wrote in Mustache.
enum WebhookProvider: NotificationProvider {
    static let type = HookType.webhook
    static let ownKeys = ["template", "headers"]

    /// A Mustache template of the body (nil: Alertmanager's webhook payload), and of extra
    /// headers; checked when the config is read.
    struct Settings: ProviderSettings {
        var template: String?
        var headerTemplates: [String: String] = [:]
    }

    static func read(_ keys: inout HookKeys, into hook: inout HookConfig) {
        var settings = Settings()
        if let text = keys.string("template") {
            settings.template = text
            if let message = HookTemplate.problem(text) { keys.problem("template", message) }
        }
        if let values = keys.stringMap("headers") {
            settings.headerTemplates = values
            for (header, text) in values.sorted(by: { $0.key < $1.key }) {
                if let message = HookTemplate.problem(text) { keys.problem("headers", message, entry: header) }
            }
        }
        if settings != Settings() { hook.settings = HookSettings(settings) }
    }

    static func body(_ summary: ProviderPayloads.Summary, _ send: NotificationGroups.Send, hook: HookConfig, externalURL: String, nowMs: Int64) -> String {
        hook.settings.get(Settings.self) != nil
            ? templated(hook, summary, send, externalURL: externalURL)
            : Payloads.webhook(
                status: send.status, alerts: send.alerts, groupLabels: send.groupLabels, receiver: hook.name, externalURL: externalURL, nowMs: nowMs)
    }

    /// What a webhook's templates see.
    static func fields(_ summary: ProviderPayloads.Summary, _ send: NotificationGroups.Send, externalURL: String) -> [String: Any] {
        var fields: [String: Any] = [
            "status": send.status, "firing": summary.firing, "title": summary.title, "headline": summary.headline, "cause": summary.cause,
            "gist": summary.gist, "severity": summary.severity,
            "rules": summary.rules, "link": summary.link, "external_url": externalURL, "group_labels": send.groupLabels,
        ]
        if let source = summary.source { fields["source"] = source }
        if let downSince = summary.downSince { fields["down_since"] = downSince }
        if let downFor = summary.downFor { fields["down_for"] = downFor }
        if let since = summary.since { fields["since"] = since }
        for (key, value) in fields { if let text = value as? String { fields[key + "_json"] = JSONText.string(text).rendered } }
        fields["alerts"] = send.alerts.map { alert -> [String: Any] in
            var entry: [String: Any] = [
                "rule": alert.rule, "severity": alert.severity, "summary": alert.summary, "fingerprint": alert.fingerprint,
                "starts_at": Timestamp.rfc3339(alert.startedAtMs), "labels": alert.labels, "annotations": alert.annotations,
            ]
            if let source = alert.source { entry["source"] = source }
            if let resolved = alert.resolvedAtMs { entry["ends_at"] = Timestamp.rfc3339(resolved) }
            for (key, value) in entry { if let text = value as? String { entry[key + "_json"] = JSONText.string(text).rendered } }
            return entry
        }
        return fields
    }

    /// A webhook with `template` and `headers`: the rendered body, with rendered headers in front
    /// (`headerPrefix`, taken apart again at delivery: the outbox keeps one text per row).
    static func templated(_ hook: HookConfig, _ summary: ProviderPayloads.Summary, _ send: NotificationGroups.Send, externalURL: String) -> String {
        let fields = fields(summary, send, externalURL: externalURL)
        let plain = Payloads.webhook(
            status: send.status, alerts: send.alerts, groupLabels: send.groupLabels, receiver: hook.name, externalURL: externalURL, nowMs: 0)
        // A template over its budget must not cost the notification: the hook gets Alertmanager's
        // payload instead, and the log says why.
        func rendered(_ text: String, _ what: String) -> String? {
            switch HookTemplate.render(text, fields) {
            case .success(let output): return output
            case .failure(let problem):
                templateLogger.error("hook template not used", metadata: ["hook": "\(hook.name)", "part": "\(what)", "problem": "\(problem.message)"])
                return nil
            }
        }
        let settings = hook.settings.get(Settings.self) ?? Settings()
        let body = settings.template.flatMap { rendered($0, "template") } ?? plain
        guard !settings.headerTemplates.isEmpty else { return body }
        // Header values cannot hold line breaks: they would start a header of their own.
        let headers = settings.headerTemplates.sorted { $0.key < $1.key }.map { name, text in
            (name, JSONText.string((rendered(text, "headers.\(name)") ?? "").filter { $0 != "\r" && $0 != "\n" }))
        }
        return headerPrefix + JSONText.ordered(headers).rendered + "\n" + body
    }

    /// Marks an outbox payload that carries its own headers on its first line.
    static let headerPrefix = "\u{1}headers "

    /// The headers and body of an outbox payload.
    package static func split(_ payload: String) -> (headers: [(name: String, value: String)], body: String) {
        guard payload.hasPrefix(headerPrefix), let newline = payload.firstIndex(of: "\n") else { return ([], payload) }
        let json = payload[payload.index(payload.startIndex, offsetBy: headerPrefix.count)..<newline]
        let object = (try? JSONSerialization.jsonObject(with: Data(json.utf8))) as? [String: String] ?? [:]
        return (object.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }, String(payload[payload.index(after: newline)...]))
    }
}
