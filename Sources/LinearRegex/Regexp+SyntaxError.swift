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

    /// What RE2 accepts and Go's `regexp` refuses, outside `\Q…\E` and character classes: `\C`
    /// (any single byte), a repeat count over 1,000 (`x{9876543210}`, which RE2 reads as text),
    /// a group name that is not ASCII letters, digits and `_`, and 1,000 groups nested (Go counts
    /// the height of the whole expression; groups are what nests in practice).
    static func goOnly(_ pattern: String) -> SyntaxError? {
        let characters = Array(pattern)
        var index = 0
        var depth = 0
        var inClass = false
        func digits(from start: Int) -> (value: Int, end: Int)? {
            var end = start
            var value = 0
            while end < characters.count, let digit = characters[end].wholeNumberValue, characters[end].isASCII {
                value = min(value * 10 + digit, 1_000_000)
                end += 1
            }
            return end > start ? (value, end) : nil
        }
        while index < characters.count {
            let character = characters[index]
            defer { index += 1 }
            if character == "\\", index + 1 < characters.count {
                index += 1
                switch characters[index] {
                case "C": return SyntaxError(pattern: pattern, message: "invalid escape sequence", argument: "\\C")
                case "Q":
                    // Literal up to the first `\E` (Go's parser looks for it as plain text).
                    while index + 1 < characters.count, !(characters[index] == "\\" && characters[index + 1] == "E") { index += 1 }
                    index += 1
                default: break
                }
                continue
            }
            if inClass {
                if character == "[", index + 1 < characters.count, characters[index + 1] == ":" {
                    // A POSIX class inside a class: `[[:alpha:]]`.
                    if let close = (index + 2..<max(index + 2, characters.count - 1)).first(where: { characters[$0] == ":" && characters[$0 + 1] == "]" }) {
                        index = close + 1
                    }
                } else if character == "]" {
                    inClass = false
                }
                continue
            }
            switch character {
            case "[":
                inClass = true
                // `]` first (after `^`) is a member, not the end.
                if index + 1 < characters.count, characters[index + 1] == "^" { index += 1 }
                if index + 1 < characters.count, characters[index + 1] == "]" { index += 1 }
            case "(":
                depth += 1
                if depth >= 1000 { return SyntaxError(pattern: pattern, message: "expression nests too deeply", argument: "") }
                if index + 3 < characters.count, characters[index + 1] == "?", characters[index + 2] == "P", characters[index + 3] == "<" {
                    let nameStart = index + 4
                    if let close = characters[nameStart...].firstIndex(of: ">") {
                        let name = characters[nameStart..<close]
                        if name.isEmpty || !name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }) {
                            return SyntaxError(pattern: pattern, message: "invalid named capture", argument: "(?P<" + String(name) + ">")
                        }
                    }
                }
            case ")":
                depth = max(0, depth - 1)
            case "{":
                // Go refuses a count over 1,000 where RE2 would read `{…}` as text.
                guard let (low, afterLow) = digits(from: index + 1), afterLow < characters.count else { continue }
                var high = low
                var end = afterLow
                if characters[end] == "," {
                    if let (value, afterHigh) = digits(from: end + 1) {
                        high = value
                        end = afterHigh
                    } else {
                        end += 1
                    }
                }
                if end < characters.count, characters[end] == "}", max(low, high) > 1000 {
                    return SyntaxError(pattern: pattern, message: "invalid repeat count", argument: String(characters[index...end]))
                }
            default: break
            }
        }
        return nil
    }
}
