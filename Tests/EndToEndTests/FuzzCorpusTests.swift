import Foundation
import TestSupport
import Testing

/// Every input committed under Tests/Fuzz/ — seeds, and each crash a fuzzer ever found — run
/// through its target in the normal build: a crash that comes back fails here, without a fuzzer.
@Suite("fuzz corpus replay")
struct FuzzCorpusTests {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fuzz")
    static let targets = [
        "config", "alert-expression", "values", "feed", "json-path", "server-wait", "server-message", "http-request", "peer-status", "template",
        "probe-answer", "vendor-page", "conversation", "regex", "cron", "rdap", "flow", "blackbox-file",
    ]

    @Test(arguments: targets)
    func replaysEveryCommittedInput(target: String) async throws {
        let directory = FuzzCorpusTests.corpus.appendingPathComponent(target)
        let inputs = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { !$0.hasPrefix(".") }
        #expect(inputs.count >= 3, "each target needs seeds")
        let replay = try await runTool(ChildProcess.binDirectory.appendingPathComponent("lookout-fuzz").path, [target, directory.path])
        #expect(replay.status == 0, "\(replay.output)")
        #expect(replay.output.contains("\(target): \(inputs.count) inputs replayed, none crashed"), "\(replay.output)")
    }

    @Test func everyTargetHasSeeds() throws {
        let present = try FileManager.default.contentsOfDirectory(atPath: FuzzCorpusTests.corpus.path).filter {
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: FuzzCorpusTests.corpus.appendingPathComponent($0).path, isDirectory: &isDirectory)
                && isDirectory.boolValue
        }
        #expect(Set(present) == Set(FuzzCorpusTests.targets))
    }
}
