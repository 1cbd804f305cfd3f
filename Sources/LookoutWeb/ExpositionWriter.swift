// LookoutWeb: what Lookout serves — /metrics, the status page, health endpoints and routes.

/// Writes the Prometheus text format 0.0.4: HELP and TYPE once per family, escaped label values.
///
/// ```swift
/// var writer = ExpositionWriter()
/// writer.family("lookout_probe_success", type: .gauge, help: "Whether the last probe succeeded.")
/// writer.sample("lookout_probe_success", labels: [("source", "acme")], value: 1)
/// ```
public struct ExpositionWriter: Sendable {
    public enum MetricType: String, Sendable {
        case counter, gauge, histogram
    }

    public private(set) var text = ""

    public init() {}

    public mutating func family(_ name: String, type: MetricType, help: String) {
        text += "# HELP \(name) \(ExpositionWriter.escapeHelp(help))\n# TYPE \(name) \(type.rawValue)\n"
    }

    public mutating func sample(_ name: String, labels: [(String, String)] = [], value: Double) {
        text += name
        if !labels.isEmpty {
            text += "{"
            for (index, (label, labelValue)) in labels.enumerated() {
                if index > 0 { text += "," }
                text += label
                text += "=\""
                text += ExpositionWriter.escapeLabel(labelValue)
                text += "\""
            }
            text += "}"
        }
        text += " "
        text += ExpositionWriter.format(value)
        text += "\n"
    }

    /// Buckets, sum and count of a histogram under `name`.
    public mutating func histogram(
        _ name: String, labels: [(String, String)], bounds: [Double], cumulativeCounts: [UInt64], sum: Double, count: UInt64
    ) {
        for (index, bound) in bounds.enumerated() {
            sample("\(name)_bucket", labels: labels + [("le", ExpositionWriter.format(bound))], value: Double(cumulativeCounts[index]))
        }
        sample("\(name)_bucket", labels: labels + [("le", "+Inf")], value: Double(count))
        sample("\(name)_sum", labels: labels, value: sum)
        sample("\(name)_count", labels: labels, value: Double(count))
    }

    public static func format(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }

    /// Label values escape backslash, double quote and newline.
    public static func escapeLabel(_ value: String) -> String {
        guard value.contains(where: { $0 == "\\" || $0 == "\"" || $0.isNewline }) else { return value }
        var out = ""
        for character in value {
            switch character {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n", "\r\n": out += "\\n"
            default: out.append(character)
            }
        }
        return out
    }

    /// HELP text escapes backslash and newline.
    static func escapeHelp(_ value: String) -> String {
        value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\n", with: "\\n")
    }
}
