// MicroHTTPServer: a small, generic HTTP/1.1 server on libmicrohttpd — routes with path
// parameters, bounded request bodies, buffered or streamed responses, async handlers.

/// An ordered list of header fields with case-insensitive lookup.
///
/// ```swift
/// var headers = HTTPHeaders()
/// headers.add("Content-Type", "text/plain")
/// headers["content-type"] // "text/plain"
/// ```
public struct HTTPHeaders: Sendable, Sequence, ExpressibleByDictionaryLiteral {
    /// Every field in the order added, names as given.
    public private(set) var fields: [(name: String, value: String)] = []

    /// No fields.
    public init() {}

    /// Fields from a literal, in its order.
    public init(dictionaryLiteral elements: (String, String)...) {
        for (name, value) in elements { add(name, value) }
    }

    /// Appends a field, keeping any earlier field of the same name.
    public mutating func add(_ name: String, _ value: String) {
        fields.append((name, value))
    }

    /// Replaces every field named `name` by one with `value`.
    public mutating func set(_ name: String, _ value: String) {
        remove(name)
        fields.append((name, value))
    }

    /// Removes every field named `name`, compared case-insensitively.
    public mutating func remove(_ name: String) {
        fields.removeAll { $0.name.caseInsensitiveEquals(name) }
    }

    /// The first value of the field named `name`, compared case-insensitively.
    public subscript(_ name: String) -> String? {
        fields.first { $0.name.caseInsensitiveEquals(name) }?.value
    }

    /// Iterates the fields in order, repeated names included.
    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> {
        fields.makeIterator()
    }
}

extension String {
    func caseInsensitiveEquals(_ other: String) -> Bool {
        utf8.count == other.utf8.count && lowercased() == other.lowercased()
    }
}

extension HTTPHeaders {
    /// Why a request's body cannot be delimited one way only, or nil: differing `Content-Length`
    /// values, or `Content-Length` beside `Transfer-Encoding` (RFC 9112 sections 6.1 and 6.3). A
    /// proxy in front that reads the other length would take the rest of this body for a request
    /// of its own (request smuggling), so such a request is refused and its connection closed.
    /// Fields repeating one value (`2` and `02`) are one length.
    var framingProblem: String? {
        let lengths = fields.filter { $0.name.caseInsensitiveEquals("Content-Length") }
            .flatMap { $0.value.split(separator: ",", omittingEmptySubsequences: false) }
            .map { $0.trimmingASCIISpaces() }
        if lengths.isEmpty { return nil }
        if self["Transfer-Encoding"] != nil { return "a request with both Content-Length and Transfer-Encoding is refused" }
        guard lengths.allSatisfy({ !$0.isEmpty && $0.utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") } }) else {
            return "Content-Length is not a number"
        }
        // Compared as numbers of any size: `02` is `2`.
        let values = Set(lengths.map { $0.drop { $0 == "0" } })
        return values.count > 1 ? "the request's Content-Length fields disagree" : nil
    }
}

extension Substring {
    /// Without the spaces and tabs at either end.
    fileprivate func trimmingASCIISpaces() -> Substring {
        let isSpace = { (byte: UInt8) in byte == 0x20 || byte == 0x09 }
        let bytes = utf8
        guard let first = bytes.firstIndex(where: { !isSpace($0) }), let last = bytes.lastIndex(where: { !isSpace($0) }) else { return "" }
        return Substring(bytes[first...last])
    }
}
