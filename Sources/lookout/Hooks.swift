import ArgumentParser
import Foundation
import LookoutAlerting
import LookoutCore
import LookoutService

/// `lookout hooks test NAME`: a test notification through a configured hook, now.
struct HooksCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hooks", abstract: "Works with the config's alert hooks.", subcommands: [Test.self])

    struct Test: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "test",
            abstract: "Sends a clearly marked test notification through a hook and prints the receiver's answer.",
            discussion: "Exits 0 when the receiver accepted it (2xx), 1 when it did not, 2 on a bad config or unknown hook.")

        @Option(help: "The config file (default: $LOOKOUT_CONFIG, else lookout.yml).")
        var config: String?

        @Argument(help: "The hook's name.")
        var name: String

        func run() async throws {
            let loaded: LookoutConfig
            let path = config ?? ProcessInfo.processInfo.environment["LOOKOUT_CONFIG"].flatMap { $0.isEmpty ? nil : $0 } ?? "lookout.yml"
            do { loaded = try LookoutApp.loadConfig(path: path) } catch {
                printError("lookout: \(error)")
                throw ExitCode(2)
            }
            guard let hook = loaded.hooks.first(where: { $0.name == name }) else {
                let names = loaded.hooks.map(\.name)
                printError("lookout: no hook is named \(name)" + (names.isEmpty ? " (the config has none)" : " (hooks: \(names.joined(separator: ", ")))"))
                throw ExitCode(2)
            }
            let answer = await HookTest.send(hook, externalURL: loaded.externalURL ?? "http://\(loaded.listen)")
            print("hook \(hook.name) (\(hook.type.rawValue)): " + (answer.httpStatus.map { "HTTP \($0)" } ?? (answer.body.isEmpty ? "no answer" : "answered")))
            if !answer.body.isEmpty { print(answer.body) }
            if let problem = answer.problem {
                printError("lookout: the test notification was not accepted: \(problem)")
                throw ExitCode(1)
            }
        }
    }
}
