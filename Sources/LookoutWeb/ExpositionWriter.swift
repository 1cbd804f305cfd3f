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

    public mutating func reserve(_ capacity: Int) {
        bytes.reserveCapacity(capacity)
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

    /// `{source="NAME"` with the value escaped, written once per source and reused for each of
    /// its series (the hot path of a 10,000-source scrape).
    public struct LabelPrefix: Sendable {
        let bytes: [UInt8]

        public init(_ name: String, _ value: String) {
            var bytes = Array(name.utf8)
            bytes.insert(UInt8(ascii: "{"), at: 0)
            bytes.append(contentsOf: [UInt8(ascii: "="), UInt8(ascii: "\"")])
            ExpositionWriter.appendEscapedLabel(value, to: &bytes)
            bytes.append(UInt8(ascii: "\""))
            self.bytes = bytes
        }
    }

    /// A sample with the prefix's labels and, optionally, one more label.
    public mutating func sample(_ name: StaticString, _ prefix: LabelPrefix, _ extraName: String? = nil, _ extraValue: String = "", value: Double) {
        name.withUTF8Buffer { bytes.append(contentsOf: $0) }
        appendRest(prefix, extraName, extraValue, value)
    }

    /// A sample with the prefix's labels and, optionally, one more label.
    public mutating func sample(_ name: [UInt8], _ prefix: LabelPrefix, _ extraName: String? = nil, _ extraValue: String = "", value: Double) {
        bytes.append(contentsOf: name)
        appendRest(prefix, extraName, extraValue, value)
    }

    private mutating func appendRest(_ prefix: LabelPrefix, _ extraName: String?, _ extraValue: String, _ value: Double) {
        bytes.append(contentsOf: prefix.bytes)
        if let extraName {
            bytes.append(UInt8(ascii: ","))
            bytes.append(contentsOf: extraName.utf8)
            bytes.append(contentsOf: [UInt8(ascii: "="), UInt8(ascii: "\"")])
            ExpositionWriter.appendEscapedLabel(extraValue, to: &bytes)
            bytes.append(UInt8(ascii: "\""))
        }
        bytes.append(contentsOf: [UInt8(ascii: "}"), UInt8(ascii: " ")])
        appendNumber(value)
        bytes.append(UInt8(ascii: "\n"))
    }

    /// Buckets, sum and count of a histogram, with the prefix's labels.
    public mutating func histogram(_ name: String, _ prefix: LabelPrefix, bounds: [String], cumulativeCounts: [UInt64], sum: Double, count: UInt64) {
        let bucket = Array((name + "_bucket").utf8)
        for (index, bound) in bounds.enumerated() {
            sample(bucket, prefix, "le", bound, value: Double(cumulativeCounts[index]))
        }
        sample(bucket, prefix, "le", "+Inf", value: Double(count))
        sample(Array((name + "_sum").utf8), prefix, value: sum)
        sample(Array((name + "_count").utf8), prefix, value: Double(count))
    }

    /// Writes a number without going through a String for whole numbers.
    mutating func appendNumber(_ value: Double) {
        guard value.isFinite, value == value.rounded(), abs(value) < 1e15 else {
            bytes.append(contentsOf: ExpositionWriter.format(value).utf8)
            return
        }
        var integer = Int64(value)
        if integer == 0 {
            bytes.append(UInt8(ascii: "0"))
            return
        }
        if integer < 0 {
            bytes.append(UInt8(ascii: "-"))
            integer = -integer
        }
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            while integer > 0 {
                buffer[count] = UInt8(48 + integer % 10)
                integer /= 10
                count += 1
            }
            for index in stride(from: count - 1, through: 0, by: -1) { bytes.append(buffer[index]) }
        }
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
