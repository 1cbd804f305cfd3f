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

    /// A URL the parser refuses (a host holding what no host may) is still shown without its
    /// user information (what lies between `://` and the authority's last `@`) or secret query
    /// values, found in the text.
    static func hidingByText(_ text: String) -> String {
        var shown = Substring(text)
        if let start = text.firstRange(of: "://")?.upperBound {
            let end = text[start...].firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? text.endIndex
            if let at = text[start..<end].lastIndex(of: "@") { shown = text[..<start] + "REDACTED" + text[at...] }
        }
        guard let question = shown.firstIndex(of: "?") else { return String(shown) }
        let queryEnd = shown[question...].firstIndex(of: "#") ?? shown.endIndex
        guard let hidden = hidingSecrets(inQuery: shown[shown.index(after: question)..<queryEnd]) else { return String(shown) }
        return String(shown[...question] + hidden + shown[queryEnd...])
    }

    /// A query name that holds a secret: one of `secretNames` inside it, in any case.
    static func isSecret(_ name: String) -> Bool {
        secretNames.contains { ASCII.containsIgnoringCase(name, $0) }
    }
}
