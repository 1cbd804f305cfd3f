/// The parts of an absolute URL (`scheme://user@host:port/path?query#fragment`, RFC 3986) that
/// probes, the config and `/probe` need, read without Foundation's `URLComponents`: its host
/// getter starts ICU's IDNA transcoder (a few megabytes of ICU mapped into every process, since
/// every source's URL is checked at start) and it allocates for each part. It accepts and
/// refuses what `URLComponents(string:)` does for the URLs Lookout reads, as leniently (a path,
/// query or user may hold what it would percent-encode) except where noted; `URLPartsTests`
/// compares the two.
package struct URLParts: Sendable, Equatable {
    /// As written (`HTTPS` stays upper case).
    package var scheme: String
    /// The user information before `@` (user and password) as written; nil without an `@`.
    package var userInfo: String?
    /// Percent-decoded, an IPv6 address with its brackets, case as written (an IDNA name stays
    /// in its `xn--` form, which Foundation decodes); "" when the authority has no host; nil
    /// when the URL has no authority (`mailto:x`) or its host decodes to no UTF-8.
    package var host: String?
    /// nil when the URL names none (or an empty one, `host:`).
    package var port: Int?
    /// As written; "" for none.
    package var path: String
    package var query: String?
    package var fragment: String?

    /// nil when `text` is no absolute URL: no scheme; a host that holds what no host may (a
    /// space, a quote, a malformed escape, an escape that decodes to no UTF-8, to a control
    /// character or to a delimiter such as `#`, `/` or `@`); a port that is not at most five
    /// digits. The path, query, fragment and user information are taken as written, not
    /// checked: a caller that sends them checks them itself (`ProbeURL`).
    package init?(_ text: String) {
        var text = text
        guard let parts = text.withUTF8({ URLParts.parse($0) }) else { return nil }
        self = parts
    }

    private init(scheme: String) {
        self.scheme = scheme
        path = ""
    }

    /// `port`, else the scheme's: 443 for https (and grpcs), 80 for http (and grpc); nil for
    /// other schemes.
    package var portOrDefault: Int? {
        if let port { return port }
        if ASCII.equalIgnoringCase(scheme, "https") || ASCII.equalIgnoringCase(scheme, "grpcs") { return 443 }
        if ASCII.equalIgnoringCase(scheme, "http") || ASCII.equalIgnoringCase(scheme, "grpc") { return 80 }
        return nil
    }

    /// The URL again, from its parts (a host set since as it is given).
    package var text: String {
        var text = scheme + ":"
        if let host {
            text += "//"
            if let userInfo { text += userInfo + "@" }
            text += host
            if let port { text += ":\(port)" }
        }
        text += path
        if let query { text += "?" + query }
        if let fragment { text += "#" + fragment }
        return text
    }

    /// `host` without an IPv6 address's brackets, case as written (a zone, `%25eth0`, names an
    /// interface, whose case counts).
    package var bareHost: String? {
        guard let host else { return nil }
        if host.utf8.first == UInt8(ascii: "["), host.utf8.last == UInt8(ascii: "]") { return String(host.dropFirst().dropLast()) }
        return host
    }

    /// `path` with its percent escapes decoded, as Foundation's `path` gives it.
    package var decodedPath: String { path.removingPercentEncoding ?? path }

    /// One `name=value` of a query, as written and decoded.
    package struct QueryItem: Sendable, Equatable {
        /// The item as written, between its `&`s.
        package var text: Substring
        /// The name before the first `=`, percent-decoded as Foundation's `queryItems` gives it
        /// (a `+` stays a `+`), except that an escape which is no escape (`%zz`) or decodes to no
        /// UTF-8 stays as written or becomes U+FFFD instead of making the whole name nil.
        package var name: String
        /// The value after the first `=`, decoded as `name` is; nil without an `=`.
        package var value: String?

        /// The name as written.
        package var writtenName: Substring { Substring(text.utf8.prefix { $0 != UInt8(ascii: "=") }) }
    }

    /// The query's items in order; empty items (`a=1&&b=2`, a trailing `&`) are left out.
    package var queryItems: [QueryItem] { query.map { URLParts.items(ofQuery: Substring($0)) } ?? [] }

    /// The items of `query` (the text after `?`), split at each `&` byte and named up to the
    /// first `=` byte — bytes, not `Character`s: an `&` followed by a combining mark is one
    /// grapheme with it, and would otherwise hide the item after it (`?q=1&\u{301}token=…`).
    package static func items(ofQuery query: Substring) -> [QueryItem] {
        query.utf8.split(separator: UInt8(ascii: "&")).map { bytes in
            let equals = bytes.firstIndex(of: UInt8(ascii: "="))
            let name = bytes[..<(equals ?? bytes.endIndex)]
            let value = equals.map { bytes[bytes.index(after: $0)...] }
            return QueryItem(text: Substring(bytes), name: lenientlyDecoded(name), value: value.map(lenientlyDecoded))
        }
    }

    /// `bytes` with every `%XX` escape decoded and anything else kept, read as UTF-8 (what does
    /// not decode becomes U+FFFD).
    package static func lenientlyDecoded(_ bytes: Substring.UTF8View) -> String {
        guard bytes.contains(UInt8(ascii: "%")) else { return String(Substring(bytes)) }
        return String(decoding: percentDecoded(bytes), as: UTF8.self)
    }

    /// `bytes` with every `%XX` escape decoded; a `%` not followed by two hex digits is kept.
    private static func percentDecoded<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let high = bytes.index(after: index)
            let low = high < bytes.endIndex ? bytes.index(after: high) : high
            if bytes[index] == UInt8(ascii: "%"), low < bytes.endIndex, let highValue = hexValue(bytes[high]), let lowValue = hexValue(bytes[low]) {
                out.append(highValue << 4 | lowValue)
                index = bytes.index(after: low)
            } else {
                out.append(bytes[index])
                index = high
            }
        }
        return out
    }

    // MARK: - Parsing

    private static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> URLParts? {
        // scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ), then ":".
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")), colon > 0, isAlpha(bytes[0]),
            bytes[1..<colon].allSatisfy({ isAlpha($0) || isDigit($0) || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") })
        else { return nil }
        var parts = URLParts(scheme: string(bytes, 0..<colon))
        var index = colon + 1
        let end = bytes.count
        let fragmentStart = bytes[index...].firstIndex(of: UInt8(ascii: "#")) ?? end
        let queryStart = bytes[index..<fragmentStart].firstIndex(of: UInt8(ascii: "?")) ?? fragmentStart
        if queryStart - index >= 2, bytes[index] == UInt8(ascii: "/"), bytes[index + 1] == UInt8(ascii: "/") {
            index += 2
            let authorityEnd = bytes[index..<queryStart].firstIndex(of: UInt8(ascii: "/")) ?? queryStart
            guard readAuthority(bytes, index..<authorityEnd, into: &parts) else { return nil }
            index = authorityEnd
        }
        parts.path = string(bytes, index..<queryStart)
        if queryStart < fragmentStart { parts.query = string(bytes, (queryStart + 1)..<fragmentStart) }
        if fragmentStart < end { parts.fragment = string(bytes, (fragmentStart + 1)..<end) }
        return parts
    }

    /// `[ userinfo "@" ] host [ ":" port ]`.
    private static func readAuthority(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, into parts: inout URLParts) -> Bool {
        var start = range.lowerBound
        if let at = bytes[range].lastIndex(of: UInt8(ascii: "@")) {
            parts.userInfo = string(bytes, start..<at)
            start = at + 1
        }
        var hostEnd: Int
        let host: String?
        if start < range.upperBound, bytes[start] == UInt8(ascii: "[") {
            // An IP literal, taken as Foundation takes it: any printable ASCII up to its bracket,
            // then the end or a port.
            guard let close = bytes[start..<range.upperBound].firstIndex(of: UInt8(ascii: "]")),
                bytes[(start + 1)..<close].allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "[") })
            else { return false }
            hostEnd = close + 1
            guard hostEnd == range.upperBound || bytes[hostEnd] == UInt8(ascii: ":") else { return false }
            host = decoded(bytes, (start + 1)..<close, forbidding: literalForbidden).map { "[" + $0 + "]" }
        } else {
            // A name: unreserved characters, sub-delims, percent escapes, and any non-ASCII
            // (an international name, written as it reads).
            hostEnd = bytes[start..<range.upperBound].firstIndex(of: UInt8(ascii: ":")) ?? range.upperBound
            guard valid(bytes, start..<hostEnd) else { return false }
            host = decoded(bytes, start..<hostEnd, forbidding: nameForbidden)
        }
        guard let host else { return false }
        parts.host = host
        if hostEnd < range.upperBound {
            // ":" then digits; an empty port is no port. At most five digits after leading
            // zeros, so no number from outside overflows (Foundation drops a longer port, and
            // the URL would reach a default one: here it is no URL).
            let digits = bytes[(hostEnd + 1)..<range.upperBound]
            guard digits.allSatisfy(isDigit) else { return false }
            let significant = digits.drop { $0 == UInt8(ascii: "0") }
            guard significant.count <= 5 else { return false }
            if !digits.isEmpty { parts.port = significant.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) } }
        }
        return true
    }

    /// Whether every byte of `range` may stand in a host name: unreserved, a sub-delim, a
    /// well-formed percent escape, or beyond ASCII.
    private static func valid(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Bool {
        var index = range.lowerBound
        while index < range.upperBound {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < range.upperBound, hexValue(bytes[index + 1]) != nil, hexValue(bytes[index + 2]) != nil else { return false }
                index += 3
                continue
            }
            guard byte >= 0x80 || isAlpha(byte) || isDigit(byte) || hostExtras.utf8.contains(byte) else { return false }
            index += 1
        }
        return true
    }

    /// The text of `range` with its percent escapes decoded; nil when they decode to no UTF-8,
    /// to a control character or to one of `forbidden`: what would move the host's end when it
    /// is written into another URL, a `Host` field or a `CURLOPT_CONNECT_TO` entry
    /// (`evil%23.internal` must not become `evil#.internal`; Foundation decodes it so).
    private static func decoded(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, forbidding forbidden: String) -> String? {
        guard bytes[range].contains(UInt8(ascii: "%")) else { return string(bytes, range) }
        let out = percentDecoded(bytes[range])
        guard !out.contains(where: { $0 < 0x21 || $0 == 0x7F || forbidden.utf8.contains($0) }) else { return nil }
        return String(validating: out, as: UTF8.self)
    }

    private static func string(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
    }

    private static func isAlpha(_ byte: UInt8) -> Bool { (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z") }
    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        if isDigit(byte) { return byte - UInt8(ascii: "0") }
        let lower = byte | 0x20
        return lower >= UInt8(ascii: "a") && lower <= UInt8(ascii: "f") ? lower - UInt8(ascii: "a") + 10 : nil
    }

    /// RFC 3986's unreserved punctuation and sub-delims, which a host name may hold.
    private static let hostExtras = "-._~!$&'()*+,;="
    /// What a decoded host name may not hold beside control characters.
    private static let nameForbidden = ":/?#[]@%\\\"<>^`{|}"
    /// What a decoded IP literal may not hold (its colons and a zone's `%` it may).
    private static let literalForbidden = "/?#[]@\\\"<>^`{|}"
}
