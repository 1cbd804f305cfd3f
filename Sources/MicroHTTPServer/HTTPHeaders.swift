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
    /// Why a request's body cannot be delimited one way only, with the status that says so, or
    /// nil (RFC 9112 sections 6.1 and 6.3): `Content-Length` fields that disagree or are no
    /// number, `Content-Length` beside `Transfer-Encoding` (400), and a `Transfer-Encoding` other
    /// than `chunked` alone — one that does not end in `chunked` leaves the length unknown (400),
    /// one that does names a coding this server does not decode (501). A proxy in front that
    /// read another length would take the rest of this body for a request of its own (request
    /// smuggling), so such a request is refused and its connection closed. Fields repeating one
    /// length (`2` and `02`) are one length.
    var framingProblem: (status: Int, message: String)? {
        let lengths = values(of: "Content-Length")
        // `caseInsensitiveEquals` compares byte counts first, so only ASCII case differs, as in
        // libmicrohttpd: a Kelvin sign is no `k`.
        let codings = values(of: "Transfer-Encoding").map { String($0).caseInsensitiveEquals("chunked") }
        if !codings.isEmpty {
            if !lengths.isEmpty { return (400, "a request with both Content-Length and Transfer-Encoding is refused") }
            guard codings == [true] else {
                let written = fields.filter { $0.name.caseInsensitiveEquals("Transfer-Encoding") }.map(\.value).joined(separator: ", ")
                return codings.last == true
                    ? (501, "Transfer-Encoding \(written): only chunked is understood")
                    : (400, "Transfer-Encoding \(written) does not end in chunked, so the body's length is unknown")
            }
            return nil
        }
        if lengths.isEmpty { return nil }
        guard lengths.allSatisfy({ !$0.isEmpty && $0.utf8.allSatisfy(HTTPHeaders.isDigit) }) else {
            return (400, "Content-Length is not a number")
        }
        // Compared as numbers of any size: `02` is `2`.
        let distinct = Set(lengths.map { $0.drop { $0 == "0" } })
        return distinct.count > 1 ? (400, "the request's Content-Length fields disagree") : nil
    }

    /// The announced body length; `Int.max` for one too large to hold (past any limit), nil
    /// without one or when it is no number.
    var contentLength: Int? {
        guard let length = values(of: "Content-Length").first, !length.isEmpty, length.utf8.allSatisfy(HTTPHeaders.isDigit) else { return nil }
        return Int(length) ?? .max
    }

    /// Every comma-separated value of the fields named `name`, trimmed, empty ones kept.
    private func values(of name: String) -> [Substring] {
        fields.filter { $0.name.caseInsensitiveEquals(name) }
            .flatMap { $0.value.split(separator: ",", omittingEmptySubsequences: false) }
            .map { $0.trimmingASCIISpaces() }
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
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
