import Foundation
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
        guard var components = URLComponents(string: text) else { return text }
        var redacted = false
        if components.user != nil || components.password != nil {
            components.user = "REDACTED"
            components.password = nil
            redacted = true
        }
        if let items = components.queryItems, items.contains(where: { isSecret($0.name) }) {
            components.queryItems = items.map { isSecret($0.name) ? URLQueryItem(name: $0.name, value: "REDACTED") : $0 }
            redacted = true
        }
        return redacted ? components.string ?? text : text
    }

    /// A query name that holds a secret: one of `secretNames` inside it, in any case.
    static func isSecret(_ name: String) -> Bool {
        secretNames.contains { ASCII.containsIgnoringCase(name, $0) }
    }
}
