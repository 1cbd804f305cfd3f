import Foundation
import Logging
import LookoutCore

/// Where a hook template that cannot be used is told (payloads are made outside any service).
let templateLogger = Logger(label: "lookout.hooks")

/// The body each hook type sends for one grouped notification, in the provider's documented
/// format: Alertmanager's webhook payload, a Slack Block Kit message, a Teams Adaptive Card, a
/// PagerDuty Events API v2 event, a Discord embed, an ntfy JSON message. Secrets stay out: the
/// PagerDuty routing key is added at delivery (`withRoutingKey`), so outbox rows never hold it.
package enum ProviderPayloads {
    /// What every provider's message says, worked out once.
    struct Summary {
        var firing: Bool
        /// "acme is down" / "acme recovered", or the rule's summary for service-wide alerts.
        var title: String
        /// The upstream's cause (the alerts' description), or the summary, whole: for email, the
        /// webhook and PagerDuty's details, which have room for it.
        var cause: String
        /// The cause without its "Error while probing NAME: " opening, which a line that starts
        /// with the source's name would repeat ("the server answered 503. The server said: …"),
        /// and at most `Summary.causeLimit` characters, so what follows it in a chat message or a
        /// push is never cut off.
        var gist: String
        /// The line a lock screen shows first: "payments down since 12:03 UTC", "payments
        /// recovered after 12m", or the title when there is no outage to tell.
        var headline: String
        var downSince: String?
        var downFor: String?
        /// When the outage began, as a lock screen shows it: `19:10 UTC` on the day of sending,
        /// `23 Nov 2026 19:10 UTC` before.
        var downSinceText: String?
        /// The outage is less than a minute old: "Down since 19:10 UTC", not "Down for 0s".
        var underAMinute: Bool
        var rules: String
        /// " (Lookout was not running for 2h 14m of it)", or "".
        var notRunning: String
        var severity: String
        var link: String
        var source: String?

        init(_ send: NotificationGroups.Send, externalURL: String, nowMs: Int64) {
            let alerts = send.alerts
            let first = alerts.first
            let annotations = first.map { Payloads.annotations($0, externalURL: externalURL, nowMs: nowMs) } ?? [:]
            firing = send.status == "firing"
            source = alerts.compactMap(\.source).first
            let subject = source ?? (first?.summary ?? "Lookout")
            if let source {
                title = firing ? "\(source) is down" : "\(source) recovered"
            } else {
                title = firing ? subject : "Resolved: \(subject)"
            }
            let cause = annotations["description"] ?? first?.summary ?? ""
            self.cause = cause
            gist = clip(source.map { ProbeResult.withoutOpening(cause, source: $0) } ?? cause, Summary.causeLimit)
            downSince = annotations["down_since"]
            downFor = annotations["down_for"]
            let sinceMs = downSince.flatMap(Timestamp.parseRFC3339)
            downSinceText = sinceMs.map { since in
                Timestamp.day(since) == Timestamp.day(nowMs) ? Timestamp.clock(since) : Timestamp.day(since) + " " + Timestamp.clock(since)
            }
            // As `down_for` is worked out (Payloads.annotations), in milliseconds.
            underAMinute = sinceMs.map { (first?.resolvedAtMs ?? nowMs) - $0 < HealthWindow.minute } ?? false
            headline = switch (source, firing) {
            case (let source?, true): downSinceText.map { "\(source) down since \($0)" } ?? "\(source) is down"
            case (let source?, false): downFor.map { "\(source) recovered after \($0)" } ?? "\(source) recovered"
            case (nil, _): title
            }
            notRunning = first.map(AlertService.notRunningNote) ?? ""
            rules = alerts.map(\.rule).joined(separator: ", ")
            let order = ["critical", "warning", "info"]
            severity = alerts.map(\.severity).min { (order.firstIndex(of: $0) ?? 3) < (order.firstIndex(of: $1) ?? 3) } ?? "critical"
            link = annotations["status_page"] ?? "\(externalURL)/"
        }

        /// The most of an upstream's words a message carries: every provider's limit leaves room
        /// for the lines after it (when the outage began, the alerts).
        static let causeLimit = 500

        /// "Down for 4m, since 19:10 UTC" ("Down since 19:10 UTC" in its first minute, rather
        /// than "Down for 0s") / "Was down for 12m", and "(Lookout was not running for 2h 14m of
        /// it)" when part of that nobody looked.
        var since: String? {
            guard let downFor else { return nil }
            let at = downSinceText ?? downSince ?? "?"
            let since = !firing ? "Was down for \(downFor)" : underAMinute ? "Down since \(at)" : "Down for \(downFor), since \(at)"
            return since + notRunning
        }

        /// The headline and the cause in one line, "payments down since 12:03 UTC: the server
        /// answered 503", or the headline alone when the cause would only repeat it (a
        /// service-wide alert without a description of its own).
        var headlineAndGist: String {
            gist.isEmpty || gist == headline || gist == title ? headline : "\(headline): \(gist)"
        }

        /// `lookout hooks test`'s notification: neutral everywhere (no red, no siren), "Test" first.
        var isTest: Bool { rules == HookTest.rule }
        /// The mark a chat line starts with: 🔴 firing, ✅ resolved, 🧪 a test.
        var mark: String { isTest ? "🧪" : firing ? "🔴" : "✅" }
        /// The colour of the state, as hex: red firing, green resolved, grey a test.
        var colorHex: Int { isTest ? 0x6E7781 : firing ? 0xCF222E : 0x1A7F37 }
        var color: String { "#" + String(colorHex, radix: 16) }

        /// "Cause" while firing, "Cause was" once resolved: a green message must not read as a
        /// failure happening now.
        var causeLabel: String { firing ? "Cause" : "Cause was" }
    }

    /// The stable id of a group across replicas and restarts: PagerDuty's `dedup_key`, so two
    /// Lookout replicas raise one incident.
    package static func dedupKey(_ groupLabels: [String: String]) -> String {
        let text = groupLabels.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "\u{1F}")
        let digits = String(ProbeScheduler.stableHash(text), radix: 16)
        return "lookout-" + String(repeating: "0", count: 16 - digits.count) + digits
    }

    static func body(for hook: HookConfig, _ send: NotificationGroups.Send, externalURL: String, nowMs: Int64) -> String {
        let summary = Summary(send, externalURL: externalURL, nowMs: nowMs)
        switch hook.type {
        case .webhook where hook.template != nil || !hook.headerTemplates.isEmpty:
            return templated(hook, summary, send, externalURL: externalURL)
        case .webhook, .alertmanager:
            return Payloads.webhook(
                status: send.status, alerts: send.alerts, groupLabels: send.groupLabels, receiver: hook.name, externalURL: externalURL, nowMs: nowMs)
        case .slack: return slack(summary)
        case .teams: return teams(summary)
        case .pagerduty: return pagerDuty(summary, send, nowMs: nowMs)
        case .discord: return discord(summary, nowMs: nowMs)
        case .ntfy: return ntfy(summary, topic: topic(of: hook.url))
        case .email: return email(summary, send, nowMs: nowMs)
        }
    }

    /// What a webhook's templates see.
    static func fields(_ summary: Summary, _ send: NotificationGroups.Send, externalURL: String) -> [String: Any] {
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
    static func templated(_ hook: HookConfig, _ summary: Summary, _ send: NotificationGroups.Send, externalURL: String) -> String {
        let fields = fields(summary, send, externalURL: externalURL)
        let plain = Payloads.webhook(status: send.status, alerts: send.alerts, groupLabels: send.groupLabels, receiver: hook.name, externalURL: externalURL, nowMs: 0)
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
        let body = hook.template.flatMap { rendered($0, "template") } ?? plain
        guard !hook.headerTemplates.isEmpty else { return body }
        // Header values cannot hold line breaks: they would start a header of their own.
        let headers = hook.headerTemplates.sorted { $0.key < $1.key }.map { name, text in
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

    /// Cuts `text` to `limit` characters, marking the cut.
    static func clip(_ text: String, _ limit: Int) -> String {
        text.count <= limit ? text : String(text.prefix(limit - 1)) + "…"
    }

    /// Cuts `text` to `limit` bytes of UTF-8 (ntfy counts bytes), at a character's end.
    static func clip(_ text: String, bytes limit: Int) -> String {
        guard text.utf8.count > limit else { return text }
        guard limit >= 3 else { return "" }  // not even the "…"
        var kept = ""
        var used = 3  // the "…"
        for character in text {
            used += character.utf8.count
            guard used <= limit else { break }
            kept.append(character)
        }
        return kept + "…"
    }

    /// Text for Slack's mrkdwn (and a message's `text`, which Slack parses the same way): `&`, `<`
    /// and `>` are its control characters, so an upstream's "<!channel>" or "<https://x|y>" stays
    /// text instead of paging a channel or hiding a link.
    static func slackText(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
    }

    /// Text for Discord's markdown: each character that marks something up within a line is
    /// backslash-escaped (bold, italics, strikes, spoilers, code, links, mentions), so an
    /// upstream's "[Reset](https://…)" or "**" stays text; mentions are also off for the whole
    /// message (`allowed_mentions`). Line-start markup cannot occur: upstream text has no line
    /// breaks (`PrintableText`) and every line starts with Lookout's own words.
    static func discordText(_ text: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count)
        var inURL = false
        for (index, character) in zip(text.indices, text) {
            // A URL is left as it is (Discord links it, and a backslash in it would break the
            // link); it shows where it goes, so it hides nothing. It ends at a space.
            if character == " " {
                inURL = false
            } else if !inURL, character == "h", text[index...].hasPrefix("http://") || text[index...].hasPrefix("https://") {
                inURL = true
            }
            if !inURL, "\\*_~`|[]<@".contains(character) { escaped.append("\\") }
            escaped.append(character)
        }
        return escaped
    }

    /// Slack incoming webhook: a coloured attachment (red firing, green resolved) holding Block
    /// Kit blocks; `text` is what notifications and screen readers show.
    static func slack(_ summary: Summary) -> String {
        let emoji = summary.mark
        var lines: [String] = []
        if let since = summary.since { lines.append(slackText(since)) }
        lines.append("*\(summary.causeLabel):* \(slackText(summary.gist))")
        lines.append("*Alerts:* \(slackText(summary.rules)) (\(slackText(summary.severity)))")
        let blocks: [JSONText] = [
            .ordered([("type", .string("header")), ("text", .ordered([("type", .string("plain_text")), ("text", .string(clip("\(emoji) \(summary.headline)", 150)))]))]),
            .ordered([("type", .string("section")), ("text", .ordered([("type", .string("mrkdwn")), ("text", .string(clip(lines.joined(separator: "\n"), 3000)))]))]),
            .ordered([
                ("type", .string("actions")),
                ("elements", .array([.ordered([
                    ("type", .string("button")), ("text", .ordered([("type", .string("plain_text")), ("text", .string("Status page"))])),
                    ("url", .string(summary.link)),
                ])])),
            ]),
        ]
        // What a phone's notification shows: where, since when, and what the upstream said.
        let text = summary.firing ? "\(emoji) \(summary.headlineAndGist)" : "\(emoji) \(summary.headline)"
        return JSONText.ordered([
            ("text", .string(clip(slackText(text), 3000))),
            ("attachments", .array([.ordered([("color", .string(summary.color)), ("blocks", .array(blocks))])])),
        ]).rendered
    }

    /// Teams Workflows webhook ("When a Teams webhook request is received"): a message with one
    /// Adaptive Card 1.4 attachment.
    static func teams(_ summary: Summary) -> String {
        var facts: [JSONText] = [.ordered([("title", .string("Alerts")), ("value", .string("\(summary.rules) (\(summary.severity))"))])]
        if let since = summary.since { facts.insert(.ordered([("title", .string("Outage")), ("value", .string(since))]), at: 0) }
        // The upstream's words in a RichTextBlock: its TextRuns are plain text, where a
        // TextBlock would render an upstream's "[x](https://…)" as a link.
        let cause: JSONText = .ordered([
            ("type", .string("RichTextBlock")),
            ("inlines", .array([
                .ordered([("type", .string("TextRun")), ("text", .string("\(summary.causeLabel): ")), ("weight", .string("Bolder"))]),
                .ordered([("type", .string("TextRun")), ("text", .string(summary.gist))]),
            ])),
        ])
        let card: JSONText = .ordered([
            ("$schema", .string("http://adaptivecards.io/schemas/adaptive-card.json")),
            ("type", .string("AdaptiveCard")),
            ("version", .string("1.4")),
            ("body", .array([
                .ordered([
                    ("type", .string("TextBlock")), ("text", .string(summary.headline)), ("weight", .string("Bolder")), ("size", .string("Medium")),
                    ("color", .string(summary.isTest ? "Default" : summary.firing ? "Attention" : "Good")), ("wrap", .bool(true)),
                ]),
                cause,
                .ordered([("type", .string("FactSet")), ("facts", .array(facts))]),
            ])),
            ("actions", .array([.ordered([("type", .string("Action.OpenUrl")), ("title", .string("Status page")), ("url", .string(summary.link))])])),
        ])
        return JSONText.ordered([
            ("type", .string("message")),
            ("attachments", .array([.ordered([("contentType", .string("application/vnd.microsoft.card.adaptive")), ("contentUrl", .null), ("content", card)])])),
        ]).rendered
    }

    /// PagerDuty Events API v2: `trigger` or `resolve`, one PagerDuty incident per group.
    static func pagerDuty(_ summary: Summary, _ send: NotificationGroups.Send, nowMs: Int64) -> String {
        let key = dedupKey(send.groupLabels)
        guard summary.firing else {
            return JSONText.ordered([("event_action", .string("resolve")), ("dedup_key", .string(key))]).rendered
        }
        let severity = ["critical": "critical", "warning": "warning", "info": "info"][summary.severity] ?? "error"
        var details: [(String, JSONText)] = [("cause", .string(summary.cause)), ("alerts", .string(summary.rules))]
        if let downSince = summary.downSince { details.append(("down_since", .string(downSince))) }
        return JSONText.ordered([
            ("event_action", .string("trigger")),
            ("dedup_key", .string(key)),
            ("payload", .ordered([
                ("summary", .string(clip(summary.headlineAndGist, 1024))),
                ("source", .string(summary.source ?? "lookout")),
                ("severity", .string(severity)),
                // When the outage began, not when a rule's `for` let the alert fire.
                // (A rule's own down_since annotation may hold anything: only a time passes.)
                ("timestamp", .string(Timestamp.rfc3339(summary.downSince.flatMap(Timestamp.parseRFC3339) ?? send.alerts.first?.startedAtMs ?? nowMs))),
                ("component", .string(summary.source ?? "lookout")),
                ("class", .string(summary.rules)),
                ("custom_details", .ordered(details)),
            ])),
            ("links", .array([.ordered([("href", .string(summary.link)), ("text", .string("Lookout status page"))])])),
            ("client", .string("Lookout")),
            ("client_url", .string(summary.link)),
        ]).rendered
    }

    /// The body with PagerDuty's routing key first, added at delivery.
    package static func withRoutingKey(_ body: String, _ key: String) -> String {
        guard body.hasPrefix("{") else { return body }
        return "{\"routing_key\":" + JSONText.string(key).rendered + "," + body.dropFirst()
    }

    /// Discord webhook: one embed, red or green; `content` is what a push notification shows.
    /// Mentions are off (`allowed_mentions`), so no upstream text can ping anyone.
    static func discord(_ summary: Summary, nowMs: Int64) -> String {
        var fields: [JSONText] = [
            .ordered([("name", .string("Alerts")), ("value", .string(clip(discordText("\(summary.rules) (\(summary.severity))"), 1024))), ("inline", .bool(true))])
        ]
        if let since = summary.since {
            fields.insert(.ordered([("name", .string("Outage")), ("value", .string(clip(discordText(since), 1024))), ("inline", .bool(true))]), at: 0)
        }
        let content = summary.firing ? "\(summary.mark) \(summary.headlineAndGist)" : "\(summary.mark) \(summary.headline)"
        return JSONText.ordered([
            ("content", .string(clip(discordText(content), 2000))),
            ("allowed_mentions", .ordered([("parse", .array([]))])),
            ("embeds", .array([.ordered([
                ("title", .string(clip(summary.headline, 256))),
                ("description", .string(clip(discordText("\(summary.causeLabel): \(summary.gist)"), 4096))),
                ("url", .string(summary.link)),
                ("color", .int(Int64(summary.colorHex))),
                ("fields", .array(fields)),
                ("timestamp", .string(Timestamp.rfc3339(nowMs))),
            ])])),
        ]).rendered
    }

    /// ntfy's JSON publishing, sent to the server's root URL; the topic is the hook URL's last
    /// path component (`https://ntfy.sh/oncall` → `oncall`).
    static func ntfy(_ summary: Summary, topic: String) -> String {
        let priority = summary.firing && !summary.isTest ? (summary.severity == "critical" ? 5 : summary.severity == "warning" ? 4 : 3) : 3
        // The title and the body's first lines are what a lock screen shows: where and since
        // when, then what the upstream said.
        var message = "\(summary.causeLabel): \(summary.gist)"
        if let since = summary.since { message += "\n\(since)" }
        return JSONText.ordered([
            ("topic", .string(topic)),
            ("title", .string(summary.headline)),
            ("message", .string(clip(message, bytes: 4096))),
            ("priority", .int(Int64(priority))),
            ("tags", .array([.string(summary.isTest ? "test_tube" : summary.firing ? "rotating_light" : "white_check_mark")])),
            ("click", .string(summary.link)),
        ]).rendered
    }

    /// An email, kept in the outbox as `{"subject", "text", "html"}` and sent as one
    /// multipart/alternative message. The subject fits a phone's notification: state, source and
    /// the gist of the cause, at most 78 characters.
    static func email(_ summary: Summary, _ send: NotificationGroups.Send, nowMs: Int64) -> String {
        let subject = summary.isTest ? clip(summary.title, 78) : summary.firing ? clip("DOWN \(summary.source ?? summary.title): \(summary.gist)", 78) : clip("RESOLVED \(summary.title)" + (summary.downFor.map { " (down \($0))" } ?? ""), 78)
        var text = "\(summary.headline)\n\n\(summary.causeLabel): \(summary.cause)\n"
        if let since = summary.since { text += "\n\(since)\n" }
        text += "Alerts: \(summary.rules) (\(summary.severity))\nStatus page: \(summary.link)\n\n-- \nLookout\n"
        func escape(_ value: String) -> String {
            value.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
                .replacingOccurrences(of: "\"", with: "&quot;")
        }
        let color = summary.color
        var html = "<!doctype html><html><body style=\"font-family: sans-serif\">"
        html += "<h2 style=\"color: \(color)\">\(escape(summary.headline))</h2><p><strong>\(summary.causeLabel):</strong> \(escape(summary.cause))</p>"
        if let since = summary.since { html += "<p>\(escape(since))</p>" }
        html += "<p><strong>Alerts:</strong> \(escape(summary.rules)) (\(escape(summary.severity)))</p>"
        html += "<p><a href=\"\(escape(summary.link))\">Status page</a></p></body></html>"
        return JSONText.ordered([("subject", .string(subject)), ("text", .string(text)), ("html", .string(html))]).rendered
    }

    static func topic(of url: String) -> String {
        URLComponents(string: url)?.path.split(separator: "/").last.map(String.init) ?? "lookout"
    }

    /// Where a hook's request goes: Alertmanager's API path, ntfy's root, or the hook's URL.
    package static func deliveryURL(_ hook: HookConfig) -> String {
        switch hook.type {
        case .alertmanager: return hook.url.trimmingSuffix("/") + "/api/v2/alerts"
        case .ntfy:
            guard var components = URLComponents(string: hook.url) else { return hook.url }
            let parts = components.path.split(separator: "/")
            components.path = "/" + parts.dropLast().joined(separator: "/")
            return components.string ?? hook.url
        default: return hook.url
        }
    }
}
