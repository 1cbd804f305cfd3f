import Foundation
import ResilientHTTP

/// An assertion on one value of a JSON body, e.g. `{path: "meta.total", min: 1}`.
package struct JSONPathAssertion: Sendable, Equatable {
    /// Dot-separated keys and array indexes: `meta.total`, `items.0.id`.
    package var path: String
    package var min: Double?
    package var max: Double?
    /// The value, compared as text (`"open"`, `3`, `true`).
    package var equals: String?
    /// true: the path must exist; false: it must not.
    package var exists: Bool?

    package init(path: String, min: Double? = nil, max: Double? = nil, equals: String? = nil, exists: Bool? = nil) {
        self.path = path
        self.min = min
        self.max = max
        self.equals = equals
        self.exists = exists
    }
}

/// What a response must look like to count as a success.
package struct Expectations: Sendable, Equatable {
    /// nil: 200–299.
    package var statuses: Set<Int>?
    package var bodyContains: String?
    package var jsonPath: JSONPathAssertion?
    /// RSS and Atom: at least this many items.
    package var minItems: Int?
    /// Slower probes fail as `slow_response`.
    package var maxLatency: Duration?

    package init(statuses: Set<Int>? = nil, bodyContains: String? = nil, jsonPath: JSONPathAssertion? = nil, minItems: Int? = nil, maxLatency: Duration? = nil)
    {
        self.statuses = statuses
        self.bodyContains = bodyContains
        self.jsonPath = jsonPath
        self.minItems = minItems
        self.maxLatency = maxLatency
    }
}

/// One header to send.
package struct HeaderField: Sendable, Equatable {
    package var name: String
    package var value: String

    package init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

/// Which slice of the sources this instance probes (`--shard I/N`).
package struct Shard: Sendable, Equatable {
    package var index: Int
    package var count: Int

    package init(index: Int = 0, count: Int = 1) {
        self.index = index
        self.count = count
    }

    /// Whether `source` belongs to this shard (a stable hash of its name).
    package func owns(_ source: String) -> Bool {
        count <= 1 || Int(StableHash.of(source) % UInt64(count)) == index
    }

    /// Why `--shard auto` cannot place this pod.
    package struct Problem: Error, Equatable {
        package var message: String
    }

    /// A StatefulSet pod's shard (`--shard auto`): pods are numbered `NAME-0` … `NAME-(N×R−1)`,
    /// `replicas` pods per shard, so ordinal k is replica k mod R of shard k div R. A clear
    /// message when the host name has no ordinal or the ordinal is past the shards.
    package static func fromPod(hostName: String, replicas: Int, count: Int) -> Result<(shard: Shard, replica: Int), Shard.Problem> {
        guard replicas >= 1 else { return .failure(Shard.Problem(message: "--replicas must be at least 1")) }
        guard let dash = hostName.lastIndex(of: "-"), let ordinal = Int(hostName[hostName.index(after: dash)...]), ordinal >= 0 else {
            return .failure(
                Shard.Problem(
                    message: "--shard auto needs a StatefulSet pod's host name, NAME-ORDINAL (this host is \"\(hostName)\"); use --shard I/N elsewhere"))
        }
        let index = ordinal / replicas
        guard index < count else {
            return .failure(
                Shard.Problem(
                    message:
                        "pod \(hostName) is ordinal \(ordinal): with \(replicas) replica\(replicas == 1 ? "" : "s") per shard that is shard \(index), but shard.count is \(count); set the StatefulSet's replicas to shard.count × --replicas (\(count * replicas))"
                ))
        }
        return .success((Shard(index: index, count: count), ordinal % replicas))
    }

    /// Parses `I/N`.
    package static func parse(_ text: String) -> Shard? {
        let parts = text.split(separator: "/")
        guard parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]), count >= 1, index >= 0, index < count else {
            return nil
        }
        return Shard(index: index, count: count)
    }
}

