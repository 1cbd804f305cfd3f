import LinearRegex
import Testing

/// Go's syntax and meaning, matched by RE2. Each case is a fact from Go's `regexp` (its tests
/// and documentation) or RE2's, and the rows of the RE2 issue checked against Debian's
/// blackbox_exporter 0.23; none is what Lookout happened to do.
@Suite("Go's regular expressions through RE2")
struct RegexpTests {
    /// (pattern, text, matches somewhere)
    static let meanings: [(String, String, Bool)] = [
        // The RE2 issue's rows where ICU and Go disagreed.
        ("a!$", "aaa!\n", false),  // `$` is the end of the text (`\z`) without (?m)
        ("(?m)a!$", "aaa!\n", true),
        ("a.b", "a\rb", true),  // `.` is anything but `\n`
        ("a.b", "a\nb", false),
        ("(?s)a.b", "a\nb", true),
        ("^[a&&b]$", "&", true),  // no class intersection: `&` is a character
        (#"^\w+$"#, "é", false),  // \w, \d, \b are ASCII
        (#"^\d$"#, "٣", false),
        (#"\bé"#, "xé", true),
        (#"^\pN$"#, "٣", true),  // Unicode classes by name
        (#"^\p{Greek}+$"#, "λόγος", true),
        ("^[[:alpha:]]+$", "abcXYZ", true),  // POSIX classes, ASCII
        ("^[[:alpha:]]+$", "abc1", false),
        ("^[[:^digit:]]+$", "abc", true),
        (#"abc\z"#, "abc", true),
        (#"abc\z"#, "abc\n", false),
        (#"\Aabc"#, "abc", true),
        ("a{,3}", "a{,3}", true),  // not a repetition: the text itself
        ("^a{,3}$", "aaa", false),
        ("^a{2,3}$", "aaa", true),
        ("^a{2,3}$", "aaaa", false),
        ("(?i)k", "\u{212A}", true),  // case folding includes the Kelvin sign
        ("(?i)straße", "STRASSE", false),  // simple folding only
        (#"\Qa.b\E"#, "a.b", true),
        (#"\Qa.b\E"#, "axb", false),
        (#"\x{263a}"#, "☺", true),
        (#"\x41"#, "A", true),
        (#"\141"#, "a", true),  // octal
        ("(?U)a+", "aaa", true),
        ("", "", true),
        ("x*", "", true),
        ("^$", "", true),
        ("^$", "\n", false),
        ("(?m)^$", "\n", true),
        ("a|b", "cb", true),
        ("[^\n]", "\n", false),
    ]

    @Test(arguments: RegexpTests.meanings.indices)
    func meansWhatGoMeans(_ index: Int) throws {
        let (pattern, text, expected) = RegexpTests.meanings[index]
        #expect(try Regexp(pattern).matches(text) == expected, "\(pattern) on \(text.debugDescription)")
    }

    /// Valid in Go 1.19 (blackbox_exporter 0.23's), once refused by ICU.
    @Test(arguments: [#"(?P<ver>\d+)"#, "(?U)a+", #"\pN"#, "a{,3}", "[[:word:]]", #"\Q(\E"#, "(?i:x)", "(?sm-i:x)", "x{1000}"])
    func takesWhatGoTakes(_ pattern: String) throws {
        _ = try Regexp(pattern)
    }

    /// Invalid in Go 1.19, once accepted by ICU, with the part RE2 names.
    @Test(arguments: [
        (#"(a)\1"#, #"\1"#), (#"\Z"#, #"\Z"#), ("a++", "++"), ("(?>a)", "(?>"), (#"\h"#, #"\h"#), ("(?#c)", "(?#"), (#"\e"#, #"\e"#),
        (#"\cA"#, #"\c"#), (#"\C"#, #"\C"#), ("(?=a)", "(?="), ("(?<!a)b", "(?<"), ("a**", "**"), ("x{1001}", "{1001}"), ("(", ""),
        ("[z-a]", "z-a"), (#"abc\"#, ""), ("*", "*"),
    ])
    func refusesWhatGoRefuses(_ pattern: String, _ part: String) {
        #expect(throws: Regexp.SyntaxError.self, "\(pattern)") {
            _ = try Regexp(pattern)
        }
        do {
            _ = try Regexp(pattern)
        } catch {
            #expect(error.argument.hasPrefix(part), "\(pattern): \(error)")
        }
    }

    @Test func saysWhereAndWhyForWhatBacktrackingEnginesHave() throws {
        do {
            _ = try Regexp(#"^(a)\1$"#)
            Issue.record("a backreference compiled")
        } catch {
            #expect(error.offset == 4)
            #expect(error.description.contains("backreferences are not in Go's syntax"), "\(error)")
        }
        do {
            _ = try Regexp("x(?=y)")
            Issue.record("lookahead compiled")
        } catch {
            #expect(error.offset == 1)
            #expect(error.description.contains("lookaround"), "\(error)")
        }
        // `\C` inside `\Q…\E` is text.
        #expect(try Regexp(#"\Qa\C\E"#).matches(#"a\C"#))
    }

    @Test func capturesByNumberAndName() throws {
        let regex = try Regexp(#"^(?P<code>[0-9]{3})(-| )(x)?(.*)$"#)
        #expect(regex.groupCount == 4)
        let match = try #require(regex.firstMatch(in: "250-ok ✓"))
        #expect(match[0] == "250-ok ✓")
        #expect(match["code"] == "250")
        #expect(match[2] == "-")
        #expect(match[3] == nil)
        #expect(match[4] == "ok ✓")
        #expect(match[5] == nil)
        #expect(match["nosuch"] == nil)
        #expect(regex.groupNumber(named: "code") == 1)
    }

    @Test func leftmostFirstAsPerl() throws {
        #expect(try Regexp("a|ab").firstMatch(in: "ab")?[0] == "a")
        #expect(try Regexp("a*?").firstMatch(in: "aaa")?[0] == "")
        #expect(try Regexp("(?U)a+").firstMatch(in: "aaa")?[0] == "a")
    }

    @Test func matchesWholeTextsOnly() throws {
        let host = try Regexp(#"http://127\.0\.0\.1:[0-9]+/.*"#)
        #expect(host.matchesWhole("http://127.0.0.1:9480/ok"))
        #expect(!host.matchesWhole("http://other.host/?http://127.0.0.1:1/"))
        #expect(try Regexp("a|ab").matchesWhole("ab"))
    }

    /// What made a backtracking engine run for minutes runs in one pass over the text: the
    /// catastrophic patterns of the issue on 5,000 and 200,001 characters give Go's answers.
    @Test func catastrophicPatternsGiveGosAnswers() throws {
        let long = String(repeating: "a", count: 5_000) + "!"
        #expect(try !Regexp("(a+)+$").matches(long))
        #expect(try Regexp("(a+)+$").matches(String(repeating: "a", count: 5_000)))
        #expect(try !Regexp("^(a+)+$").matches(long))
        #expect(try !Regexp("(.*a){25}$").matches(long))
        let body = String(repeating: "ab", count: 100_000) + "!"
        #expect(try Regexp("^(a|b)*!$").matches(body))
    }

    @Test func textWithNULAndInvalidUTF8IsMatchedWhole() throws {
        #expect(try Regexp("b$").matches("a\u{0}b"))
        let replaced = String(decoding: [0x61, 0xFF, 0x62] as [UInt8], as: UTF8.self)
        #expect(try Regexp("^a.b$").matches(replaced))
    }

    @Test func aProgramTooLargeIsAnErrorNotAnAllocation() {
        #expect(throws: Regexp.SyntaxError.self) { _ = try Regexp("((((a{100}){100}){100}){100})", maxMemory: 1 << 20) }
    }
}
