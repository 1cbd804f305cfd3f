import Foundation
import ResilientHTTP
import Yams

/// Reads a YAML config into a `LookoutConfig`, collecting every problem with its position
/// instead of stopping at the first.
///
/// ```swift
/// let config = try ConfigLoader.load(path: "lookout.yml")   // throws ConfigError
/// ```
package enum ConfigLoader {
    /// - Parameter hooks: the hook types hooks may name (`NotificationProviders.all`); with none,
    ///   a config with hooks is refused.
    package static func load(
        path: String, environment: [String: String] = ProcessInfo.processInfo.environment, hooks: [any HookKind.Type] = []
    ) throws -> LookoutConfig {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigError(problems: [ConfigProblem(file: path, line: 1, column: 1, path: "", message: "cannot read the file")])
        }
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        return try parse(String(decoding: data, as: UTF8.self), file: path, directory: directory, environment: environment, hooks: hooks)
    }

    /// - Parameter directory: where relative `*_file` paths are looked up.
    package static func parse(
        _ text: String, file: String, directory: String = FileManager.default.currentDirectoryPath,
        environment: [String: String] = ProcessInfo.processInfo.environment, hooks: [any HookKind.Type] = []
    ) throws -> LookoutConfig {
        let root: Node
        do {
            // Plain string scalars: the reader parses every value itself, and resolving implicit tags
            // (bool, int, float, timestamp...) by regular expression took most of the parse.
            guard let node = try Yams.compose(yaml: text, .basic) else {
                throw ConfigError(problems: [ConfigProblem(file: file, line: 1, column: 1, path: "", message: "the file is empty")])
            }
            root = node
        } catch let error as YamlError {
            throw ConfigError(problems: [syntaxProblem(error, file: file)])
        }
        var reader = ConfigReader(file: file, directory: directory, environment: environment, hookKinds: hooks)
        var config = reader.readConfig(root)
        let problems = named(reader.problems, root: root)
        let warnings = named(reader.warnings, root: root)
        if !problems.isEmpty { throw ConfigError(problems: problems, warnings: warnings) }
        config.warnings = warnings
        return config
    }

    /// A blackbox_exporter file's text, as `probe_modules_file` reads it (every module may probe
    /// any target): its modules, or its problems.
    package static func parseBlackbox(
        _ text: String, file: String, directory: String, environment: [String: String] = [:]
    ) -> (modules: [String: ProbeModule], problems: [ConfigProblem]) {
        var reader = ConfigReader(file: file, directory: directory, environment: environment)
        let modules = reader.readBlackboxText(text, allow: nil)
        return (modules, reader.problems)
    }

    /// Gives each problem under `sources[N]` or `alerts.hooks[N]` the name written there.
    static func named(_ problems: [ConfigProblem], root: Node) -> [ConfigProblem] {
        // Finding the names walks every source: only for a config that has something to tell.
        guard !problems.isEmpty else { return problems }
        func names(_ node: Node?) -> [String?] {
            node?.sequence?.map { $0.mapping?["name"]?.scalar?.string } ?? []
        }
        let lists: [(prefix: String, kind: String, names: [String?])] = [
            ("sources[", "source", names(root.mapping?["sources"])),
            ("alerts.hooks[", "hook", names(root.mapping?["alerts"]?.mapping?["hooks"])),
        ]
        return problems.map { problem in
            var problem = problem
            for list in lists where problem.path.hasPrefix(list.prefix) {
                let digits = problem.path.dropFirst(list.prefix.count).prefix { $0.isNumber }
                if let index = Int(digits), list.names.indices.contains(index), let name = list.names[index] {
                    problem.subject = "\(list.kind) \"\(name)\""
                }
            }
            return problem
        }
    }

    static func syntaxProblem(_ error: YamlError, file: String) -> ConfigProblem {
        switch error {
        case .scanner(let context, let problem, let mark, _), .parser(let context, let problem, let mark, _),
            .composer(let context, let problem, let mark, _):
            let prefix = context.map { "\($0.text), " } ?? ""
            return ConfigProblem(file: file, line: mark.line, column: mark.column, path: "", message: "YAML syntax error: \(prefix)\(problem)")
        case .reader(let problem, _, _, _):
            return ConfigProblem(file: file, line: 1, column: 1, path: "", message: "YAML syntax error: \(problem)")
        case .duplicatedKeysInMapping(let duplicates, let context):
            return ConfigProblem(
                file: file, line: context.mark.line, column: context.mark.column, path: "",
                message: "duplicate key \(duplicates.joined(separator: ", ")) in one mapping")
        default:
            return ConfigProblem(file: file, line: 1, column: 1, path: "", message: "YAML error: \(error)")
        }
    }
}

/// Checks that a text is an http(s) URL a probe can use.
package enum ProbeURL {
    /// nil when `text` is a usable URL, otherwise what is wrong with it.
    package static func problem(_ text: String) -> String? {
        // A space, a line break or a NUL would reach the request line as it is, or cut it.
        if text.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F }) {
            return "\"\(PrintableText.escape(text))\" holds a space or a control character (percent-encode it: a space is %20)"
        }
        func notURL() -> String { "\"\(text)\" is not a URL (use http://host/path or https://host/path)" }
        guard let parts = URLParts(text), let host = parts.host else { return notURL() }
        // Before the host: `file:///etc/passwd` has none, and its scheme is what is wrong.
        let scheme = parts.scheme.lowercased()
        guard scheme == "http" || scheme == "https" else {
            return "\"\(text)\" uses \(scheme)://; only http:// and https:// can be probed"
        }
        guard !host.isEmpty else { return notURL() }
        if let port = parts.port, !(1...65535).contains(port) {
            return "\"\(text)\" names port \(port); a port is 1 to 65535"
        }
        return nil
    }
}
