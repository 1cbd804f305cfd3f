import ArgumentParser
import LookoutCore

struct CheckConfig: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-config",
        abstract: "Validates a config file; prints every problem as FILE:LINE:COLUMN: PATH: message.")

    @Option(help: "The config file.")
    var config: String

    func run() async throws {
        do {
            let loaded = try ConfigLoader.load(path: config)
            for warning in loaded.warnings { printError("warning: \(warning)") }
            print("\(config): OK, \(loaded.sources.count) source\(loaded.sources.count == 1 ? "" : "s")")
        } catch let error as ConfigError {
            printError(error.description)
            throw ExitCode(1)
        }
    }
}
