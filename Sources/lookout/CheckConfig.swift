import ArgumentParser
import LookoutCore
import LookoutService

struct CheckConfig: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-config",
        abstract: "Validates a config file; prints every problem as FILE:LINE:COLUMN: PATH: message.")

    @Option(help: "The config file.")
    var config: String

    func run() async throws {
        do {
            let loaded = try LookoutApp.loadConfig(path: config)
            for warning in loaded.warnings { printError("warning: \(warning.naming)") }
            print("\(config): OK, \(loaded.sources.count) source\(loaded.sources.count == 1 ? "" : "s")")
        } catch let error as ConfigError {
            // Errors and warnings of one pass together, in the file's order: a warning must not
            // wait for an unrelated error to be fixed.
            let lines = error.problems.map { ($0, $0.naming) } + error.warnings.map { ($0, "warning: \($0.naming)") }
            for (_, line) in lines.sorted(by: { ($0.0.file, $0.0.line, $0.0.column) < ($1.0.file, $1.0.line, $1.0.column) }) { printError(line) }
            throw ExitCode(1)
        }
    }
}
