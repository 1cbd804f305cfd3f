import Foundation
import ResilientHTTP

extension SourceKind {
    package static let json = SourceKind(declaring: "json")
}

/// `kind: json`: the body must be a JSON document, and satisfy `expect.json_path` when given.
package enum JSONProber: Prober {
    package static let kind = SourceKind.json
    package static let summary = "a valid JSON body, and a json_path assertion"
    package static let ownKeys = ["expect.json_path"]
    package static let checksAnswer = true

    package static func check(_ result: TransferResult, _ source: SourceConfig) -> Failure? {
        json(result.body, assertion: source.expect.jsonPath)
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
