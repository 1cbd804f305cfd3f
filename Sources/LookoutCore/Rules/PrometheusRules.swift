/// Alert rules as a Prometheus rule file, for those who alert from Prometheus instead of
/// Lookout's own hooks: `deploy/lookout-rules.yml` is this text for the default rules, and
/// `lookout rules` writes it for a config's rules (the defaults as `alerts.defaults` changes
/// them; rules of its own have no PromQL and are left out).
///
/// A paging rule of a source (critical or warning) fires only while the source is down, as
/// Lookout's own do: its PromQL is gated by `and on(source) lookout_source_down == 1`.
package enum PrometheusRules {
    /// The rule file for `rules` (those without `promQL` are left out).
    package static func yaml(_ rules: [AlertRule]) -> String {
        var text = """
            # Lookout's alert rules as Prometheus rules, written by `lookout rules` from the same rule set
            # Lookout evaluates (do not edit: regenerate). Use one path, not both: with both, every alert
            # arrives twice. A source's paging rules fire only while it is down (lookout_source_down, its
            # outage policy) and resolve when it is up again, as Lookout's own do. Lookout's rules also wait
            # until a window is covered by history and hold back a source's alerts while a source it
            # depends_on is down; these cannot.
            groups:
              - name: lookout
                rules:

            """
        for rule in rules {
            guard let promQL = rule.promQL else { continue }
            let gated = rule.followsOutage && rule.expression.perSource && !promQL.contains("lookout_source_down")
            text += "      - alert: \(rule.name)\n"
            // A block scalar: PromQL's quotes and braces need no escaping in it.
            text += "        expr: |-\n          \(gated ? "(\(promQL)) and on(source) lookout_source_down == 1" : promQL)\n"
            if rule.forDuration > .zero { text += "        for: \(ConfigValues.format(rule.forDuration))\n" }
            var labels = rule.labels
            labels["severity"] = rule.severity
            text += "        labels: {" + labels.sorted { $0.key < $1.key }.map { "\($0.key): \(quoted($0.value))" }.joined(separator: ", ") + "}\n"
            let annotations = rule.annotations.mapValues { text in
                PrometheusRules.placeholders.reduce(text) { $0.replacingOccurrences(of: $1.key, with: $1.value) }
            }
            if !annotations.isEmpty {
                text +=
                    "        annotations: {" + annotations.sorted { $0.key < $1.key }.map { "\($0.key): \(quoted($0.value))" }.joined(separator: ", ") + "}\n"
            }
        }
        return text
    }

    /// What the alert texts' placeholders become in Prometheus's templates, where only the
    /// labels and the value are known.
    static let placeholders: [String: String] = [
        "{source}": "{{ $labels.source }}",
        "{sla_budget}": "{{ $labels.source }} has used its SLA downtime budget for this period",
        "{sla_missed}": "{{ $labels.source }} ended the last SLA period below its target",
        "{sla_report}": "/sla?source={{ $labels.source }}",
    ]

    /// A YAML double-quoted scalar.
    static func quoted(_ value: String) -> String {
        var out = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
