import ResilientHTTP

/// Keeps secrets out of what Lookout shows and stores: userinfo and secret-looking query values.
package enum Redaction {
    static let secretNames = ["token", "key", "secret", "password", "passwd", "auth", "signature", "sig", "credential", "session"]

    package static func url(_ text: String) -> String {
        // Nothing to redact without userinfo, or a query that may name a secret (spelled out or
        // percent-encoded): most URLs, each read once per source, skip the URL parser.
        let bytes = text.utf8
        if !bytes.contains(UInt8(ascii: "@")),
            !bytes.contains(UInt8(ascii: "?")) || (!bytes.contains(UInt8(ascii: "%")) && !isSecret(text))
        {
            return text
        }
        guard var parts = URLParts(text) else { return hidingByText(text) }
        var redacted = false
        if parts.userInfo != nil {
            parts.userInfo = "REDACTED"
            redacted = true
        }
        if let query = parts.query, let hidden = hidingSecrets(inQuery: Substring(query)) {
            parts.query = hidden
            redacted = true
        }
        return redacted ? parts.text : text
    }

    /// The query with each secret-looking item's value replaced (its name as written: `%74oken`
    /// stays `%74oken`), or nil when it names no secret. Empty items (`a&&b`) are dropped.
    static func hidingSecrets(inQuery query: Substring) -> String? {
        let items = URLParts.items(ofQuery: query)
        guard items.contains(where: { isSecret($0.name) }) else { return nil }
        return items.map { isSecret($0.name) ? "\($0.writtenName)=REDACTED" : String($0.text) }.joined(separator: "&")
    }

    /// A URL the parser refuses (a host holding what no host may, a password holding a `/`, a
    /// scheme-less `//user:pw@host`) is still shown without its user information — everything
    /// from the authority's start (after `://`, or a leading `//`) to the last `@` before the
    /// query — or its secret query values, found in the bytes.
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
        guard let question = shownBytes.firstIndex(of: UInt8(ascii: "?")) else { return String(shown) }
        let queryStart = shownBytes.index(after: question)
        let queryEnd = shownBytes[queryStart...].firstIndex(of: UInt8(ascii: "#")) ?? shownBytes.endIndex
        guard let hidden = hidingSecrets(inQuery: Substring(shownBytes[queryStart..<queryEnd])) else { return String(shown) }
        return String(Substring(shownBytes[..<queryStart]) + hidden + Substring(shownBytes[queryEnd...]))
    }

    /// A query name that holds a secret: one of `secretNames` inside it, in any case.
    package static func isSecret(_ name: String) -> Bool {
        secretNames.contains { ASCII.containsIgnoringCase(name, $0) }
    }
}
