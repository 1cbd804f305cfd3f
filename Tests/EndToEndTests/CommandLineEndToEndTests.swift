import Foundation
import TestSupport
import Testing

/// Exit codes and versions a script relies on (issue "Operator polish").
@Suite("command line")
struct CommandLineEndToEndTests {
    func tool(_ name: String) -> String { ChildProcess.binDirectory.appendingPathComponent(name).path }

    @Test(arguments: ["lookout", "lookout-sim", "lookout-bench", "lookout-fuzz"])
    func everyExecutableTellsItsVersion(name: String) async throws {
        let result = try await runTool(tool(name), ["--version"])
        #expect(result.status == 0)
        #expect(result.output.range(of: #"^\d+\.\d+\.\d+\n$"#, options: .regularExpression) != nil, "\(result.output)")
    }

    @Test func statusExits2WhenLookoutCannotBeReached() async throws {
        let result = try await runTool(tool("lookout"), ["status", "--url", "http://127.0.0.1:\(closedPort())"])
        #expect(result.status == 2)
        #expect(result.output.hasPrefix("lookout: cannot read http://127.0.0.1:"))
        #expect(try await runTool(tool("lookout"), ["status", "--bogus"]).status == 2)
    }
}
