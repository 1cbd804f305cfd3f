/// Text from an upstream (an error body, a feed's parser message, a redirect target) made safe to
/// show anywhere: HTML, JSON, log lines and a terminal. Control characters are spelled out
/// instead of acting — ESC as `^[` (so `\u{1B}[31m` cannot recolour a terminal), other C0/C1
/// controls and DEL as `\u0000`-style escapes, bidirectional overrides as `\u202E` —, line breaks
/// and tabs become spaces, and invalid UTF-8 was already replaced by U+FFFD when decoded.
///
/// ```swift
/// PrintableText.escape("bad\u{0}\u{1B}[31mred")   // "bad\\u0000^[[31mred"
/// ```
public enum PrintableText {
    /// `text` with the characters above replaced; returned as it is when nothing needs escaping.
    public static func escape(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x0A, 0x0D, 0x09: out.append(" ")
            case 0x1B: out.append(contentsOf: "^[".unicodeScalars)
            default:
                if needsEscape(scalar) {
                    let hex = String(scalar.value, radix: 16, uppercase: true)
                    out.append(contentsOf: ("\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex).unicodeScalars)
                } else {
                    out.append(scalar)
                }
            }
        }
        return String(out)
    }

    static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: return true
        // Bidirectional embeddings, overrides and isolates: they reorder what follows them.
        case 0x202A...0x202E, 0x2066...0x2069, 0x200E, 0x200F, 0x061C: return true
        default: return false
        }
    }
}
