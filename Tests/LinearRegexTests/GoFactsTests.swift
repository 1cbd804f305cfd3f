import Foundation
import LinearRegex
import Testing

/// Every fact of `Fixtures/` (Go's regexp tests and RE2's, as go1.19 answers them) through RE2:
/// what Go compiles compiles, what it refuses is refused, and each match and its groups are Go's.
@Suite("Go's regexp facts")
struct GoFactsTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")

    /// The rows of a fixture, the first `json` fields decoded from their JSON literals, the rest
    /// as they are.
    static func rows(_ name: String, json: Int) throws -> [[Any?]] {
        let text = try String(contentsOf: fixtures.appendingPathComponent(name), encoding: .utf8)
        return try text.split(separator: "\n").map { line in
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            return try fields.enumerated().map { index, field -> Any? in
                guard index < json else { return field }
                let value = try JSONSerialization.jsonObject(with: Data(field.utf8), options: [.fragmentsAllowed])
                return value is NSNull ? nil : value
            }
        }
    }

    @Test(arguments: ["matches.tsv", "matches_extra.tsv"])
    func matchesAsGoDoes(_ fixture: String) throws {
        let rows = try GoFactsTests.rows(fixture, json: 4)
        #expect(rows.count > 100)
        for row in rows {
            guard let pattern = row[0] as? String, let text = row[1] as? String, let expected = row[2] as? Int else {
                Issue.record("a row of \(fixture) that is not pattern, text, 0 or 1: \(row)")
                continue
            }
            let regex: Regexp
            do {
                regex = try Regexp(pattern)
            } catch {
                Issue.record("\(pattern.debugDescription) does not compile: \(error) (\(row.last.flatMap { $0 as? String } ?? ""))")
                continue
            }
            #expect(regex.matches(text) == (expected == 1), "\(pattern.debugDescription) on \(text.debugDescription)")
            let found = regex.firstMatch(in: text)?[0].map(String.init)
            #expect(found == row[3] as? String, "\(pattern.debugDescription) on \(text.debugDescription): first match \(found.debugDescription)")
        }
    }

    @Test func capturesAsGoDoes() throws {
        for row in try GoFactsTests.rows("submatches.tsv", json: 3) {
            guard let pattern = row[0] as? String, let text = row[1] as? String, let groups = row[2] as? [Any] else { continue }
            let expected = groups.map { $0 as? String }
            let found = try Regexp(pattern).firstMatch(in: text).map { match in match.groups.map { $0.map(String.init) } }
            #expect(found == expected, "\(pattern.debugDescription) on \(text.debugDescription)")
        }
    }

    @Test func compilesWhatGoCompiles() throws {
        let rows = try GoFactsTests.rows("valid.tsv", json: 1)
        #expect(rows.count > 200)
        for row in rows {
            guard let pattern = row[0] as? String else { continue }
            #expect(throws: Never.self, "\(pattern.debugDescription)") { _ = try Regexp(pattern) }
        }
    }

    @Test func refusesWhatGoRefuses() throws {
        let rows = try GoFactsTests.rows("invalid.tsv", json: 1)
        #expect(rows.count > 50)
        for row in rows {
            guard let pattern = row[0] as? String else { continue }
            #expect(throws: Regexp.SyntaxError.self, "\(pattern.debugDescription) (\(row[1] as? String ?? ""))") { _ = try Regexp(pattern) }
        }
    }
}
