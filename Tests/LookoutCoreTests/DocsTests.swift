import Foundation
import LookoutAlerting
import LookoutCore
import Testing

/// The README and docs/ stay true: every relative link reaches a file (and its heading, when it
/// names one), and every YAML example that is a whole config (it has `sources:`) loads.
@Suite("docs")
struct DocsTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static var pages: [URL] {
        let docs = (try? FileManager.default.contentsOfDirectory(at: root.appendingPathComponent("docs"), includingPropertiesForKeys: nil)) ?? []
        return [root.appendingPathComponent("README.md")] + docs.filter { $0.pathExtension == "md" }.sorted { $0.path < $1.path }
    }

    /// GitHub's anchor of a heading: lowercased, punctuation dropped, spaces to hyphens.
    static func slug(_ heading: String) -> String {
        String(
            heading.lowercased().compactMap { character -> Character? in
                if character == " " { return "-" }
                return character.isLetter || character.isNumber || character == "-" || character == "_" ? character : nil
            })
    }

    static func anchors(_ text: String) -> Set<String> {
        var anchors = Set<String>()
        var inCode = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") { inCode.toggle() }
            guard !inCode, line.hasPrefix("#") else { continue }
            anchors.insert(slug(line.drop { $0 == "#" }.trimmingCharacters(in: .whitespaces)))
        }
        return anchors
    }

    @Test func everyRelativeLinkReachesItsFileAndHeading() throws {
        #expect(Self.pages.count >= 8)
        let link = try NSRegularExpression(pattern: #"\]\(([^)\s]+)\)"#)
        var checked = 0
        for page in Self.pages {
            // Inline code is not a link: "an upstream's `[x](url)`".
            let text = try String(contentsOf: page, encoding: .utf8).replacingOccurrences(of: "`[^`\n]*`", with: "", options: .regularExpression)
            for match in link.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                let target = String(text[Range(match.range(at: 1), in: text)!])
                guard !target.contains("://"), !target.hasPrefix("mailto:") else { continue }
                let parts = target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
                let file = parts[0].isEmpty ? page : page.deletingLastPathComponent().appendingPathComponent(String(parts[0])).standardized
                #expect(FileManager.default.fileExists(atPath: file.path), "\(page.lastPathComponent): \(target) does not exist")
                if parts.count == 2, file.pathExtension == "md", let linked = try? String(contentsOf: file, encoding: .utf8) {
                    #expect(Self.anchors(linked).contains(String(parts[1])), "\(page.lastPathComponent): \(target) names no heading")
                }
                checked += 1
            }
        }
        #expect(checked > 20)
    }

    /// Every example names its secrets by file or `${ENV}`: the test gives each a stand-in (a URL
    /// for names that end in `url`/`URL`), so what fails is the example itself.
    @Test func everyWholeConfigExampleLoads() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("docs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        func standIn(_ name: String) -> String { name.lowercased().hasSuffix("url") ? "https://example.invalid/hooks/T0/B0/x" : "stand-in-secret" }
        let fileKey = try NSRegularExpression(pattern: #"(\w+)_file:\s*"?([^"\s,}]+)"#)
        let variable = try NSRegularExpression(pattern: #"\$\{(\w+)\}"#)
        var loaded = 0
        for page in Self.pages {
            let text = try String(contentsOf: page, encoding: .utf8)
            for block in text.components(separatedBy: "```yaml\n").dropFirst() {
                let yaml = block.components(separatedBy: "\n```")[0]
                guard yaml.split(separator: "\n").contains(where: { $0.hasPrefix("sources:") }) else { continue }
                let range = NSRange(yaml.startIndex..., in: yaml)
                var environment: [String: String] = [:]
                for match in variable.matches(in: yaml, range: range) {
                    let name = String(yaml[Range(match.range(at: 1), in: yaml)!])
                    environment[name] = standIn(name)
                }
                for match in fileKey.matches(in: yaml, range: range) {
                    let key = String(yaml[Range(match.range(at: 1), in: yaml)!])
                    let path = String(yaml[Range(match.range(at: 2), in: yaml)!])
                    guard !path.hasPrefix("/"), key != "ca", key != "probe_modules" else { continue }
                    let file = directory.appendingPathComponent(path)
                    try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
                    try (standIn(key) + "\n").write(to: file, atomically: true, encoding: .utf8)
                }
                do {
                    _ = try ConfigLoader.parse(
                        yaml, file: page.lastPathComponent, directory: directory.path, environment: environment, hooks: NotificationProviders.hookKinds)
                    loaded += 1
                } catch {
                    Issue.record("\(page.lastPathComponent): an example does not load: \(error)\n\(yaml)")
                }
            }
        }
        #expect(loaded >= 2)
    }

    /// The config keys the reader knows, as its sources declare them: every `enum …: String,
    /// ConfigKey` under Sources/, each case's raw value (`case maxBytes = "max_bytes"`, or the
    /// case's own name).
    static func declaredConfigKeys() throws -> [(file: String, key: String)] {
        let sources = root.appendingPathComponent("Sources")
        let declaration = try NSRegularExpression(pattern: #"enum \w+: String, ConfigKey \{"#)
        let caseLine = try NSRegularExpression(pattern: #"\bcase ([^\n{}]+)"#)
        var keys: [(file: String, key: String)] = []
        for case let file as URL in FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)! where file.pathExtension == "swift" {
            let text = try String(contentsOf: file, encoding: .utf8)
            for match in declaration.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                // The enum's body: up to its closing brace.
                var depth = 1
                var index = Range(match.range, in: text)!.upperBound
                let start = index
                while depth > 0, index < text.endIndex {
                    if text[index] == "{" { depth += 1 }
                    if text[index] == "}" { depth -= 1 }
                    index = text.index(after: index)
                }
                let body = String(text[start..<index])
                for line in caseLine.matches(in: body, range: NSRange(body.startIndex..., in: body)) {
                    for part in body[Range(line.range(at: 1), in: body)!].split(separator: ",") {
                        let named = part.split(separator: "=", maxSplits: 1)
                        let key = (named.count == 2 ? named[1] : named[0]).trimmingCharacters(in: CharacterSet(charactersIn: " `\""))
                        if key.allSatisfy({ $0.isLowercase || $0.isNumber || $0 == "_" }) && !key.isEmpty {
                            keys.append((file.lastPathComponent, key))
                        }
                    }
                }
            }
        }
        return keys
    }

    /// A key the reader accepts is a key a user can find: each one is named somewhere in the
    /// README or docs/ (configuration.md, or the page of the feature it belongs to).
    @Test func everyConfigKeyIsDocumented() throws {
        let docs = try Self.pages.map { try String(contentsOf: $0, encoding: .utf8) }.joined(separator: "\n")
        let keys = try Self.declaredConfigKeys()
        #expect(keys.count > 150, "the scan of Sources/ found \(keys.count) keys")
        #expect(keys.contains { $0.key == "max_bytes" } && keys.contains { $0.key == "evaluation_interval" })
        for (file, key) in keys {
            let named = docs.range(of: "\\b\(key)\\b", options: .regularExpression) != nil
            #expect(named, "\(key) (read in \(file)) is in no page of the docs")
        }
    }
}
