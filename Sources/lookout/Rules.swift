import ArgumentParser
import LookoutCore
import LookoutService

/// `lookout rules`: the alert rules as a Prometheus rule file (`deploy/lookout-rules.yml` is its
/// output for the defaults).
struct RulesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rules",
        abstract: "Prints the alert rules as a Prometheus rule file: the defaults, or a config's (as alerts.defaults changes them).")

    @Option(help: "A config file whose rules to print (default: the default rules).")
    var config: String?

    func run() async throws {
        do {
            let rules = try config.map { try AlertRule.compile(try LookoutApp.loadConfig(path: $0)) } ?? AlertRule.defaults
            print(PrometheusRules.yaml(rules), terminator: "")
        } catch let error as ConfigError {
            printError(error.description)
            throw ExitCode(1)
        }
    }
}
