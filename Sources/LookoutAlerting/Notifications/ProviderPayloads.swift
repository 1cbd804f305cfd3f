import Foundation
import Logging
import LookoutCore
import ResilientHTTP

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
        /// What the source's vendor says on its own status page (`vendor_status`), as of sending.
        var vendor: String?

        init(_ send: NotificationGroups.Send, externalURL: String, nowMs: Int64) {
            let alerts = send.alerts
            let first = alerts.first
            let annotations = first.map { Payloads.annotations($0, externalURL: externalURL, nowMs: nowMs) } ?? [:]
            firing = send.status == "firing"
            source = alerts.compactMap(\.source).first
            let subject = source ?? (first?.summary ?? "Lookout")
            let outage = alerts.contains(where: \.isAboutOutage)
            if let source, outage {
                title = firing ? "\(source) is down" : "\(source) recovered"
            } else if !outage, let summary = first?.summary {
                title = firing ? summary : "Resolved: \(summary)"
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
            headline =
                switch (outage ? source : nil, firing) {
                case (let source?, true): downSinceText.map { "\(source) down since \($0)" } ?? "\(source) is down"
                case (let source?, false): downFor.map { "\(source) recovered after \($0)" } ?? "\(source) recovered"
                case (nil, _): title
                }
            notRunning = first.map(AlertService.notRunningNote) ?? ""
            rules = alerts.map(\.rule).joined(separator: ", ")
            let order = ["critical", "warning", "info"]
            severity = alerts.map(\.severity).min { (order.firstIndex(of: $0) ?? 3) < (order.firstIndex(of: $1) ?? 3) } ?? "critical"
            link = annotations["status_page"] ?? "\(externalURL)/"
            vendor = annotations["vendor"].map { clip($0, 300) }
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

    /// The body `hook` gets for one grouped notification, from its provider (`Providers/`).
    static func body(for hook: HookConfig, _ send: NotificationGroups.Send, externalURL: String, nowMs: Int64) -> String {
        NotificationProviders.provider(hook).body(
            Summary(send, externalURL: externalURL, nowMs: nowMs), send, hook: hook, externalURL: externalURL, nowMs: nowMs)
    }

    /// Cuts `text` to `limit` characters, marking the cut.
    /// Text for a provider that reads HTML (Telegram, Matrix, Google Chat cards): `&`, `<`, `>`
    /// and quotes escaped, so an upstream's "<a href=…>" or "</b>" stays text.
    static func htmlText(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            default: out.append(character)
            }
        }
        return out
    }

    /// The lines a chat message shows under its headline: since when, the cause in the
    /// upstream's words, the vendor's word, the alerts; `bold` marks a label up.
    static func lines(_ summary: Summary, escape: (String) -> String, bold: (String) -> String) -> [String] {
        var lines: [String] = []
        lines.append("\(bold(summary.causeLabel + ":")) \(escape(summary.gist))")
        if let since = summary.since { lines.append(escape(since)) }
        if let vendor = summary.vendor { lines.append("\(bold("Vendor:")) \(escape(vendor))") }
        lines.append("\(bold("Alerts:")) \(escape(summary.rules)) (\(escape(summary.severity)))")
        return lines
    }

    /// A number from a JSON answer's field path (`parameters.retry_after`), as a wait in
    /// `unit` seconds; nil when absent, not a number, negative or over an hour.
    static func waitField(_ answer: TransferResult, _ path: [String], unit: Double = 1) -> Duration? {
        guard answer.body.count <= 65_536, var node = try? JSONSerialization.jsonObject(with: Data(answer.body)) else { return nil }
        for key in path {
            guard let object = node as? [String: Any], let next = object[key] else { return nil }
            node = next
        }
        guard let number = (node as? NSNumber)?.doubleValue, number.isFinite, number >= 0 else { return nil }
        return Duration.clamping(seconds: min(number * unit, 3600))
    }

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
}
