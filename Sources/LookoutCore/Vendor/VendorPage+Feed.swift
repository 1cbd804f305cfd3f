/// Reading an incident history feed (`/history.atom`, `/history.rss`, as Statuspage and Lookout
/// publish them). The document must first be well-formed (`FeedScanner`); then each `entry` or
/// `item` gives an incident: its title, link, times, and the first update in its content, which
/// Statuspage writes newest first as `<strong>Resolved</strong> - words`.
extension VendorPage {
    /// The words a history feed's latest update starts with when the incident is over.
    static let closedLabels: Set<String> = ["resolved", "completed", "postmortem"]
    static let maintenanceLabels: Set<String> = ["scheduled", "in progress", "verifying", "completed"]
    /// An entry whose content names no state counts as open for this long after its last update.
    static let unlabelledOpenMs: Int64 = 2 * 3_600_000

    static func parseFeed(_ bytes: [UInt8], nowMs: Int64 = Timestamp.nowMs()) -> Result<VendorPage, Problem> {
        switch FeedScanner.scan(bytes) {
        case .failure(let problem): return .failure(Problem(message: "the feed is not well-formed XML (line \(problem.line): \(problem.message))"))
        case .success(let shape):
            guard ["feed", "rss", "RDF"].contains(shape.root) else {
                return .failure(Problem(message: "the document is <\(printable(shape.root))>, not a feed"))
            }
        }
        let document = XMLSlice(bytes: bytes[...])
        var incidents: [Incident] = []
        for entry in document.elements(named: ["entry", "item"]).prefix(maxItems) {
            guard let title = entry.child("title").map({ text($0.text) ?? "" }), !title.isEmpty else { continue }
            let link = entry.child("link").flatMap { $0.attribute("href") ?? $0.text }.flatMap(link)
            let id = entry.child("id")?.text ?? entry.child("guid")?.text ?? link ?? title
            let updated = (entry.child("updated") ?? entry.child("pubDate") ?? entry.child("published")).flatMap { time($0.text) }
            let started = (entry.child("published") ?? entry.child("pubDate")).flatMap { time($0.text) }
            let html = (entry.child("content") ?? entry.child("description") ?? entry.child("summary"))?.text ?? ""
            let (label, words) = latestUpdate(html)
            let maintenance = html.contains("THIS IS A SCHEDULED EVENT") || (label.map { maintenanceLabels.contains($0) && $0 != "completed" } ?? false)
            let open = label.map { !closedLabels.contains($0) } ?? ((updated ?? started).map { nowMs - $0 < unlabelledOpenMs } ?? false)
            guard open else { continue }
            incidents.append(
                Incident(
                    id: printable(id), name: title, status: label.map { $0.replacingOccurrences(of: " ", with: "_") } ?? "investigating",
                    impact: maintenance ? .maintenance : .degraded, latestUpdate: words, shortlink: link, startedAtMs: started ?? updated,
                    updatedAtMs: updated, isMaintenance: maintenance))
        }
        let incidentsOpen = incidents.contains { !$0.isMaintenance }
        let maintenanceNow = incidents.contains { $0.isMaintenance && $0.status != "scheduled" }
        let name = document.elements(named: ["title"]).first.map { plain($0.text) }
        return .success(
            VendorPage(
                format: .feed, name: name, level: incidentsOpen ? .degraded : maintenanceNow ? .maintenance : .operational, incidents: incidents))
    }

    /// The label and words of the first update in a Statuspage-style content:
    /// `<p><small>…</small><br><strong>Resolved</strong> - This incident has been resolved.</p>`.
    static func latestUpdate(_ html: String) -> (label: String?, words: String?) {
        guard let open = html.range(of: "<strong>"), let close = html.range(of: "</strong>", range: open.upperBound..<html.endIndex) else {
            let words = plain(html)
            return (nil, words.isEmpty ? nil : words)
        }
        let label = plain(String(html[open.upperBound..<close.lowerBound])).lowercased()
        var rest = html[close.upperBound...]
        if let end = rest.range(of: "</p>") { rest = rest[..<end.lowerBound] }
        var words = plain(String(rest))
        if words.hasPrefix("- ") { words.removeFirst(2) }
        return (label.isEmpty ? nil : label, words.isEmpty ? nil : words)
    }
}

