/// The kinds of probe a source can have.
public enum SourceKind: String, Sendable, CaseIterable {
    case http, json, rss, download
}

/// One watched upstream, with every default already applied.
public struct SourceConfig: Sendable, Equatable {
    /// Unique, `[A-Za-z0-9._-]{1,64}`.
    public var name: String
    public var kind: SourceKind
    public var url: String
    public var interval: Duration
    /// Per attempt.
    public var timeout: Duration

    public init(name: String, kind: SourceKind = .http, url: String, interval: Duration = .seconds(30), timeout: Duration = .seconds(10)) {
        self.name = name
        self.kind = kind
        self.url = url
        self.interval = interval
        self.timeout = timeout
    }
}

/// A whole, validated config file.
public struct LookoutConfig: Sendable, Equatable {
    public var listen: String
    /// A file path, or `:memory:`.
    public var database: String
    public var sources: [SourceConfig]

    public init(listen: String = "127.0.0.1:9464", database: String = "lookout.sqlite", sources: [SourceConfig] = []) {
        self.listen = listen
        self.database = database
        self.sources = sources
    }
}

/// One thing wrong with a config file, with where it is.
public struct ConfigProblem: Sendable, Equatable, CustomStringConvertible {
    public var file: String
    public var line: Int
    public var column: Int
    /// Where in the document, e.g. `sources[2].interval`; empty for syntax errors.
    public var path: String
    public var message: String

    public init(file: String, line: Int, column: Int, path: String, message: String) {
        self.file = file
        self.line = line
        self.column = column
        self.path = path
        self.message = message
    }

    /// `FILE:LINE:COLUMN: PATH: message`, or `FILE:LINE:COLUMN: message` without a path.
    public var description: String {
        path.isEmpty ? "\(file):\(line):\(column): \(message)" : "\(file):\(line):\(column): \(path): \(message)"
    }
}

/// Every problem found in a config file.
public struct ConfigError: Error, CustomStringConvertible {
    public var problems: [ConfigProblem]

    public init(problems: [ConfigProblem]) {
        self.problems = problems
    }

    public var description: String {
        problems.map(\.description).joined(separator: "\n")
    }
}
