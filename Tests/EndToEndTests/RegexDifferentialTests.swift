import Foundation
import ResilientHTTP
import TestSupport
import Testing

/// Regular expressions beside Debian's blackbox_exporter 0.23 (issue "Regular expressions as
/// blackbox_exporter reads them…"): one blackbox file, both exporters, the same answer for every
/// row where ICU once disagreed with Go, for the catastrophic patterns on long bodies, and for
/// Go-only syntax; what Go refuses both refuse.
@Suite("regex differential", .serialized)
struct RegexDifferentialTests {
    let http = CurlTransport()

    /// One body regex case: the module has it in `list`, the simulator answers `body` (`repeat`
    /// `count` times, then `then`).
    struct Case {
        var pattern: String
        var list = "fail_if_body_not_matches_regexp"
        var repeated = ""
        var count = 1
        var then = ""
    }

    static let cases: [Case] = [
        Case(pattern: "a!$", then: "aaa!\n"),
        Case(pattern: "a.b", then: "a\rb"),
        Case(pattern: "^[a&&b]$", then: "&"),
        Case(pattern: #"^\w+$"#, then: "é"),
        Case(pattern: #"^\d$"#, then: "٣"),
        Case(pattern: #"\bé"#, then: "xé"),
        Case(pattern: #"(?P<word>ok)"#, then: "ok"),
        Case(pattern: #"ok\z"#, then: "ok\n"),
        Case(pattern: #"ok\z"#, then: "ok"),
        Case(pattern: "^[[:alpha:]]+$", then: "abcXYZ"),
        Case(pattern: "^[[:alpha:]]+$", then: "abc1"),
        Case(pattern: "(?U)^a+$", then: "aaa"),
        Case(pattern: #"^\pN$"#, then: "٣"),
        Case(pattern: "^a{,3}$", then: "a{,3}"),
        Case(pattern: "(?i)k", then: "\u{212A}"),
        // What made ICU backtrack for minutes, and what it gave up on and read as no match. Go
        // finds no match in the first three, so blackbox reads 1: a probe cut off by its deadline
        // would read 0, and a match that was not finished could not agree.
        Case(pattern: "(a+)+$", list: "fail_if_body_matches_regexp", repeated: "a", count: 5_000, then: "!"),
        Case(pattern: "(.*a){25}$", list: "fail_if_body_matches_regexp", repeated: "a", count: 5_000, then: "!"),
        Case(pattern: "^(a|b)*!$", list: "fail_if_body_matches_regexp", repeated: "ab", count: 100_000, then: "!"),
        Case(pattern: "^(a|b)*!$", repeated: "ab", count: 100_000, then: "!"),
    ]

    /// A YAML double-quoted scalar with exactly `text` in it.
    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case _ where scalar.value < 0x20 || scalar.value == 0x7F: out += String(format: "\\x%02X", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    static func encoded(_ text: String) -> String { text.addingPercentEncoding(withAllowedCharacters: .alphanumerics)! }

    @Test func bodiesAndHeadersMatchAsInGo() async throws {
        let directory = try makeTemporaryDirectory("regex-diff")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (sim, simBase) = try await startSimulator()
        let simHost = String(simBase.dropFirst("http://".count))
        var modules = "modules:\n"
        for (index, item) in RegexDifferentialTests.cases.enumerated() {
            modules += "  r\(index): {prober: http, timeout: 5s, http: {\(item.list): [\(RegexDifferentialTests.quoted(item.pattern))]}}\n"
        }
        // Header values are matched as Go matches them too.
        modules += #"  header_class: {prober: http, timeout: 5s, http: {fail_if_header_not_matches: [{header: X-Text, regexp: "^[a&&b]$"}]}}"# + "\n"
        modules += #"  header_word: {prober: http, timeout: 5s, http: {fail_if_header_not_matches: [{header: X-Text, regexp: "^\\w+$"}]}}"# + "\n"
        try modules.write(to: directory.appendingPathComponent("blackbox.yml"), atomically: true, encoding: .utf8)
        let blackboxPort = closedPort()
        let blackbox = try ChildProcess(
            "/usr/bin/prometheus-blackbox-exporter",
            ["--config.file=\(directory.path)/blackbox.yml", "--web.listen-address=127.0.0.1:\(blackboxPort)"])
        let config = try writeLookoutConfig(
            in: directory,
            """
            probe_modules_file: blackbox.yml
            probe_allow: ["http://127\\\\.0\\\\.0\\\\.1:[0-9]+/.*"]
            sources:
              - {name: sim, url: "\(simBase)/ok", interval: 1h}
            """)
        let (lookout, base) = try await startLookout(config: config)
        _ = try await eventually("blackbox_exporter") {
            await http.perform(TransferRequest(url: "http://127.0.0.1:\(blackboxPort)/-/healthy", timeout: .patient)).httpStatus == 200 ? true : nil
        }
        func probe(_ target: String, _ module: String) async -> (theirs: String, ours: String) {
            let query = "target=\(RegexDifferentialTests.encoded(target))&module=\(module)"
            let theirs = await http.perform(TransferRequest(url: "http://127.0.0.1:\(blackboxPort)/probe?\(query)", timeout: .patient)).bodyText
            let ours = await http.perform(TransferRequest(url: "\(base)/probe?\(query)", timeout: .patient)).bodyText
            return (theirs, ours)
        }
        var verdicts: [String] = []
        for (index, item) in RegexDifferentialTests.cases.enumerated() {
            let target =
                "http://\(simHost)/text?repeat=\(RegexDifferentialTests.encoded(item.repeated))&count=\(item.count)&then=\(RegexDifferentialTests.encoded(item.then))"
            let (theirs, ours) = await probe(target, "r\(index)")
            let expected = try #require(metricValue(theirs, "probe_success"), "blackbox_exporter answered \(theirs)")
            let ourSuccess = metricValue(ours, "probe_success")
            #expect(ourSuccess == expected, "\(item.pattern) on \(item.then.debugDescription): blackbox_exporter \(expected), Lookout \(ourSuccess ?? .nan)")
            #expect(
                metricValue(ours, "probe_failed_due_to_regex") == metricValue(theirs, "probe_failed_due_to_regex"),
                "\(item.pattern): probe_failed_due_to_regex")
            verdicts.append("\(item.pattern)=\(Int(expected))")
        }
        // The verdicts are not all the same: the cases tell matching from not matching.
        #expect(verdicts.contains { $0.hasSuffix("=0") } && verdicts.contains { $0.hasSuffix("=1") }, "\(verdicts)")
        for (module, header, expected) in [("header_class", "&", 1.0), ("header_word", "é", 0), ("header_word", "ok", 1)] {
            let (theirs, ours) = await probe("http://\(simHost)/text?header=\(RegexDifferentialTests.encoded(header))", module)
            #expect(metricValue(theirs, "probe_success") == expected, "\(module) \(header): \(theirs)")
            #expect(metricValue(ours, "probe_success") == expected, "\(module) \(header): \(ours)")
        }
        // The service still answers at once after the long bodies.
        #expect(await http.perform(TransferRequest(url: "\(base)/-/healthy", timeout: .patient)).httpStatus == 200)
        #expect(try await lookout.terminate() == 0)
        _ = try await blackbox.terminate()
        #expect(try await sim.terminate() == 0)
    }

    /// What Go refuses, blackbox_exporter and Lookout both refuse; what Go takes, both take.
    @Test(arguments: [
        (#"(a)\1"#, false), (#"\C"#, false), ("(?=a)", false), ("a++", false), (#"\Z"#, false), (#"(?P<v>\d+)\z"#, true), ("a{,3}", true),
        ("x{9876543210}", false), ("(?P<中文>a)", false),
    ])
    func bothExportersRefuseWhatGoRefuses(_ pattern: String, _ valid: Bool) async throws {
        let directory = try makeTemporaryDirectory("regex-refused")
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("blackbox.yml")
        try "modules:\n  m: {prober: http, http: {fail_if_body_matches_regexp: [\(RegexDifferentialTests.quoted(pattern))]}}\n"
            .write(to: file, atomically: true, encoding: .utf8)
        let theirs = try await runTool("/usr/bin/prometheus-blackbox-exporter", ["--config.file=\(file.path)", "--config.check"])
        let config = try writeLookoutConfig(
            in: directory,
            "probe_modules_file: blackbox.yml\nprobe_allow: [\"http://127\\\\.0\\\\.0\\\\.1/\"]\nsources:\n  - {name: a, url: \"http://127.0.0.1:1/\"}\n")
        let ours = try await runTool(ChildProcess.binDirectory.appendingPathComponent("lookout").path, ["check-config", "--config", config.path])
        #expect((theirs.status == 0) == valid, "blackbox_exporter: \(theirs.output)")
        #expect((ours.status == 0) == valid, "lookout: \(ours.output)")
        if !valid {
            #expect(ours.output.contains("blackbox.yml:2:58: modules.m.http.fail_if_body_matches_regexp[0]:"), "\(ours.output)")
            #expect(ours.output.contains("blackbox_exporter refuses it too"), "\(ours.output)")
        }
    }
}
