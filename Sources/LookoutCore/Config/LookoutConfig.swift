import ResilientHTTP

import Foundation

/// The kinds of probe a source can have.
public enum SourceKind: String, Sendable, CaseIterable {
    case http, json, rss, download
}

/// An assertion on one value of a JSON body, e.g. `{path: "meta.total", min: 1}`.
public struct JSONPathAssertion: Sendable, Equatable {
    /// Dot-separated keys and array indexes: `meta.total`, `items.0.id`.
    public var path: String
    public var min: Double?
    public var max: Double?
    /// The value, compared as text (`"open"`, `3`, `true`).
    public var equals: String?
    /// true: the path must exist; false: it must not.
    public var exists: Bool?

    public init(path: String, min: Double? = nil, max: Double? = nil, equals: String? = nil, exists: Bool? = nil) {
        self.path = path
        self.min = min
        self.max = max
        self.equals = equals
        self.exists = exists
    }
}

/// What a response must look like to count as a success.
public struct Expectations: Sendable, Equatable {
    /// nil: 200–299.
    public var statuses: Set<Int>?
    public var bodyContains: String?
    public var jsonPath: JSONPathAssertion?
    /// RSS and Atom: at least this many items.
    public var minItems: Int?
    /// Slower probes fail as `slow_response`.
    public var maxLatency: Duration?

    public init(statuses: Set<Int>? = nil, bodyContains: String? = nil, jsonPath: JSONPathAssertion? = nil, minItems: Int? = nil, maxLatency: Duration? = nil) {
        self.statuses = statuses
        self.bodyContains = bodyContains
        self.jsonPath = jsonPath
        self.minItems = minItems
        self.maxLatency = maxLatency
    }
}

/// One header to send.
public struct HeaderField: Sendable, Equatable {
    public var name: String
    public var value: String

    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

/// One watched upstream, with every default already applied.
public struct SourceConfig: Sendable, Equatable {
    /// Unique, `[A-Za-z0-9._-]{1,64}`.
    public var name: String
    public var kind: SourceKind
    public var url: String
    public var method: String = "GET"
    public var headers: [HeaderField] = []
    public var interval: Duration
    /// Per attempt.
    public var timeout: Duration
    /// Retries, breaker, rate limit, auth and HTTPS policy, as the client takes them.
    public var policy = UpstreamPolicy()
    public var expect = Expectations()
    /// Another source shown while this one is down.
    public var fallback: String?
    public var labels: [String: String] = [:]
    /// Downloads: the expected SHA-256 in hex.
    public var sha256: String?
    /// Downloads: more bytes than this fail as `too_large`.
    public var maxBytes: Int64?

    public init(name: String, kind: SourceKind = .http, url: String, interval: Duration = .seconds(30), timeout: Duration = .seconds(10)) {
        self.name = name
        self.kind = kind
        self.url = url
        self.interval = interval
        self.timeout = timeout
    }

    /// The host (and port) the source lives on.
    public var host: String {
        guard let components = URLComponents(string: url), let host = components.host else { return url }
        return components.port.map { "\(host):\($0)" } ?? host
    }
}

/// Which slice of the sources this instance probes (`--shard I/N`).
public struct Shard: Sendable, Equatable {
    public var index: Int
    public var count: Int

    public init(index: Int = 0, count: Int = 1) {
        self.index = index
        self.count = count
    }

    /// Whether `source` belongs to this shard (a stable hash of its name).
    public func owns(_ source: String) -> Bool {
        count <= 1 || Int(ProbeScheduler.stableHash(source) % UInt64(count)) == index
    }

    /// Parses `I/N`.
    public static func parse(_ text: String) -> Shard? {
        let parts = text.split(separator: "/")
        guard parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]), count >= 1, index >= 0, index < count else {
            return nil
        }
        return Shard(index: index, count: count)
    }
}

/// A user alert rule, as written in the config (evaluated by the alerting code).
public struct AlertRuleConfig: Sendable, Equatable {
    public var name: String
    public var severity: String
    public var expr: String
    public var forDuration: Duration
    public var labels: [String: String]
    public var annotations: [String: String]
}

/// An alert hook, as written in the config.
public struct HookConfig: Sendable, Equatable {
    public enum HookType: String, Sendable, CaseIterable {
        case webhook, alertmanager
    }

    public var name: String
    public var type: HookType
    public var url: String
    /// Empty: every severity.
    public var severities: [String]
    /// Label matchers: every one must equal the alert's label.
    public var matchers: [String: String]
    public var sendResolved: Bool
    public var repeatInterval: Duration
    public var hmacSecret: String?
}

/// A whole, validated config file.
public struct LookoutConfig: Sendable, Equatable {
    public var listen = "127.0.0.1:9464"
    /// A file path, or `:memory:`.
    public var database = "lookout.sqlite"
    public var retention: Duration = .seconds(30 * 86400)
    public var rawRetention: Duration = .seconds(86400)
    public var externalURL: String?
    /// nil: admin endpoints answer 403.
    public var adminToken: String?
    public var shard = Shard()
    public var sources: [SourceConfig] = []
    public var canaries: [String] = []
    public var probeModules: [String: ProbeModule] = [:]
    public var alertRules: [AlertRuleConfig] = []
    /// How often the alert rules are evaluated (15 s; shorter in tests).
    public var alertEvaluationInterval: Duration = .seconds(15)
    public var hooks: [HookConfig] = []
    /// What is allowed but probably not meant (a `/probe` pattern that allows any host, ...):
    /// `check-config` prints these, `serve` logs them; they never stop a start or a reload.
    public var warnings: [ConfigProblem] = []

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
