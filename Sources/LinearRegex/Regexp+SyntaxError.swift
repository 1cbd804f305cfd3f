internal import CRE2

extension Regexp {
    /// Why a pattern is not a regular expression in Go's syntax: RE2's words, where in the pattern
    /// (a character offset, from 0), and what to write instead when the pattern asks for what
    /// backtracking engines have and RE2 and Go leave out.
    ///
    /// ```swift
    /// do { _ = try Regexp(#"(a)\1"#) } catch { print(error) }
    /// // invalid escape sequence \1 at offset 3 (backreferences are not in Go's syntax: …)
    /// ```
    public struct SyntaxError: Error, Sendable, CustomStringConvertible {
        /// The pattern that did not compile.
        public let pattern: String
        /// RE2's (or Go's) words for what is wrong.
        public let message: String
        /// The part of the pattern the message names, if any.
        public let argument: String
        /// Where `argument` starts in `pattern`, in characters from 0.
        public let offset: Int?
        /// The pattern is valid but its program is larger than the memory it may take: Go would
        /// compile it, so this refusal is Lookout's, not blackbox_exporter's.
        public let isTooLarge: Bool

        init(pattern: String, message: String, argument: String, isTooLarge: Bool = false) {
            self.pattern = pattern
            self.message = message
            self.argument = argument
            self.isTooLarge = isTooLarge
            self.offset = SyntaxError.offset(of: argument, in: pattern)
        }

        init(pattern: String, re2 error: lookout_re2_error) {
            var error = error
            let message = withUnsafeBytes(of: &error.message) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
            let argument = withUnsafeBytes(of: &error.argument) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
            // RE2 says "invalid escape sequence: \1"; the argument follows the colon already.
            let words = message.split(separator: ":", maxSplits: 1).first.map(String.init) ?? message
            // RE2::ErrorPatternTooLarge, the last of RE2's error codes.
            self.init(pattern: pattern, message: words, argument: argument, isTooLarge: error.code == 15)
        }

        /// Where `part` first appears in `pattern`, in characters, or nil.
        static func offset(of part: String, in pattern: String) -> Int? {
            guard !part.isEmpty else { return nil }
            let characters = Array(pattern)
            let wanted = Array(part)
            guard wanted.count <= characters.count else { return nil }
            return (0...(characters.count - wanted.count)).first { characters[$0..<($0 + wanted.count)].elementsEqual(wanted) }
        }

        /// What backtracking engines accept and RE2, like Go, refuses, with the way around it.
        public var hint: String? {
            let argument = self.argument
            if argument.hasPrefix("\\"), let digit = argument.dropFirst().first, digit.isNumber {
                return "backreferences are not in Go's syntax (RE2); capture and compare in two steps, or match the repeated text literally"
            }
            if ["(?=", "(?!", "(?<=", "(?<!"].contains(where: { argument.hasPrefix($0) }) {
                return "lookaround is not in Go's syntax (RE2); use fail_if_body_matches_regexp beside fail_if_body_not_matches_regexp instead"
            }
            if argument.hasPrefix("(?>") { return "atomic groups are not in Go's syntax (RE2)" }
            if argument.hasSuffix("++") || argument.hasSuffix("*+") || argument.hasSuffix("?+") || argument.hasSuffix("}+") {
                return "possessive quantifiers are not in Go's syntax (RE2)"
            }
            return nil
        }

        public var description: String {
            var text = message
            if !argument.isEmpty && argument != pattern { text += " \(argument)" }
            if let offset { text += " at offset \(offset)" }
            if let hint { text += " (\(hint))" }
            return text
        }
    }

    /// What RE2 accepts and Go's `regexp` refuses: `\C` (any single byte), outside `\Q…\E`.
    static func goOnly(_ pattern: String) -> SyntaxError? {
        let characters = Array(pattern)
        var index = 0
        while index < characters.count {
            defer { index += 1 }
            guard characters[index] == "\\", index + 1 < characters.count else { continue }
            index += 1
            switch characters[index] {
            case "C": return SyntaxError(pattern: pattern, message: "invalid escape sequence", argument: "\\C")
            case "Q":
                // Literal up to the first `\E` (Go's parser looks for it as plain text).
                while index + 1 < characters.count, !(characters[index] == "\\" && characters[index + 1] == "E") { index += 1 }
                index += 1
            default: break
            }
        }
        return nil
    }
}
