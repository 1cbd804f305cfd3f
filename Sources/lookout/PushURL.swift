import ArgumentParser
import LookoutCore
import LookoutService

/// `lookout push-url NAME`: the URL a push source's job calls, with its token, and a `curl`
/// line to put at the end of the job.
struct PushURLCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push-url",
        abstract: "Prints the URL a push source's job calls (with its token) and a curl line for the end of the job.")

    @Argument(help: "The push source's name.")
    var name: String

    @Option(help: "The config file.")
    var config: String

    func run() async throws {
        let (loaded, source) = try configuredSource(name, config: config)
        guard let push = source.push else {
            printError("\(config): \(name) is a \(source.kind) source, not kind: push")
            throw ExitCode(1)
        }
        let base = PushURLCommand.base(loaded)
        let url = "\(base)/push/\(push.token)"
        print(url)
        print("")
        print("# at the end of the job: a success, or its exit status (0 a success, anything else a failure)")
        print("curl -fsS -m 10 --retry 5 -o /dev/null \"\(url)/$?\"")
        print("# optional: at its start, so the run's duration is recorded; on failure with its words")
        print("curl -fsS -m 10 -o /dev/null \"\(url)/start\"")
        print("curl -fsS -m 10 -o /dev/null --data-binary @error.log \"\(url)/fail\"")
    }

    /// Where jobs reach Lookout: `external_url`, or `http://` and the listen address.
    static func base(_ config: LookoutConfig) -> String {
        if let external = config.externalURL { return external.hasSuffix("/") ? String(external.dropLast()) : external }
        return "http://\(config.listen)"
    }
}

/// The config at `path`; exits 1 with its problems.
func loadedConfig(_ path: String) throws -> LookoutConfig {
    do {
        return try LookoutApp.loadConfig(path: path)
    } catch let error as ConfigError {
        printError(error.description)
        throw ExitCode(1)
    }
}

/// The config at `path` and its source `name`; exits 1 with the problems, or with "no source is
/// named", for a command that acts on one configured source.
func configuredSource(_ name: String, config path: String) throws -> (LookoutConfig, SourceConfig) {
    let loaded = try loadedConfig(path)
    guard let source = loaded.sources.first(where: { $0.name == name }) else {
        printError("\(path): no source is named \"\(name)\"")
        throw ExitCode(1)
    }
    return (loaded, source)
}
