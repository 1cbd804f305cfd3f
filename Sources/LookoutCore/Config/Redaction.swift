import ResilientHTTP

/// Keeps secrets out of what Lookout shows and stores: userinfo and secret-looking values in the
/// query, in a fragment written as one (`#access_token=…`, OAuth's implicit flow), and in a path
/// segment's parameters (`/app;jsessionid=…`, as servlet containers write a session into a URL).
package enum Redaction {
    static let secretNames = ["token", "key", "secret", "password", "passwd", "auth", "signature", "sig", "credential", "session"]

    package static func url(_ text: String) -> String {
        // Nothing to redact without userinfo, or a query, fragment or path parameter that may
        // name a secret (spelled out or percent-encoded): most URLs, each read once per source,
        // skip the parser.
        let (hasUserInfo, hasItems, hasEscapes) = ASCII.bytes(text) { bytes in
            var found = (userInfo: false, items: false, escapes: false)
            for byte in bytes {
                switch byte {
                case UInt8(ascii: "@"): found.userInfo = true
                case UInt8(ascii: "?"), UInt8(ascii: "#"), UInt8(ascii: ";"): found.items = true
                case UInt8(ascii: "%"): found.escapes = true
                default: continue
                }
            }
            return found
        }
        if !hasUserInfo, !hasItems || (!hasEscapes && !isSecret(text)) {
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
        let shown = items.map { hiddenPiece($0.text, needsEquals: false) ?? hidingSecretPieces(in: $0.text, at: pieceSeparators) }
        guard shown.contains(where: { $0 != nil }) else { return nil }
        return zip(items, shown).map { $1 ?? String($0.text) }.joined(separator: "&")
    }

    /// The path hidden from its first secret-looking segment parameter on (`/cart;jsessionid=…`,
    /// as servlet containers put a session into a URL, shows `/cart;jsessionid=REDACTED`), to
    /// its end since a token may hold a `/`; nil when it has none.
    static func hidingSecrets(inPath path: Substring) -> String? {
        guard path.utf8.contains(UInt8(ascii: ";")) else { return nil }
        for segment in path.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false) {
            if let hidden = hidingSecretPieces(in: Substring(segment), at: parameterSeparators) {
                return String(Substring(path.utf8[..<segment.startIndex])) + hidden
            }
        }
        return nil
    }

    private static let pieceSeparators: Set<UInt8> = [UInt8(ascii: ";"), UInt8(ascii: "#")]
    private static let parameterSeparators: Set<UInt8> = [UInt8(ascii: ";")]

    /// `text` up to its first secret-looking piece after the first (pieces end at any of
    /// `separators`), that piece shown as `name=REDACTED`; nil when no such piece names a secret.
    private static func hidingSecretPieces(in text: Substring, at separators: Set<UInt8>) -> String? {
        let pieces = text.utf8.split(omittingEmptySubsequences: false, whereSeparator: separators.contains)
        for piece in pieces.dropFirst() {
            if let hidden = hiddenPiece(Substring(piece), needsEquals: true) {
                return String(Substring(text.utf8[..<piece.startIndex])) + hidden
            }
        }
        return nil
    }

    /// `piece` shown as `name=REDACTED` when its name looks secret, or nil. The name is the piece
    /// as written up to its first `=`, or `%3D`: an escaped `=` was meant as one (`token%3Dabc`
    /// shows `token=REDACTED`, where the name would otherwise carry the secret). With
    /// `needsEquals`, a piece with neither is a value (`fields=id;keywords`) and names nothing.
    private static func hiddenPiece(_ piece: Substring, needsEquals: Bool) -> String? {
        let bytes = piece.utf8
        let equals = bytes.indices.first { bytes[$0] == UInt8(ascii: "=") || isEscapedEquals(bytes[$0...]) }
        if needsEquals, equals == nil { return nil }
        let name = Substring(bytes[..<(equals ?? bytes.endIndex)])
        return isSecret(URLParts.lenientlyDecoded(name.utf8)) ? "\(name)=REDACTED" : nil
    }

    /// Whether `bytes` start with `%3D` or `%3d`.
    private static func isEscapedEquals(_ bytes: Substring.UTF8View.SubSequence) -> Bool {
        var rest = bytes.makeIterator()
        return rest.next() == UInt8(ascii: "%") && rest.next() == UInt8(ascii: "3") && (rest.next().map { $0 | 0x20 } == UInt8(ascii: "d"))
    }

    /// Where the path of `text` starts, read from its bytes: after the authority when there is
    /// one (after `://`, or a leading `//`, up to the next `/`, `?` or `#`), else at its start.
    package static func pathStart(inText text: Substring) -> Substring.UTF8View.Index {
        let bytes = text.utf8
        guard let authority = authorityStart(bytes) else { return bytes.startIndex }
        return bytes[authority...].firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }
            ?? bytes.endIndex
    }

    /// Where the authority of `bytes` starts: after `://`, or after a leading `//`; nil without.
    private static func authorityStart(_ bytes: Substring.UTF8View) -> Substring.UTF8View.Index? {
        bytes.starts(with: "//".utf8)
            ? bytes.index(bytes.startIndex, offsetBy: 2)
            : bytes.indices.first { bytes[$0...].starts(with: "://".utf8) }.map { bytes.index($0, offsetBy: 3) }
    }

    /// A URL the parser refuses (a host holding what no host may, a password holding a `/`, a
    /// scheme-less `//user:pw@host`) is still shown without its user information — everything
    /// from the authority's start (after `://`, or a leading `//`) to the last `@` before the
    /// query — or its secret path parameters, query and fragment values, found in the bytes.
    static func hidingByText(_ text: String) -> String {
        let bytes = Substring(text).utf8
        var shown = Substring(text)
        if let start = authorityStart(bytes) {
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
        let withPath = Substring(beforeFragment.utf8[..<(question ?? beforeFragment.utf8.endIndex)])
        let pathStart = pathStart(inText: withPath)
        var path = Substring(withPath.utf8[pathStart...])
        var query = question.map { Substring(beforeFragment.utf8[beforeFragment.utf8.index(after: $0)...]) }
        if let hidden = hidingSecrets(inPath: path) { path = Substring(hidden) }
        if let hidden = query.flatMap({ hidingSecrets(inQuery: $0) }) { query = Substring(hidden) }
        return String(Substring(withPath.utf8[..<pathStart])) + path + (query.map { "?" + $0 } ?? "") + (fragment.map { "#" + $0 } ?? "")
    }

    /// A query name that holds a secret: one of `secretNames` inside it, in any case. One pass
    /// over the bytes, comparing only the names that start with each byte (every source's URL is
    /// asked at start: ten searches of it took 6 % of a start at 10,000 sources).
    package static func isSecret(_ name: String) -> Bool {
        let names = secretTable
        return ASCII.bytes(name) { text in
            for start in text.indices {
                var candidates = names.startingWith[Int(ASCII.lower(text[start]))]
                while candidates != 0 {
                    let span = names.spans[candidates.trailingZeroBitCount]
                    candidates &= candidates - 1
                    guard text.count - start >= span.count else { continue }
                    var offset = 1
                    while offset < span.count, ASCII.lower(text[start + offset]) == names.bytes[span.start + offset] {
                        offset += 1
                    }
                    if offset == span.count { return true }
                }
            }
            return false
        }
    }

    /// `secretNames` laid out for `isSecret`: their bytes one after another (small letters, as
    /// `isSecret` compares them), where each begins and how long it is, and for each byte the set
    /// of names (bit `i` for the `i`th) it starts.
    private struct SecretTable: Sendable {
        var bytes: [UInt8] = []
        var spans: [(start: Int, count: Int)] = []
        var startingWith = [UInt16](repeating: 0, count: 256)

        init(_ names: [String]) {
            precondition(names.count <= UInt16.bitWidth, "a name's bit must fit in UInt16")
            for name in names {
                guard let first = name.utf8.first else { continue }
                startingWith[Int(ASCII.lower(first))] |= 1 << spans.count
                spans.append((bytes.count, name.utf8.count))
                bytes += name.utf8.map(ASCII.lower)
            }
        }
    }

    private static let secretTable = SecretTable(secretNames)
}