/// A user alert rule, as written in the config (evaluated by the alerting code).
package struct AlertRuleConfig: Sendable, Equatable {
    package var name: String
    package var severity: String
    package var expr: String
    package var forDuration: Duration
    package var labels: [String: String]
    package var annotations: [String: String]
}

/// A change to one default rule (`alerts.defaults: {RULE: off | {for: 10m, ...}}`): the rest of
/// the defaults stay as they are.
package enum DefaultRuleChange: Sendable, Equatable {
    case off
    /// Each field given replaces the default's; labels and annotations are added to its own.
    case change(severity: String?, expr: String?, forDuration: Duration?, labels: [String: String], annotations: [String: String])
}

/// When a source's failed probes become an outage people are told of (`outage`), and when it
/// ends. A source is *down* from then until its successes end it: the paging rules follow it.
package struct OutagePolicy: Sendable, Equatable {
    /// Consecutive failed probes that open an outage (Gatus's `failure-threshold`): one failed
    /// probe alone tells nobody.
    package var failureThreshold = 2
    /// Or this many failures among the last `windowProbes` probes, for flapping sources; nil: off.
    package var windowFailures: Int?
    package var windowProbes: Int?
    /// Consecutive successful probes that end it.
    package var successThreshold = 1

    package init() {}
}

/// An alert hook, as written in the config.
package struct HookConfig: Sendable, Equatable {
    package var name: String
    package var type: HookType
    package var url: String
    /// Empty: every severity.
    package var severities: [String] = []
    /// Label matchers: every one must equal the alert's label.
    package var matchers: [String: String] = [:]
    package var sendResolved = true
    /// Webhooks: alerts with the same values of these labels go out as one notification
    /// (default: `[source]`, one notification per broken source); `[]` puts every alert in one.
    package var groupBy: [String] = ["source"]
    /// How long a new group waits for more alerts before its first notification.
    package var groupWait: Duration = .seconds(30)
    /// How long a notified group waits before telling of alerts that joined or left it.
    package var groupInterval: Duration = .seconds(300)
    /// How often a group that has not changed is sent again.
    package var repeatInterval: Duration = .seconds(4 * 3600)
    package var hmacSecret: String?
    /// What the provider read of its own keys (`routing_key`, `template`, `from`, ...).
    package var settings = HookSettings()

    /// A hook with every other setting at its default.
    package init(name: String, type: HookType = .webhook, url: String) {
        self.name = name
        self.type = type
        self.url = url
    }
}

/// How long each rollup tier is kept (`rollup_retention`): per-minute rows feed the last day's
/// charts, per-hour rows the 90-day bars, per-day rows everything older.
package struct RollupRetention: Sendable, Equatable {
    package var minute: Duration = .seconds(48 * 3600)
    package var hour: Duration = .seconds(90 * 86400)
    package var day: Duration = .seconds(730 * 86400)

    package init() {}
}

/// How the status page looks, and to whom (`status_page`).
package struct StatusPageSettings: Sendable, Equatable {
    /// For sharing with customers: no URLs, error details, breaker internals or admin hints.
    package var isPublic = false
    package var title = "Lookout"
    /// Sources without a `group` are grouped by this label's value.
    package var groupByLabel: String?
    /// Error rates and response times on the public page too (off: customers read states).
    package var publicDetails = false

    package init() {}

    /// The group the page lists `source` under; nil for ungrouped.
    package func group(of source: SourceConfig) -> String? {
        source.group ?? groupByLabel.flatMap { source.labels[$0] }
    }
}

