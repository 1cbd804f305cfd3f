import Foundation
import ResilientHTTP
#if canImport(FoundationXML)
import FoundationXML
#endif

/// What a source requires of a response its status accepted: latency, body text, valid JSON and
/// its assertion, a well-formed feed with enough items.
package enum ResponseCheck {
    /// The checks for `source`, or nil when there are none.
    package static func validator(for source: SourceConfig) -> (@Sendable (TransferResult) -> Failure?)? {
        let expect = source.expect
        let kind = source.kind
        if expect.maxLatency == nil && expect.bodyContains == nil && (kind == .http || kind == .download) { return nil }
        return { result in
            if let limit = expect.maxLatency, result.totalSeconds > limit.seconds {
                return Failure(
                    category: .invalidResponse, reason: "slow_response", httpStatus: result.httpStatus,
                    detail: String(format: "the answer took %.0f ms, more than the %@ allowed", result.totalSeconds * 1000, ConfigValues.format(limit)))
            }
            if let needle = expect.bodyContains, !result.bodyText.contains(needle) {
                return Failure(
                    category: .invalidResponse, reason: "body_mismatch", httpStatus: result.httpStatus,
                    detail: "the body does not contain \"\(needle)\"")
            }
            switch kind {
            case .json: return json(result.body, assertion: expect.jsonPath)
            case .rss: return feed(result.body, minItems: expect.minItems)
            case .http, .download: return nil
            }
        }
    }

    /// The body must be a JSON document, and satisfy `assertion` when there is one.
    package static func json(_ body: [UInt8], assertion: JSONPathAssertion? = nil) -> Failure? {
        let document: Any
        do {
            document = try JSONSerialization.jsonObject(with: Data(body), options: [.fragmentsAllowed])
        } catch {
            return Failure(category: .invalidResponse, reason: "json_invalid", detail: "the body is not valid JSON (\(body.count) bytes)")
        }
        guard let assertion else { return nil }
        return JSONPathCheck.evaluate(assertion, in: document).map {
            Failure(category: .invalidResponse, reason: "json_assertion", detail: $0)
        }
    }

    /// The body must be a well-formed RSS or Atom feed with at least `minItems` items.
    package static func feed(_ body: [UInt8], minItems: Int? = nil) -> Failure? {
        let shape: FeedScanner.Shape
        switch FeedScanner.scan(utf8Document(body)) {
        case .success(let scanned): shape = scanned
        case .failure(let problem):
            return Failure(
                category: .invalidResponse, reason: "xml_invalid",
                detail: "the feed is not well-formed XML (line \(problem.line): \(problem.message))")
        }
        guard ["rss", "feed", "RDF"].contains(shape.root) else {
            return Failure(category: .invalidResponse, reason: "xml_invalid", detail: "the document is XML but not an RSS or Atom feed")
        }
        if let minItems, shape.items < minItems {
            return Failure(
                category: .invalidResponse, reason: "too_few_items",
                detail: "the feed has \(shape.items) item\(shape.items == 1 ? "" : "s"), fewer than the \(minItems) expected")
        }
        return nil
    }

    /// The document as valid UTF-8 (names and text compare as UTF-8 from then on):
    /// UTF-16 with a byte-order mark and the single-byte encodings feeds declare are decoded, and
    /// anything else is read as UTF-8 with invalid bytes replaced by U+FFFD.
    static func utf8Document(_ body: [UInt8]) -> [UInt8] {
        var text: String
        if body.starts(with: [0xFE, 0xFF]) || body.starts(with: [0xFF, 0xFE]) {
            let bigEndian = body[0] == 0xFE
            var units: [UInt16] = []
            units.reserveCapacity(body.count / 2)
            for index in stride(from: 2, to: body.count - 1, by: 2) {
                let first = UInt16(body[index])
                let second = UInt16(body[index + 1])
                units.append(bigEndian ? first << 8 | second : second << 8 | first)
            }
            text = String(decoding: units, as: UTF16.self)
        } else if ["iso-8859-1", "latin1", "latin-1", "us-ascii", "ascii", "windows-1252"].contains(declaredEncoding(body)) {
            text = String(String.UnicodeScalarView(body.map { Unicode.Scalar($0) }))
        } else {
            text = String(decoding: body, as: UTF8.self)
        }
        if text.hasPrefix("\u{FEFF}") { text.removeFirst() }
        return Array(text.utf8)
    }

    /// The `encoding` of an XML declaration, lowercased; nil without one.
    static func declaredEncoding(_ body: [UInt8]) -> String? {
        let head = String(decoding: body.prefix(200), as: UTF8.self).lowercased()
        guard head.hasPrefix("<?xml"), let end = head.range(of: "?>"),
            let encoding = head[..<end.lowerBound].range(of: "encoding=")
        else { return nil }
        return String(head[encoding.upperBound...].dropFirst().prefix { $0 != "\"" && $0 != "'" })
    }
}

/// Evaluates a `json_path` assertion: dot-separated keys, numbers index arrays.
package enum JSONPathCheck {
    /// nil when the assertion holds, otherwise why not.
    package static func evaluate(_ assertion: JSONPathAssertion, in document: Any) -> String? {
        let value = lookup(assertion.path, in: document)
        if let exists = assertion.exists {
            if exists && value == nil { return "\(assertion.path) is missing" }
            if !exists && value != nil { return "\(assertion.path) exists but should not" }
        }
        if assertion.min != nil || assertion.max != nil || assertion.equals != nil, value == nil {
            return "\(assertion.path) is missing"
        }
        guard let value else { return nil }
        if let equals = assertion.equals, text(value) != equals {
            return "\(assertion.path) is \(text(value)), not \(equals)"
        }
        if assertion.min != nil || assertion.max != nil {
            guard let number = number(value) else { return "\(assertion.path) is \(text(value)), not a number" }
            if let min = assertion.min, number < min { return "\(assertion.path) is \(format(number)), below the minimum \(format(min))" }
            if let max = assertion.max, number > max { return "\(assertion.path) is \(format(number)), above the maximum \(format(max))" }
        }
        return nil
    }

    static func lookup(_ path: String, in document: Any) -> Any? {
        var current: Any? = document
        for key in path.split(separator: ".") {
            if let object = current as? [String: Any] {
                current = object[String(key)]
            } else if let array = current as? [Any], let index = Int(key), array.indices.contains(index) {
                current = array[index]
            } else {
                return nil
            }
        }
        return current is NSNull ? nil : current
    }

    /// A number, or the size of an array or object (so `items: {min: 1}` means "not empty").
    static func number(_ value: Any) -> Double? {
        if let array = value as? [Any] { return Double(array.count) }
        if let object = value as? [String: Any] { return Double(object.count) }
        guard let number = value as? NSNumber, !isBoolean(number) else { return nil }
        return number.doubleValue
    }

    static func text(_ value: Any) -> String {
        if let string = value as? String { return string }
        if let number = value as? NSNumber {
            if isBoolean(number) { return number.boolValue ? "true" : "false" }
            return format(number.doubleValue)
        }
        if let data = try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys]) {
            return String(decoding: data, as: UTF8.self)
        }
        return "\(value)"
    }

    /// JSON's true and false arrive as a boolean subclass of NSNumber.
    static func isBoolean(_ number: NSNumber) -> Bool {
        type(of: number) == type(of: NSNumber(value: true))
    }

    static func format(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : "\(value)"
    }
}
