internal import CRE2

/// A regular expression in Go's syntax, matched by Google's RE2 in time linear in its input:
/// what blackbox_exporter's patterns mean in Go's `regexp`, with no pattern and no input able to
/// make a match backtrack. Immutable; match it from any thread. Knows nothing of Lookout.
///
/// ```swift
/// let version = try Regexp(#"^(?P<major>\d+)\.(\d+)"#)
/// version.matches("2.41 (stable)")                           // true
/// version.firstMatch(in: "2.41")?["major"]                   // "2"
/// ```
public final class Regexp: Sendable {
    /// The pattern as written.
    public let pattern: String
    /// RE2 objects are immutable after construction and documented as safe to match from many
    /// threads at once; the handle is freed only in `deinit`.
    private nonisolated(unsafe) let handle: OpaquePointer
    /// The number of capturing groups, not counting the whole match.
    public let groupCount: Int

    /// The most memory a compiled program and its matching caches may take (RE2's default).
    public static let defaultMaxMemory = 8 << 20

    /// Compiles `pattern`, or throws what is wrong with it and where.
    public init(_ pattern: String, maxMemory: Int = Regexp.defaultMaxMemory) throws(SyntaxError) {
        if let error = Regexp.goOnly(pattern) { throw error }
        var error = lookout_re2_error()
        var text = pattern
        let compiled = text.withUTF8 { bytes in
            bytes.withMemoryRebound(to: CChar.self) { chars in
                lookout_re2_compile(chars.baseAddress, chars.count, Int64(maxMemory), &error)
            }
        }
        guard let compiled else { throw SyntaxError(pattern: pattern, re2: error) }
        self.pattern = pattern
        self.handle = compiled
        self.groupCount = Int(lookout_re2_group_count(compiled))
    }

    deinit { lookout_re2_free(handle) }

    /// RE2's measure of what matching this pattern costs: the size of its compiled program.
    public var programSize: Int { Int(lookout_re2_program_size(handle)) }

    /// Whether the pattern matches somewhere in `text` (Go's `MatchString`).
    public func matches(_ text: String) -> Bool {
        search(text, whole: false, groups: 0) != nil
    }

    /// Whether the pattern matches all of `text`, from its first byte to its last.
    public func matchesWhole(_ text: String) -> Bool {
        search(text, whole: true, groups: 0) != nil
    }

    /// The leftmost match in `text` with what each group captured (Go's `FindStringSubmatch`),
    /// or nil.
    public func firstMatch(in text: String) -> Match? {
        guard let offsets = search(text, whole: false, groups: groupCount + 1) else { return nil }
        let utf8 = text.utf8
        var groups: [Substring?] = []
        groups.reserveCapacity(groupCount + 1)
        for index in 0...groupCount {
            let start = offsets[2 * index]
            let end = offsets[2 * index + 1]
            guard start >= 0, end >= start, end <= utf8.count else {
                groups.append(nil)
                continue
            }
            let lower = utf8.index(utf8.startIndex, offsetBy: Int(start))
            let upper = utf8.index(lower, offsetBy: Int(end - start))
            groups.append(Substring(utf8[lower..<upper]))
        }
        return Match(groups: groups, regexp: self)
    }

    /// The number of the group named `name` (`(?P<name>…)`), or nil.
    public func groupNumber(named name: String) -> Int? {
        var name = name
        let number = name.withUTF8 { bytes in
            bytes.withMemoryRebound(to: CChar.self) { lookout_re2_group_named(handle, $0.baseAddress, $0.count) }
        }
        return number < 0 ? nil : Int(number)
    }

    /// The byte offsets of the match and its groups, or nil for no match.
    private func search(_ text: String, whole: Bool, groups: Int) -> [Int64]? {
        var text = text
        var offsets = [Int64](repeating: -1, count: 2 * groups)
        let found = text.withUTF8 { bytes in
            bytes.withMemoryRebound(to: CChar.self) { chars in
                offsets.withUnsafeMutableBufferPointer { offsets in
                    lookout_re2_match(handle, chars.baseAddress, chars.count, whole ? 1 : 0, offsets.baseAddress, Int32(groups))
                }
            }
        }
        return found == 1 ? offsets : nil
    }

    /// What one match found: the whole match (group 0) and each group's capture.
    public struct Match: Sendable {
        /// Group 0 is the whole match; nil for a group that took no part in it.
        public let groups: [Substring?]
        let regexp: Regexp

        /// What group `number` captured, or nil.
        public subscript(number: Int) -> Substring? {
            groups.indices.contains(number) ? groups[number] : nil
        }

        /// What the group named `name` captured, or nil.
        public subscript(name: String) -> Substring? {
            regexp.groupNumber(named: name).flatMap { self[$0] }
        }
    }
}
