import ResilientHTTP

/// Keeps secrets out of what Lookout shows and stores: userinfo and secret-looking values in the
/// query, in a fragment written as one (`#access_token=…`, OAuth's implicit flow), and in a path
/// segment's parameters (`/app;jsessionid=…`, as servlet containers write a session into a URL).
package enum Redaction {
    static let secretNames = ["token", "key", "secret", "password", "passwd", "auth", "signature", "sig", "credential", "session"]

    package static func url(_ text: String) -> String {
        // Nothing to redact without userinfo, or a query or fragment that may name a secret
        // (spelled out or percent-encoded): most URLs, each read once per source, skip the parser.
        let bytes = text.utf8
        let hasItems = bytes.contains { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") || $0 == UInt8(ascii: ";") }
        if !bytes.contains(UInt8(ascii: "@")), !hasItems || (!bytes.contains(UInt8(ascii: "%")) && !isSecret(text)) {
            return text
        }
        guard var parts = URLParts(text) else { return hidingByText(text) }
        var redacted = false
        if parts.userInfo != nil {
            parts.userInfo = "REDACTED"
            redacted = true
        }
        if let hidden = hidingSecrets(inPath: Substring(parts.path)) {
            parts.path = hidden
            redacted = true
        }
        if let query = parts.query, let hidden = hidingSecrets(inQuery: Substring(query)) {
            parts.query = hidden
            redacted = true
        }
        if let fragment = parts.fragment, let hidden = hidingSecrets(inFragment: Substring(fragment)) {
            parts.fragment = hidden
            redacted = true
        }
        return redacted ? parts.text : text
    }

    /// A fragment written as a query (`access_token=…&state=…`) with its secret-looking values
    /// replaced, or nil when it holds no `=` (`#tokens` is a place in the page) or names no secret.
    static func hidingSecrets(inFragment fragment: Substring) -> String? {
        fragment.utf8.contains(UInt8(ascii: "=")) ? hidingSecrets(inQuery: fragment) : nil
    }

    /// The query with each secret-looking item's value replaced (its name as written: `%74oken`
    /// stays `%74oken`), or nil when it names no secret. Empty items (`a&&b`) are dropped. An
    /// item's value is also read at `;`, the separator older forms and some fragments use, and
    /// at a second `#` (`#a=1#token=…`, which browsers keep): from a secret-looking `name=value`
    /// piece on, the rest of the item is hidden with it (`state=1;token=x;y` shows
    /// `state=1;token=REDACTED`), since a secret's value may hold a `;` itself. A piece without
    /// `=` is a value (`fields=id;keywords`) and stays.
    static func hidingSecrets(inQuery query: Substring) -> String? {
        let items = URLParts.items(ofQuery: query)
        let shown = items.map(hidingSecrets(inItem:))
        guard shown.contains(where: { $0 != nil }) else { return nil }
        return zip(items, shown).map { $1 ?? String($0.text) }.joined(separator: "&")
    }

    /// The path with each segment's secret-looking parameters hidden (`/a;jsessionid=x/b` shows
    /// `/a;jsessionid=REDACTED/b`), or nil when it has none.
    static func hidingSecrets(inPath path: Substring) -> String? {
        guard path.utf8.contains(UInt8(ascii: ";")) else { return nil }
        let segments = path.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).map { Substring($0) }
        let shown = segments.map { hidingSecretPieces(in: $0, at: [UInt8(ascii: ";")]) }
        guard shown.contains(where: { $0 != nil }) else { return nil }
        return zip(segments, shown).map { $1 ?? String($0) }.joined(separator: "/")
    }

    /// The item with its secret hidden, or nil when it names none. A name that decodes to hold
    /// an `=` (`token%3Dabc`) is shown up to that escape, as if it had been written.
    private static func hidingSecrets(inItem item: URLParts.QueryItem) -> String? {
        if isSecret(item.name) {
            let written = item.writtenName
            let escape = written.utf8.indices.first { written.utf8[$0...].starts(with: "%3D".utf8) || written.utf8[$0...].starts(with: "%3d".utf8) }
            return "\(escape.map { written[..<$0] } ?? written)=REDACTED"
        }
        return hidingSecretPieces(in: item.text, at: [UInt8(ascii: ";"), UInt8(ascii: "#")])
    }

    /// `text` hidden from its first secret-looking `name=value` piece after the first (pieces
    /// end at any of `separators`), or nil when no such piece names a secret.
    private static func hidingSecretPieces(in text: Substring, at separators: [UInt8]) -> String? {
        let bytes = text.utf8
        var pieceStart: Substring.UTF8View.Index? = nil  // nil until the first piece has ended
        var index = bytes.startIndex
        while true {
            let atEnd = index == bytes.endIndex
            if atEnd || separators.contains(bytes[index]) {
                if let start = pieceStart, bytes[start..<index].contains(UInt8(ascii: "=")),
                    let named = URLParts.items(ofQuery: Substring(bytes[start..<index])).first, isSecret(named.name)
                {
                    return String(Substring(bytes[..<start])) + "\(named.writtenName)=REDACTED"
                }
                if atEnd { return nil }
                pieceStart = bytes.index(after: index)
            }
            index = bytes.index(after: index)
        }
    }

    /// A URL the parser refuses (a host holding what no host may, a password holding a `/`, a
    /// scheme-less `//user:pw@host`) is still shown without its user information — everything
    /// from the authority's start (after `://`, or a leading `//`) to the last `@` before the
    /// query — or its secret path parameters, query and fragment values, found in the bytes
    /// (a parameter-like piece of the authority is hidden with them).
    static func hidingByText(_ text: String) -> String {
        let bytes = text.utf8
        var shown = Substring(text)
        let authority =
            bytes.starts(with: "//".utf8)
            ? bytes.index(bytes.startIndex, offsetBy: 2)
            : bytes.indices.first { bytes[$0...].starts(with: "://".utf8) }.map { bytes.index($0, offsetBy: 3) }
        if let start = authority {
            let end = bytes[start...].firstIndex { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") } ?? bytes.endIndex
            if let at = bytes[start..<end].lastIndex(of: UInt8(ascii: "@")) {
                shown = Substring(bytes[..<start]) + "REDACTED" + Substring(bytes[at...])
            }
        }
        let shownBytes = shown.utf8
        let fragmentMark = shownBytes.firstIndex(of: UInt8(ascii: "#"))
        var fragment = fragmentMark.map { Substring(shownBytes[shownBytes.index(after: $0)...]) }
        if let hidden = fragment.flatMap({ hidingSecrets(inFragment: $0) }) { fragment = Substring(hidden) }
        let beforeFragment = Substring(shownBytes[..<(fragmentMark ?? shownBytes.endIndex)])
        let question = beforeFragment.utf8.firstIndex(of: UInt8(ascii: "?"))
        var path = Substring(beforeFragment.utf8[..<(question ?? beforeFragment.utf8.endIndex)])
        var query = question.map { Substring(beforeFragment.utf8[beforeFragment.utf8.index(after: $0)...]) }
        if let hidden = hidingSecrets(inPath: path) { path = Substring(hidden) }
        if let hidden = query.flatMap({ hidingSecrets(inQuery: $0) }) { query = Substring(hidden) }
        return String(path) + (query.map { "?" + $0 } ?? "") + (fragment.map { "#" + $0 } ?? "")
    }

    /// A query name that holds a secret: one of `secretNames` inside it, in any case.
    package static func isSecret(_ name: String) -> Bool {
        secretNames.contains { ASCII.containsIgnoringCase(name, $0) }
    }
}
