import Foundation
import LookoutCore

/// The two notification formats: Alertmanager's webhook payload (version "4"), which every
/// receiver written for Alertmanager understands, and Alertmanager's own `POST /api/v2/alerts`.
package enum Payloads {
    /// How long a firing alert pushed to Alertmanager stays valid without being sent again.
    package static let alertmanagerValidity: Int64 = 5 * 60_000

    /// Alertmanager's webhook payload for one group: its alerts, the labels they all share, and
    /// the group's own labels.
    package static func webhook(
        status: String, alerts: [Alert], groupLabels: [String: String], receiver: String, externalURL: String, nowMs: Int64
    ) -> String {
        let entries: [JSONText] = alerts.map { alert in
            .ordered([
                ("status", .string(alert.firing ? "firing" : "resolved")),
                ("labels", object(alert.labels)),
                ("annotations", object(annotations(alert, externalURL: externalURL, nowMs: nowMs))),
                ("startsAt", .string(Timestamp.rfc3339(alert.startedAtMs))),
                ("endsAt", .string(alert.resolvedAtMs.map(Timestamp.rfc3339) ?? "0001-01-01T00:00:00Z")),
                ("generatorURL", .string(generatorURL(alert, externalURL: externalURL))),
                ("fingerprint", .string(alert.fingerprint)),
            ])
        }
        let groupKey = "{}:{" + groupLabels.sorted { $0.key < $1.key }.map { "\($0.key)=\"\($0.value)\"" }.joined(separator: ",") + "}"
        return JSONText.ordered([
            ("version", .string("4")),
            ("groupKey", .string(groupKey)),
            ("truncatedAlerts", .int(0)),
            ("status", .string(status)),
            ("receiver", .string(receiver)),
            ("groupLabels", object(groupLabels)),
            ("commonLabels", object(common(alerts.map(\.labels)))),
            ("commonAnnotations", object(common(alerts.map { annotations($0, externalURL: externalURL, nowMs: nowMs) }))),
            ("externalURL", .string(externalURL)),
            ("alerts", .array(entries)),
        ]).rendered
    }

    /// The pairs every dictionary has.
    static func common(_ dictionaries: [[String: String]]) -> [String: String] {
        guard var shared = dictionaries.first else { return [:] }
        for dictionary in dictionaries.dropFirst() { shared = shared.filter { dictionary[$0.key] == $0.value } }
        return shared
    }

    /// Postable alerts: firing ones carry an `endsAt` a few minutes ahead and are sent again
    /// before it lapses; resolved ones carry the time they resolved.
    package static func alertmanager(_ changes: [AlertChange], externalURL: String, nowMs: Int64) -> String {
        JSONText.array(
            changes.map { change in
                let alert = change.alert
                let ends = alert.resolvedAtMs ?? (nowMs + alertmanagerValidity)
                return .ordered([
                    ("labels", object(alert.labels)),
                    ("annotations", object(annotations(alert, externalURL: externalURL, nowMs: nowMs))),
                    ("startsAt", .string(Timestamp.rfc3339(alert.startedAtMs))),
                    ("endsAt", .string(Timestamp.rfc3339(ends))),
                    ("generatorURL", .string(generatorURL(alert, externalURL: externalURL))),
                ])
            }
        ).rendered
    }

    /// The alert's annotations plus a link to its source on the status page and, while its
    /// source is down, for how long as of sending (`down_for`, e.g. "4m"; resolved ones say how
    /// long the outage lasted).
    static func annotations(_ alert: Alert, externalURL: String, nowMs: Int64) -> [String: String] {
        var annotations = alert.annotations
        if let source = alert.source { annotations["status_page"] = "\(externalURL)/#source-\(source)" }
        if let since = annotations["down_since"].flatMap(Timestamp.parseRFC3339) {
            annotations["down_for"] = Timestamp.human((alert.resolvedAtMs ?? nowMs) - since)
        }
        return annotations
    }

    static func generatorURL(_ alert: Alert, externalURL: String) -> String {
        alert.source.map { "\(externalURL)/api/v1/sources/\($0)" } ?? "\(externalURL)/"
    }

    static func object(_ dictionary: [String: String]) -> JSONText {
        .ordered(dictionary.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) })
    }
}
