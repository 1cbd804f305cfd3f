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

extension StringProtocol {
    /// Equal but for ASCII case, compared byte by byte as libmicrohttpd compares field names: a
    /// Kelvin sign is no `k`, and nothing is allocated (this runs for every field of a request).
    func caseInsensitiveEquals(_ other: some StringProtocol) -> Bool {
        utf8.elementsEqual(other.utf8) { $0 == $1 || ($0 ^ $1 == 0x20 && (0x61...0x7A).contains($0 | 0x20)) }
    }
}

extension HTTPHeaders {
    /// Why a request's body cannot be delimited one way only, with the status that says so
    /// (RFC 9112 sections 6.1 and 6.3): `Content-Length` fields that disagree or are no number,
    /// `Content-Length` beside `Transfer-Encoding` (400), and a `Transfer-Encoding` other than
    /// `chunked` alone — one that does not end in `chunked` leaves the length unknown (400), one
    /// that does names a coding this server does not decode (501). A proxy in front that read
    /// another length would take the rest of this body for a request of its own (request
    /// smuggling), so such a request is refused and its connection closed.
    struct FramingProblem: Error, Equatable {
        var status: Int
        var message: String
    }

    /// How the request's body is delimited, read from its fields in one pass: the announced
    /// length (`Int.max` for one too large to hold, past any limit; nil without one, as for a
    /// chunked body), or the problem that refuses it. Fields repeating one length (`2` and
    /// `02`) are one length.
    var bodyFraming: Result<Int?, FramingProblem> {
        var lengths: [Substring] = []
        var codings: [Substring] = []
        var writtenCodings: [String] = []
        for field in fields {
            if field.name.caseInsensitiveEquals("Content-Length") {
                lengths += HTTPHeaders.commaSeparated(field.value)
            } else if field.name.caseInsensitiveEquals("Transfer-Encoding") {
                codings += HTTPHeaders.commaSeparated(field.value)
                writtenCodings.append(field.value)
            }
        }
        if !codings.isEmpty {
            if !lengths.isEmpty { return .failure(FramingProblem(status: 400, message: "a request with both Content-Length and Transfer-Encoding is refused")) }
            let chunked = codings.map { $0.caseInsensitiveEquals("chunked") }
            guard chunked == [true] else {
                let written = writtenCodings.joined(separator: ", ")
                return .failure(
                    chunked.last == true
                        ? FramingProblem(status: 501, message: "Transfer-Encoding \(written): only chunked is understood")
                        : FramingProblem(status: 400, message: "Transfer-Encoding \(written) does not end in chunked, so the body's length is unknown"))
            }
            return .success(nil)
        }
        guard let first = lengths.first else { return .success(nil) }
        guard lengths.allSatisfy({ !$0.isEmpty && $0.utf8.allSatisfy(HTTPHeaders.isDigit) }) else {
            return .failure(FramingProblem(status: 400, message: "Content-Length is not a number"))
        }
        // Compared as numbers of any size: `02` is `2`.
        guard Set(lengths.map { $0.drop { $0 == "0" } }).count == 1 else {
            return .failure(FramingProblem(status: 400, message: "the request's Content-Length fields disagree"))
        }
        return .success(Int(first) ?? .max)
    }

    /// A field's comma-separated values, trimmed, empty ones kept.
    private static func commaSeparated(_ value: String) -> [Substring] {
        value.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingASCIISpaces() }
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
