/// Escapes text for HTML element content and attribute values.
package enum HTML {
    package static func escape(_ text: String) -> String {
        // Byte-wise: every character that needs escaping is ASCII, and walking Characters
        // (grapheme clusters) cost a third of the status page's time.
        let utf8 = text.utf8
        guard utf8.contains(where: { $0 == 0x3C || $0 == 0x3E || $0 == 0x26 || $0 == 0x22 || $0 == 0x27 }) else { return text }
        var out: [UInt8] = []
        out.reserveCapacity(utf8.count + 16)
        for byte in utf8 {
            switch byte {
            case 0x3C: out.append(contentsOf: "&lt;".utf8)
            case 0x3E: out.append(contentsOf: "&gt;".utf8)
            case 0x26: out.append(contentsOf: "&amp;".utf8)
            case 0x22: out.append(contentsOf: "&quot;".utf8)
            case 0x27: out.append(contentsOf: "&#39;".utf8)
            default: out.append(byte)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// A page being written, as UTF-8 bytes: each appended piece is copied once, and the server
/// sends the bytes as they are (a page for 1,000 sources is several megabytes).
struct HTMLOutput {
    var bytes: [UInt8] = []

    init(capacity: Int) {
        bytes.reserveCapacity(capacity)
    }

    static func += (output: inout HTMLOutput, text: String) {
        output.bytes.append(contentsOf: text.utf8)
    }
}
