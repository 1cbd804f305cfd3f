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

    /// The exposition so far, as bytes.
    public private(set) var bytes: [UInt8] = []

    public init() {
        bytes.reserveCapacity(64 * 1024)
    }

    /// The exposition so far, as text.
    public var text: String { String(decoding: bytes, as: UTF8.self) }

    public mutating func family(_ name: String, type: MetricType, help: String) {
        bytes.append(contentsOf: "# HELP \(name) \(ExpositionWriter.escapeHelp(help))\n# TYPE \(name) \(type.rawValue)\n".utf8)
    }

    public mutating func sample(_ name: String, labels: [(String, String)] = [], value: Double) {
        bytes.append(contentsOf: name.utf8)
        if !labels.isEmpty {
            bytes.append(UInt8(ascii: "{"))
            for (index, (label, labelValue)) in labels.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                bytes.append(contentsOf: label.utf8)
                bytes.append(contentsOf: [UInt8(ascii: "="), UInt8(ascii: "\"")])
                ExpositionWriter.appendEscapedLabel(labelValue, to: &bytes)
                bytes.append(UInt8(ascii: "\""))
            }
            bytes.append(UInt8(ascii: "}"))
        }
        bytes.append(UInt8(ascii: " "))
        bytes.append(contentsOf: ExpositionWriter.format(value).utf8)
        bytes.append(UInt8(ascii: "\n"))
    }

    static func appendEscapedLabel(_ value: String, to out: inout [UInt8]) {
        for byte in value.utf8 {
            switch byte {
            case 0x5C: out.append(contentsOf: [0x5C, 0x5C])
            case 0x22: out.append(contentsOf: [0x5C, 0x22])
            case 0x0A: out.append(contentsOf: [0x5C, 0x6E])
            case 0x0D: continue
            default: out.append(byte)
            }
        }
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
        guard value.utf8.contains(where: { $0 == 0x5C || $0 == 0x22 || $0 == 0x0A || $0 == 0x0D }) else { return value }
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
