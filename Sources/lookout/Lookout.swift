// lookout: the command line — parses arguments and wires the modules together; no logic of its own.
import ArgumentParser
import Foundation
import LookoutCore
import ResilientHTTP

@main
struct Lookout: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lookout",
        abstract: "Watches the HTTP sources a product depends on, through a resilient client.",
        version: LookoutVersion.string,
        subcommands: [
            Serve.self, CheckConfig.self, Probe.self, Status.self, SilenceCommand.self, HooksCommand.self, DatabaseCommand.self, RulesCommand.self,
            PushURLCommand.self, SLACommand.self,
        ])

    /// SPEC: bad usage exits 2 (ArgumentParser's default is 64).
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            let code = exitCode(for: error)
            if code == .validationFailure {
                FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
                Foundation.exit(2)
            }
            exit(withError: error)
        }
    }
}

/// Writes a line to stderr.
/// Prints a line that holds text from a server (a status, a silence's comment, an upstream's
/// message): its control characters are spelled out, so a hostile server cannot clear the
/// terminal, retitle it or reorder the line (ESC, BEL, NUL, bidirectional overrides).
func printText(_ text: String) {
    print(PrintableText.escape(text))
}

func printError(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}
