/// A small JSON value that renders itself, for API answers built by hand.
package indirect enum JSONText: Sendable {
    case string(String)
    case number(Double)
    case int(Int64)
    case bool(Bool)
    case null
    case array([JSONText])
    /// Keys keep the order given.
    case ordered([(String, JSONText)])

    /// An object with its keys sorted.
    package static func object(_ fields: [String: JSONText]) -> String {
        JSONText.ordered(fields.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }).rendered
    }

    package var rendered: String {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        write(to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends the JSON text to a byte buffer (faster than growing a String piece by piece).
    package func write(to out: inout [UInt8]) {
        switch self {
        case .string(let text): JSONText.writeString(text, to: &out)
        case .number(let value):
            if !value.isFinite {
                out.append(contentsOf: "null".utf8)
            } else if value == value.rounded() && abs(value) < 1e15 {
                out.append(contentsOf: String(Int64(value)).utf8)
            } else {
                out.append(contentsOf: "\(value)".utf8)
            }
        case .int(let value): out.append(contentsOf: String(value).utf8)
        case .bool(let value): out.append(contentsOf: (value ? "true" : "false").utf8)
        case .null: out.append(contentsOf: "null".utf8)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                item.write(to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .ordered(let fields):
            out.append(UInt8(ascii: "{"))
            for (index, (key, value)) in fields.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                JSONText.writeString(key, to: &out)
                out.append(UInt8(ascii: ":"))
                value.write(to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// A JSON string literal: quotes, backslashes and control characters escaped.
    package static func writeString(_ text: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        // Most strings need no escaping: copy them whole.
        let copied = text.utf8.withContiguousStorageIfAvailable { buffer in
            guard !buffer.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }) else { return false }
            out.append(contentsOf: buffer)
            return true
        }
        if copied == true {
            out.append(UInt8(ascii: "\""))
            return
        }
        for byte in text.utf8 {
            switch byte {
            case 0x22: out.append(contentsOf: [0x5C, 0x22])
            case 0x5C: out.append(contentsOf: [0x5C, 0x5C])
            case 0x0A: out.append(contentsOf: [0x5C, 0x6E])
            case 0x0D: out.append(contentsOf: [0x5C, 0x72])
            case 0x09: out.append(contentsOf: [0x5C, 0x74])
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out.append(contentsOf: [0x5C, 0x75, 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}

extension Optional where Wrapped == String {
    /// The string, or null.
    package var json: JSONText { map { .string($0) } ?? .null }
}

/// Writes JSON straight into bytes, for large documents where building a `JSONText` tree first
/// would cost an allocation per value.
///
/// ```swift
/// var json = JSONWriter()
/// json.object { json in
///     json.field("status") { $0.string("ok") }
/// }
/// ```
package struct JSONWriter {
    package private(set) var bytes: [UInt8] = []
    private var needsComma = false

    package init(capacity: Int = 4096) {
        bytes.reserveCapacity(capacity)
    }

    package var text: String { String(decoding: bytes, as: UTF8.self) }

    private mutating func separate() {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
        needsComma = true
    }

    package mutating func object(_ body: (inout JSONWriter) -> Void) {
        separate()
        bytes.append(UInt8(ascii: "{"))
        needsComma = false
        body(&self)
        bytes.append(UInt8(ascii: "}"))
        needsComma = true
    }

    package mutating func array(_ body: (inout JSONWriter) -> Void) {
        separate()
        bytes.append(UInt8(ascii: "["))
        needsComma = false
        body(&self)
        bytes.append(UInt8(ascii: "]"))
        needsComma = true
    }

    /// A key inside an object; `value` writes exactly one value.
    package mutating func field(_ key: String, _ value: (inout JSONWriter) -> Void) {
        separate()
        JSONText.writeString(key, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        needsComma = false
        value(&self)
        needsComma = true
    }

    package mutating func string(_ value: String?) {
        separate()
        if let value { JSONText.writeString(value, to: &bytes) } else { bytes.append(contentsOf: "null".utf8) }
    }

    package mutating func number(_ value: Double?) {
        separate()
        guard let value, value.isFinite else {
            bytes.append(contentsOf: "null".utf8)
            return
        }
        if value == value.rounded() && abs(value) < 1e15 {
            bytes.append(contentsOf: String(Int64(value)).utf8)
        } else {
            bytes.append(contentsOf: value.description.utf8)
        }
    }

    package mutating func int(_ value: Int64?) {
        separate()
        bytes.append(contentsOf: (value.map { String($0) } ?? "null").utf8)
    }

    package mutating func bool(_ value: Bool?) {
        separate()
        bytes.append(contentsOf: (value.map { $0 ? "true" : "false" } ?? "null").utf8)
    }

    /// An already rendered `JSONText` value.
    package mutating func value(_ value: JSONText) {
        separate()
        value.write(to: &bytes)
    }
}
