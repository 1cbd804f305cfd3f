import Foundation
import Yams

/// Reads a YAML config into a `LookoutConfig`, collecting every problem with its position
/// instead of stopping at the first.
///
/// ```swift
/// let config = try ConfigLoader.load(path: "lookout.yml")   // throws ConfigError
/// ```
public enum ConfigLoader {
    public static func load(path: String) throws -> LookoutConfig {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigError(problems: [ConfigProblem(file: path, line: 1, column: 1, path: "", message: "cannot read the file")])
        }
        return try parse(String(decoding: data, as: UTF8.self), file: path)
    }

    public static func parse(_ text: String, file: String) throws -> LookoutConfig {
        let root: Node
        do {
            guard let node = try Yams.compose(yaml: text) else {
                throw ConfigError(problems: [ConfigProblem(file: file, line: 1, column: 1, path: "", message: "the file is empty")])
            }
            root = node
        } catch let error as YamlError {
            throw ConfigError(problems: [syntaxProblem(error, file: file)])
        }
        var reader = ConfigReader(file: file)
        let config = reader.readConfig(root)
        if !reader.problems.isEmpty { throw ConfigError(problems: reader.problems) }
        return config
    }

    static func syntaxProblem(_ error: YamlError, file: String) -> ConfigProblem {
        switch error {
        case .scanner(let context, let problem, let mark, _), .parser(let context, let problem, let mark, _),
            .composer(let context, let problem, let mark, _):
            let prefix = context.map { "\($0.text), " } ?? ""
            return ConfigProblem(file: file, line: mark.line, column: mark.column, path: "", message: "YAML syntax error: \(prefix)\(problem)")
        case .reader(let problem, _, _, _):
            return ConfigProblem(file: file, line: 1, column: 1, path: "", message: "YAML syntax error: \(problem)")
        default:
            return ConfigProblem(file: file, line: 1, column: 1, path: "", message: "YAML error: \(error)")
        }
    }
}

/// Walks the YAML node tree, noting each problem with its line, column and path.
struct ConfigReader {
    let file: String
    var problems: [ConfigProblem] = []

    init(file: String) {
        self.file = file
    }

    mutating func problem(_ node: Node?, _ path: String, _ message: String) {
        let mark = node?.mark
        problems.append(ConfigProblem(file: file, line: mark?.line ?? 1, column: mark?.column ?? 1, path: path, message: message))
    }

    mutating func readConfig(_ root: Node) -> LookoutConfig {
        var config = LookoutConfig()
        guard let top = mapping(root, "") else { return config }
        if let node = top["listen"], let listen = string(node, "listen") { config.listen = listen }
        if let node = top["database"], let database = string(node, "database") { config.database = database }
        var defaults = SourceConfig(name: "", url: "")
        if let node = top["defaults"], let map = mapping(node, "defaults") {
            if let value = map["interval"], let interval = duration(value, "defaults.interval") { defaults.interval = interval }
            if let value = map["timeout"], let timeout = duration(value, "defaults.timeout") { defaults.timeout = timeout }
        }
        guard let sourcesNode = top["sources"] else {
            problem(root, "sources", "is missing: list at least one source to watch")
            return config
        }
        guard let list = sequence(sourcesNode, "sources") else { return config }
        var seen: [String: Int] = [:]
        for (index, node) in list.enumerated() {
            let path = "sources[\(index)]"
            guard let source = readSource(node, path: path, defaults: defaults) else { continue }
            if let first = seen[source.name] {
                problem(node.mapping?["name"] ?? node, "\(path).name", "\"\(source.name)\" is already the name of sources[\(first)]")
                continue
            }
            seen[source.name] = index
            config.sources.append(source)
        }
        return config
    }

    mutating func readSource(_ node: Node, path: String, defaults: SourceConfig) -> SourceConfig? {
        guard let map = mapping(node, path) else { return nil }
        var source = defaults
        var valid = true
        if let value = map["name"], let name = string(value, "\(path).name") {
            if name.range(of: "^[A-Za-z0-9._-]{1,64}$", options: .regularExpression) == nil {
                problem(value, "\(path).name", "\"\(name)\" must be 1 to 64 letters, digits, '.', '_' or '-'")
                valid = false
            }
            source.name = name
        } else {
            if map["name"] == nil { problem(node, "\(path).name", "is missing") }
            valid = false
        }
        if let value = map["kind"], let text = string(value, "\(path).kind") {
            if let kind = SourceKind(rawValue: text) {
                source.kind = kind
            } else {
                problem(value, "\(path).kind", "\"\(text)\" is not a kind (use http, json, rss or download)")
                valid = false
            }
        }
        if let value = map["url"], let url = string(value, "\(path).url") {
            if let message = ConfigReader.urlProblem(url) {
                problem(value, "\(path).url", message)
                valid = false
            }
            source.url = url
        } else {
            if map["url"] == nil { problem(node, "\(path).url", "is missing") }
            valid = false
        }
        if let value = map["interval"] {
            if let interval = duration(value, "\(path).interval") { source.interval = interval } else { valid = false }
        }
        if let value = map["timeout"] {
            if let timeout = duration(value, "\(path).timeout") { source.timeout = timeout } else { valid = false }
        }
        return valid ? source : nil
    }

    static func urlProblem(_ text: String) -> String? {
        ProbeURL.problem(text)
    }
}

/// Checks that a text is an http(s) URL a probe can use.
public enum ProbeURL {
    /// nil when `text` is a usable URL, otherwise what is wrong with it.
    public static func problem(_ text: String) -> String? {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
            let host = components.host, !host.isEmpty
        else {
            return "\"\(text)\" is not a URL (use http://host/path or https://host/path)"
        }
        guard scheme == "http" || scheme == "https" else {
            return "\"\(text)\" uses \(scheme)://; only http:// and https:// can be probed"
        }
        return nil
    }
}

extension ConfigReader {
    // MARK: - Typed access

    mutating func mapping(_ node: Node, _ path: String) -> Node.Mapping? {
        guard let mapping = node.mapping else {
            problem(node, path.isEmpty ? "(top level)" : path, "must be a mapping of keys to values")
            return nil
        }
        return mapping
    }

    mutating func sequence(_ node: Node, _ path: String) -> Node.Sequence? {
        guard let sequence = node.sequence else {
            problem(node, path, "must be a list")
            return nil
        }
        return sequence
    }

    mutating func string(_ node: Node, _ path: String) -> String? {
        guard let scalar = node.scalar else {
            problem(node, path, "must be a single value, not a list or mapping")
            return nil
        }
        return scalar.string
    }

    mutating func duration(_ node: Node, _ path: String) -> Duration? {
        guard let text = string(node, path) else { return nil }
        guard let duration = ConfigValues.duration(text), duration > .zero else {
            problem(node, path, "\"\(text)\" is not a duration (use 500ms, 30s, 5m, 1h)")
            return nil
        }
        return duration
    }
}
