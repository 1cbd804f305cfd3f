/// What text people write for others to read (an announcement, a maintenance note, the page's
/// title) may hold: no control characters but line breaks and tabs where several lines are
/// allowed, and no bidirectional overrides, which would show a reader text in another order than
/// it was written. Such a character is refused, never stripped: a text is kept whole or not at
/// all (a NUL once cut a stored note short without a word).
package enum DisplayText {
    /// Why `text` cannot be shown, naming the first offending character, or nil.
    package static func problem(_ text: String, multiline: Bool) -> String? {
        for scalar in text.unicodeScalars {
            let allowed = multiline && (scalar == "\n" || scalar == "\t" || scalar == "\r")
            if scalar.properties.generalCategory == .control && !allowed {
                let breaksLine = scalar == "\n" || scalar == "\r"
                return breaksLine ? "must be one line (found \(name(scalar)))" : "must not hold control characters (found \(name(scalar)))"
            }
            if isBidiControl(scalar) { return "must not hold bidirectional controls (found \(name(scalar))), which reorder what a reader sees" }
        }
        return nil
    }

    /// U+202A–U+202E (embeddings and overrides) and U+2066–U+2069 (isolates).
    static func isBidiControl(_ scalar: Unicode.Scalar) -> Bool {
        (0x202A...0x202E).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value)
    }

    static func name(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }
}