/// A part of a well-formed XML document, searched by element name (prefixes ignored). For the
/// few elements a feed entry has; not a general XML reader.
package struct XMLSlice {
    var bytes: ArraySlice<UInt8>
    /// The start tag's attributes, as written.
    var attributes: ArraySlice<UInt8> = []

    /// The elements named one of `names` directly or deeper inside, not nested in each other.
    func elements(named names: Set<String>) -> [XMLSlice] {
        var found: [XMLSlice] = []
        var index = bytes.startIndex
        while let element = next(named: names, from: &index) { found.append(element) }
        return found
    }

    /// The first element called `name` inside.
    func child(_ name: String) -> XMLSlice? {
        var index = bytes.startIndex
        return next(named: [name], from: &index)
    }

    /// The text inside: entities decoded outside CDATA sections, a CDATA section as written
    /// (its `&amp;` is the HTML's own: decoding it here too decoded it twice).
    var text: String {
        var out = ""
        var run: [UInt8] = []
        func flush() {
            out += XMLSlice.decodeEntities(String(decoding: run, as: UTF8.self))
            run.removeAll(keepingCapacity: true)
        }
        var index = bytes.startIndex
        while index < bytes.endIndex {
            if bytes[index] == UInt8(ascii: "<"), starts("<![CDATA[", at: index), let end = find("]]>", from: index + 9) {
                flush()
                out += String(decoding: bytes[(index + 9)..<(end - 3)], as: UTF8.self)
                index = end
            } else if bytes[index] == UInt8(ascii: "<"), let close = bytes[index...].firstIndex(of: UInt8(ascii: ">")) {
                index = close + 1  // a tag inside: dropped
            } else {
                run.append(bytes[index])
                index += 1
            }
        }
        flush()
        return out
    }

    /// An attribute's value from the start tag, entities decoded.
    func attribute(_ name: String) -> String? {
        let text = String(decoding: attributes, as: UTF8.self)
        for quote in ["\"", "'"] {
            guard let start = text.range(of: " \(name)=\(quote)") ?? text.range(of: "\t\(name)=\(quote)") ?? text.range(of: "\n\(name)=\(quote)"),
                let end = text.range(of: quote, range: start.upperBound..<text.endIndex)
            else { continue }
            return XMLSlice.decodeEntities(String(text[start.upperBound..<end.lowerBound]))
        }
        return nil
    }

    /// One pass, left to right: `&amp;lt;` is `&lt;`, never `<` (a replacement per entity in
    /// turn decoded what an earlier one made).
    package static func decodeEntities(_ text: String) -> String {
        guard text.contains("&") else { return text }
        let entities: [Substring: String] = ["&lt;": "<", "&gt;": ">", "&quot;": "\"", "&apos;": "'", "&#39;": "'", "&nbsp;": " ", "&amp;": "&"]
        var out = ""
        var rest = Substring(text)
        while let amp = rest.firstIndex(of: "&") {
            out += rest[..<amp]
            let candidate = rest[amp...].prefix(7)
            if let semicolon = candidate.firstIndex(of: ";"), let decoded = entities[rest[amp...semicolon]] {
                out += decoded
                rest = rest[rest.index(after: semicolon)...]
            } else {
                out += "&"
                rest = rest[rest.index(after: amp)...]
            }
        }
        return out + rest
    }

    private func next(named names: Set<String>, from index: inout Int) -> XMLSlice? {
        while index < bytes.endIndex {
            guard let open = bytes[index...].firstIndex(of: UInt8(ascii: "<")) else { break }
            index = open + 1
            if starts("<![CDATA[", at: open), let end = find("]]>", from: open + 9) {
                index = end
                continue
            }
            if starts("<!--", at: open), let end = find("-->", from: open + 4) {
                index = end
                continue
            }
            var nameEnd = open + 1
            while nameEnd < bytes.endIndex, ![0x20, 0x09, 0x0A, 0x0D, UInt8(ascii: ">"), UInt8(ascii: "/")].contains(bytes[nameEnd]) { nameEnd += 1 }
            let qualified = bytes[(open + 1)..<nameEnd]
            let local = qualified.lastIndex(of: UInt8(ascii: ":")).map { qualified[($0 + 1)...] } ?? qualified
            guard let tagEnd = bytes[nameEnd...].firstIndex(of: UInt8(ascii: ">")) else { break }
            guard names.contains(String(decoding: local, as: UTF8.self)), bytes[open + 1] != UInt8(ascii: "/") else { continue }
            let attributes = bytes[nameEnd..<tagEnd]
            if bytes[tagEnd - 1] == UInt8(ascii: "/") {
                index = tagEnd + 1
                return XMLSlice(bytes: bytes[tagEnd..<tagEnd], attributes: attributes.dropLast())
            }
            let closing = Array("</".utf8) + Array(qualified)
            guard let end = find(closing, from: tagEnd + 1) else { break }
            index = end
            return XMLSlice(bytes: bytes[(tagEnd + 1)..<(end - closing.count)], attributes: attributes)
        }
        index = bytes.endIndex
        return nil
    }

    private func starts(_ prefix: String, at offset: Int) -> Bool {
        let prefix = Array(prefix.utf8)
        return offset + prefix.count <= bytes.endIndex && bytes[offset..<(offset + prefix.count)].elementsEqual(prefix)
    }

    /// The offset just past `terminator` at or after `from`, or nil.
    private func find(_ terminator: String, from: Int) -> Int? { find(Array(terminator.utf8), from: from) }

    private func find(_ terminator: [UInt8], from: Int) -> Int? {
        var position = from
        while position + terminator.count <= bytes.endIndex {
            if bytes[position] == terminator[0] && bytes[position..<(position + terminator.count)].elementsEqual(terminator) {
                return position + terminator.count
            }
            position += 1
        }
        return nil
    }
}
