import Foundation
import ResilientHTTP

extension SourceKind {
    package static let rss = SourceKind(declaring: "rss")
}

/// `kind: rss`: the body must be a well-formed RSS or Atom feed, with `expect.min_items` items.
package enum FeedProber: Prober {
    package static let kind = SourceKind.rss
    package static let summary = "a well-formed RSS or Atom feed with enough items"
    package static let ownKeys = ["expect.min_items"]
    package static let checksAnswer = true

    package static func check(_ result: TransferResult, _ source: SourceConfig) -> Failure? {
        feed(result.body, minItems: source.expect.minItems)
    }

    /// The body must be a well-formed RSS or Atom feed with at least `minItems` items.
    package static func feed(_ body: [UInt8], minItems: Int? = nil) -> Failure? {
        let shape: FeedScanner.Shape
        switch FeedScanner.scan(utf8Document(body)) {
        case .success(let scanned): shape = scanned
        case .failure(let problem):
            return Failure(
                category: .invalidResponse, reason: "xml_invalid",
                detail: "the feed is not well-formed XML (line \(problem.line): \(problem.message))")
        }
        guard ["rss", "feed", "RDF"].contains(shape.root) else {
            return Failure(category: .invalidResponse, reason: "xml_invalid", detail: "the document is XML but not an RSS or Atom feed")
        }
        if let minItems, shape.items < minItems {
            return Failure(
                category: .invalidResponse, reason: "too_few_items",
                detail: "the feed has \(shape.items) item\(shape.items == 1 ? "" : "s"), fewer than the \(minItems) expected")
        }
        return nil
    }

    /// The document as valid UTF-8 (names and text compare as UTF-8 from then on):
    /// UTF-16 with a byte-order mark and the single-byte encodings feeds declare are decoded, and
    /// anything else is read as UTF-8 with invalid bytes replaced by U+FFFD.
    static func utf8Document(_ body: [UInt8]) -> [UInt8] {
        var text: String
        if body.starts(with: [0xFE, 0xFF]) || body.starts(with: [0xFF, 0xFE]) {
            let bigEndian = body[0] == 0xFE
            var units: [UInt16] = []
            units.reserveCapacity(body.count / 2)
            for index in stride(from: 2, to: body.count - 1, by: 2) {
                let first = UInt16(body[index])
                let second = UInt16(body[index + 1])
                units.append(bigEndian ? first << 8 | second : second << 8 | first)
            }
            text = String(decoding: units, as: UTF16.self)
        } else if ["iso-8859-1", "latin1", "latin-1", "us-ascii", "ascii", "windows-1252"].contains(declaredEncoding(body)) {
            text = String(String.UnicodeScalarView(body.map { Unicode.Scalar($0) }))
        } else {
            text = String(decoding: body, as: UTF8.self)
        }
        if text.hasPrefix("\u{FEFF}") { text.removeFirst() }
        return Array(text.utf8)
    }

    /// The `encoding` of an XML declaration, lowercased; nil without one.
    static func declaredEncoding(_ body: [UInt8]) -> String? {
        let head = String(decoding: body.prefix(200), as: UTF8.self).lowercased()
        guard head.hasPrefix("<?xml"), let end = head.range(of: "?>"),
            let encoding = head[..<end.lowerBound].range(of: "encoding=")
        else { return nil }
        return String(head[encoding.upperBound...].dropFirst().prefix { $0 != "\"" && $0 != "'" })
    }
}
