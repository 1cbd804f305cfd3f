/// Checks what a feed check needs of an XML document — that its elements nest and close, which
/// element is the root, how many `item`/`entry` elements it has — in one linear pass over the
/// bytes, without recursion, without expanding an entity and without reading a DTD.
///
/// It replaces FoundationXML's `XMLParser` here: fuzzing found that one trapping on element names
/// that are not UTF-8, reading a NULL for a processing instruction without data, and leaking
/// memory on every malformed document — all reachable from any upstream's body.
///
/// ```swift
/// switch FeedScanner.scan(Array("<rss><channel><item/></channel></rss>".utf8)) {
/// case .success(let shape): print(shape.root, shape.items)   // rss 1
/// case .failure(let problem): print(problem.line, problem.message)
/// }
/// ```
package enum FeedScanner {
    package struct Shape: Sendable, Equatable {
        /// The root element's local name (`rss`, `feed`, `RDF`…): prefixes are dropped.
        package var root: String
        /// Elements named `item` or `entry`, with any prefix.
        package var items: Int

        package init(root: String, items: Int) {
            self.root = root
            self.items = items
        }
    }

    package struct Problem: Error, Sendable, Equatable {
        package var line: Int
        package var message: String

        package init(line: Int, message: String) {
            self.line = line
            self.message = message
        }
    }

    package static func scan(_ bytes: [UInt8]) -> Result<Shape, Problem> {
        var open: [ArraySlice<UInt8>] = []
        var root: String?
        var rootClosed = false
        var items = 0
        var index = 0
        let count = bytes.count
        func problem(_ message: String, at offset: Int) -> Result<Shape, Problem> {
            let line = 1 + bytes[..<min(offset, count)].reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
            return .failure(Problem(line: line, message: message))
        }
        /// The offset just past `terminator` at or after `from`, or nil.
        func find(_ terminator: [UInt8], from: Int) -> Int? {
            var position = from
            while position + terminator.count <= count {
                if bytes[position] == terminator[0] && bytes[position..<(position + terminator.count)].elementsEqual(terminator) {
                    return position + terminator.count
                }
                position += 1
            }
            return nil
        }
        func starts(_ prefix: String, at offset: Int) -> Bool {
            let prefix = Array(prefix.utf8)
            return offset + prefix.count <= count && bytes[offset..<(offset + prefix.count)].elementsEqual(prefix)
        }
        /// The offset of the ">" that ends a tag or declaration begun before `from`, skipping quoted
        /// text and, for a declaration (`nested`), an internal subset in brackets; `count` if none.
        func closingBracket(from: Int, nested: Bool) -> Int {
            var position = from
            var depth = 0
            var quote: UInt8?
            while position < count {
                let current = bytes[position]
                if let open = quote {
                    if current == open { quote = nil }
                } else if current == UInt8(ascii: "\"") || current == UInt8(ascii: "'") {
                    quote = current
                } else if nested && current == UInt8(ascii: "[") {
                    depth += 1
                } else if nested && current == UInt8(ascii: "]") {
                    depth -= 1
                } else if current == UInt8(ascii: ">") && depth <= 0 {
                    return position
                }
                position += 1
            }
            return count
        }
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
        func localName(_ name: ArraySlice<UInt8>) -> String {
            let local = name.lastIndex(of: UInt8(ascii: ":")).map { name[($0 + 1)...] } ?? name
            return String(decoding: local, as: UTF8.self)
        }

        while index < count {
            let byte = bytes[index]
            guard byte == UInt8(ascii: "<") else {
                if (root == nil || rootClosed) && !isSpace(byte) {
                    return problem(root == nil ? "text before the root element" : "text after the root element", at: index)
                }
                index += 1
                continue
            }
            if starts("<!--", at: index) {
                guard let end = find(Array("-->".utf8), from: index + 4) else { return problem("a comment is not closed", at: index) }
                index = end
            } else if starts("<![CDATA[", at: index) {
                guard !open.isEmpty else { return problem("CDATA outside the root element", at: index) }
                guard let end = find(Array("]]>".utf8), from: index + 9) else { return problem("a CDATA section is not closed", at: index) }
                index = end
            } else if starts("<?", at: index) {
                guard let end = find(Array("?>".utf8), from: index + 2) else { return problem("a processing instruction is not closed", at: index) }
                index = end
            } else if starts("<!", at: index) {
                // A declaration (DOCTYPE): skipped whole, its internal subset and quoted parts included.
                guard root == nil else { return problem("a declaration inside the document", at: index) }
                let position = closingBracket(from: index + 2, nested: true)
                guard position < count else { return problem("a declaration is not closed", at: index) }
                index = position + 1
            } else if starts("</", at: index) {
                guard let close = bytes[(index + 2)...].firstIndex(of: UInt8(ascii: ">")) else {
                    return problem("an end tag is not closed", at: index)
                }
                var nameEnd = close
                while nameEnd > index + 2, isSpace(bytes[nameEnd - 1]) { nameEnd -= 1 }
                let name = bytes[(index + 2)..<nameEnd]
                guard let last = open.last else {
                    return problem("</\(String(decoding: name, as: UTF8.self))> closes nothing", at: index)
                }
                guard last.elementsEqual(name) else {
                    return problem("</\(String(decoding: name, as: UTF8.self))> closes <\(String(decoding: last, as: UTF8.self))>", at: index)
                }
                open.removeLast()
                if open.isEmpty { rootClosed = true }
                index = close + 1
            } else {
                var position = index + 1
                while position < count, !isSpace(bytes[position]), bytes[position] != UInt8(ascii: "/"), bytes[position] != UInt8(ascii: ">") {
                    position += 1
                }
                let name = bytes[(index + 1)..<position]
                guard !name.isEmpty, name.first != UInt8(ascii: "<") else { return problem("\"<\" is not followed by a name", at: index) }
                guard !rootClosed else { return problem("a second root element <\(String(decoding: name, as: UTF8.self))>", at: index) }
                // Attributes: quoted values may hold ">" and "/".
                position = closingBracket(from: position, nested: false)
                guard position < count else { return problem("the document ends inside <\(String(decoding: name, as: UTF8.self))>", at: index) }
                let selfClosing = bytes[position - 1] == UInt8(ascii: "/") && position - 1 > index + name.count
                let local = localName(name)
                if root == nil { root = local }
                if local == "item" || local == "entry" { items += 1 }
                if selfClosing {
                    if open.isEmpty { rootClosed = true }
                } else {
                    open.append(name)
                }
                index = position + 1
            }
        }
        guard let root else { return problem("the document has no elements", at: count) }
        if let last = open.last { return problem("the document ends inside <\(String(decoding: last, as: UTF8.self))>", at: count) }
        return .success(Shape(root: root, items: items))
    }
}
