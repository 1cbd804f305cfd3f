/// A small JSON value that renders itself, for API answers built by hand.
public indirect enum JSONText: Sendable {
    case string(String)
    case number(Double)
    case int(Int64)
    case bool(Bool)
    case null
    case array([JSONText])
    /// Keys keep the order given.
    case ordered([(String, JSONText)])

    /// An object with its keys sorted.
    public static func object(_ fields: [String: JSONText]) -> String {
        JSONText.ordered(fields.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }).rendered
    }

    public var rendered: String {
        var out = ""
        write(to: &out)
        return out
    }

    public func write(to out: inout String) {
        switch self {
        case .string(let text): out += LogfmtLogHandler.jsonString(text)
        case .number(let value):
            if !value.isFinite {
                out += "null"
            } else if value == value.rounded() && abs(value) < 1e15 {
                out += String(Int64(value))
            } else {
                out += "\(value)"
            }
        case .int(let value): out += String(value)
        case .bool(let value): out += value ? "true" : "false"
        case .null: out += "null"
        case .array(let items):
            out += "["
            for (index, item) in items.enumerated() {
                if index > 0 { out += "," }
                item.write(to: &out)
            }
            out += "]"
        case .ordered(let fields):
            out += "{"
            for (index, (key, value)) in fields.enumerated() {
                if index > 0 { out += "," }
                out += LogfmtLogHandler.jsonString(key)
                out += ":"
                value.write(to: &out)
            }
            out += "}"
        }
    }
}

extension Optional where Wrapped == String {
    /// The string, or null.
    public var json: JSONText { map { .string($0) } ?? .null }
}
