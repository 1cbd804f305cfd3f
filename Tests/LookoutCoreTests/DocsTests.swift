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
}