/// A whole, validated config file.
package struct LookoutConfig: Sendable, Equatable {
    package var listen = "127.0.0.1:9464"
    /// A file path, or `:memory:`.
    package var database = "lookout.sqlite"
    package var retention: Duration = .seconds(30 * 86400)
    package var rawRetention: Duration = .seconds(6 * 3600)
    package var rollupRetention = RollupRetention()
    package var externalURL: String?
    /// Where `domain_expiry` asks when a domain's registration expires.
    package var rdap = RDAPSettings()
    /// nil: admin endpoints answer 403.
    package var adminToken: String?
    package var shard = Shard()
    /// Where this instance probes from (`location`): a label on every per-source series.
    package var location: String?
    /// Other Lookout instances (other shards, locations) whose sources this one's page and
    /// status JSON show too.
    package var peers: [String] = []
    package var sources: [SourceConfig] = []
    package var canaries: [String] = []
    /// Planned windows when sources may fail without notifying anyone.
    package var maintenance: [MaintenanceWindow] = []
    package var statusPage = StatusPageSettings()
    /// How many series `/metrics` writes per source.
    package var metricsDetail = MetricsDetail.default
    /// Notes for the status page's readers (more come through the admin API).
    package var announcements: [Announcement] = []
    package var probeModules: [String: ProbeModule] = [:]
    package var alertRules: [AlertRuleConfig] = []
    /// Changes to single default rules (`alerts.defaults: {RULE: …}`).
    package var alertDefaults: [String: DefaultRuleChange] = [:]
    /// Whether the default rules run beside `alerts.rules`: nil (no `alerts.defaults`) keeps
    /// them only when `alerts.rules` is empty, as before; `alerts.defaults` given keeps them
    /// (`on`, or a map of changes); `off` drops them.
    package var alertDefaultsKept: Bool?
    /// How often the alert rules are evaluated (15 s; shorter in tests).
    package var alertEvaluationInterval: Duration = .seconds(15)
    package var hooks: [HookConfig] = []
    /// What is allowed but probably not meant (a `/probe` pattern that allows any host, ...):
    /// `check-config` prints these, `serve` logs them; they never stop a start or a reload.
    package var warnings: [ConfigProblem] = []

    package init(listen: String = "127.0.0.1:9464", database: String = "lookout.sqlite", sources: [SourceConfig] = []) {
        self.listen = listen
        self.database = database
        self.sources = sources
    }
}

/// One thing wrong with a config file, with where it is.
package struct ConfigProblem: Sendable, Equatable, CustomStringConvertible {
    package var file: String
    package var line: Int
    package var column: Int
    /// Where in the document, e.g. `sources[2].interval`; empty for syntax errors.
    package var path: String
    package var message: String
    /// Who the path points into, by name (`source "payments"`), for people: `sources[10]`
    /// alone does not say which one. Not part of `description`.
    package var subject: String?

    package init(file: String, line: Int, column: Int, path: String, message: String) {
        self.file = file
        self.line = line
        self.column = column
        self.path = path
        self.message = message
    }

    /// `FILE:LINE:COLUMN: PATH: message`, or `FILE:LINE:COLUMN: message` without a path.
    package var description: String {
        path.isEmpty ? "\(file):\(line):\(column): \(message)" : "\(file):\(line):\(column): \(path): \(message)"
    }

    /// `description` with the subject's name after the path:
    /// `lookout.yml:40:15: sources[10].timeout (source "payments"): …`.
    package var naming: String {
        guard let subject, !path.isEmpty else { return description }
        return "\(file):\(line):\(column): \(path) (\(subject)): \(message)"
    }
}

/// Every problem found in a config file.
package struct ConfigError: Error, CustomStringConvertible {
    package var problems: [ConfigProblem]
    /// Found in the same pass: shown with the problems, not only once they are fixed.
    package var warnings: [ConfigProblem]

    package init(problems: [ConfigProblem], warnings: [ConfigProblem] = []) {
        self.problems = problems
        self.warnings = warnings
    }

    package var description: String {
        problems.map(\.description).joined(separator: "\n")
    }
}

/// `metrics.detail`: `default` keeps a healthy source to at most 15 series (what the rules, the
/// dashboard and the status badges need); `full` adds every phase, window, state and bucket.
package enum MetricsDetail: String, Sendable, Equatable, CaseIterable {
    case `default`
    case full
}
