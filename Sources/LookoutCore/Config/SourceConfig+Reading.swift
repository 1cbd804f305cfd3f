import Foundation
import ResilientHTTP
import Yams

/// `defaults` and `sources`: every source starts from the defaults, and a nested map it names
/// (retry, circuit_breaker...) overrides only the keys it gives.
extension ConfigReader {
    static let policyKeys = [
        "interval", "timeout", "require_https", "upgrade_to_https", "retry", "retry_budget", "circuit_breaker",
        "rate_limit", "headers", "forward_headers_on_redirect", "method", "expect", "max_bytes", "outage", "max_retry_after",
    ]
    static let sourceKeys =
        policyKeys + ["name", "kind", "url", "auth", "fallback", "depends_on", "labels", "sha256", "group", "renamed_from", "ca_file", "module"]
    /// A Prometheus label name: `[a-zA-Z_][a-zA-Z0-9_]*`, not reserved (`__` first).
    static func isLabelName(_ name: String) -> Bool {
        guard let first = name.utf8.first, !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first), !name.hasPrefix("__") else { return false }
        return name.utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "_")
        }
    }

    static let retryCategories: [String: ErrorCategory] = [
        "transient": .transient, "server_error": .serverError, "rate_limited": .rateLimited,
        "network_unreachable": .networkUnreachable, "timeout": .timeout,
    ]

    mutating func readSources(_ node: Node?, defaultsNode: Node?, root: Node) -> [SourceConfig] {
        var defaults = SourceConfig(name: "", url: "")
        if let defaultsNode, let map = mapping(defaultsNode, "defaults", known: ConfigReader.policyKeys) {
            readPolicy(map, "defaults", into: &defaults)
            checkRetriesFit(defaults, map, "defaults", fallback: defaultsNode)
        }
        guard let node else {
            problem(root, "sources", "is missing: list at least one source to watch")
            return []
        }
        guard let list = sequence(node, "sources") else { return [] }
        if list.isEmpty { problem(node, "sources", "must list at least one source") }
        var sources: [SourceConfig] = []
        var seen: [String: Int] = [:]
        var fallbacks: [(index: Int, name: String, node: Node)] = []
        var parents: [(index: Int, name: String, node: Node)] = []
        var renames: [(index: Int, name: String, node: Node)] = []
        for (index, item) in list.enumerated() {
            let path = "sources[\(index)]"
            guard let map = mapping(item, path, known: ConfigReader.sourceKeys) else { continue }
            let before = problems.count
            var source = defaults
            if let name = map["name"] {
                if let text = string(name.value, "\(path).name") {
                    source.name = text
                    if !ConfigReader.isSourceName(text) {
                        problem(name.value, "\(path).name", "\"\(text)\" must be 1 to 64 letters, digits, '.', '_' or '-'")
                    } else if let first = seen[text] {
                        problem(name.value, "\(path).name", "\"\(text)\" is already the name of sources[\(first)]")
                    } else {
                        seen[text] = index
                    }
                }
            } else {
                problem(item, "\(path).name", "is missing")
            }
            if let kind = map["kind"], let text = string(kind.value, "\(path).kind") {
                if let parsed = SourceKind(rawValue: text) {
                    source.kind = parsed
                } else {
                    problem(kind.value, "\(path).kind", "\"\(text)\" is not a kind (use \(Probers.names))")
                }
            }
            if let urlEntry = map["url"] {
                if let text = url(urlEntry.value, "\(path).url", kind: source.kind) { source.url = text }
            } else {
                problem(item, "\(path).url", "is missing")
            }
            readPolicy(map, path, into: &source)
            if let auth = map["auth"] { source.policy.auth = readAuth(auth.value, "\(path).auth") }
            if let fallback = map["fallback"], let text = string(fallback.value, "\(path).fallback") {
                source.fallback = text
                fallbacks.append((index, text, fallback.value))
            }
            if let entry = map["depends_on"] {
                // One name, or a list of names.
                let items: [Node] = if case .scalar = entry.value { [entry.value] } else { sequence(entry.value, "\(path).depends_on").map(Array.init) ?? [] }
                for (position, node) in items.enumerated() {
                    guard let name = string(node, "\(path).depends_on[\(position)]") else { continue }
                    source.dependsOn.append(name)
                    parents.append((index, name, node))
                }
            }
            if let entry = map["renamed_from"] {
                // The names this source had before: its stored history follows it.
                let items: [Node] = if case .scalar = entry.value { [entry.value] } else { sequence(entry.value, "\(path).renamed_from").map(Array.init) ?? [] }
                for (position, node) in items.enumerated() {
                    guard let name = string(node, "\(path).renamed_from[\(position)]") else { continue }
                    if !ConfigReader.isSourceName(name) {
                        problem(node, "\(path).renamed_from[\(position)]", "\"\(name)\" must be 1 to 64 letters, digits, '.', '_' or '-'")
                    } else {
                        source.renamedFrom.append(name)
                        renames.append((index, name, node))
                    }
                }
            }
            if let labels = map["labels"], let values = stringMap(labels.value, "\(path).labels") {
                source.labels = values
                // They become alert labels and matchers: Prometheus's label name rules.
                for name in values.keys.sorted() where !ConfigReader.isLabelName(name) {
                    problem(labels.value, "\(path).labels.\(name)", "is not a label name (letters, digits and _, not starting with a digit or __)")
                }
            }
            if let group = map["group"], let text = string(group.value, "\(path).group") {
                if text.isEmpty || text.count > 64 || text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
                    problem(group.value, "\(path).group", "must be 1 to 64 characters, without control characters")
                } else {
                    source.group = text
                }
            }
            if let node = map["module"]?.value, let name = string(node, "\(path).module") {
                if Probers.prober(for: source.kind).isHTTPRequest {
                    moduleReferences.append((index, name, node))
                } else {
                    problem(node, "\(path).module", "only applies to \(Probers.httpRequestNames) sources")
                }
            }
            if let node = map["ca_file"]?.value { source.caFile = readableFile(node, "\(path).ca_file") }
            if let sha = map["sha256"], let text = string(sha.value, "\(path).sha256") {
                if !(text.utf8.count == 64 && text.utf8.allSatisfy({ $0.isHexDigit })) {
                    problem(sha.value, "\(path).sha256", "must be 64 hex digits")
                } else {
                    source.sha256 = text.lowercased()
                }
            }
            checkKindSpecific(source, map, path)
            if source.timeout > source.interval {
                let node = map["timeout"]?.value ?? map["interval"]?.value ?? item
                warning(
                    node, "\(path).timeout",
                    "\(ConfigValues.format(source.timeout)) is longer than the interval (\(ConfigValues.format(source.interval))): each probe is cut off at the interval, so the timeout never applies"
                )
            } else if ["retry", "interval", "timeout"].contains(where: { map[$0] != nil }) {
                // Inherited settings were checked once, under defaults.
                checkRetriesFit(source, map, path, fallback: item)
            }
            if problems.count == before { sources.append(source) }
        }
        for fallback in fallbacks {
            let path = "sources[\(fallback.index)].fallback"
            if seen[fallback.name] == nil {
                problem(fallback.node, path, "\"\(fallback.name)\" is not the name of a source")
            } else if seen[fallback.name] == fallback.index {
                problem(fallback.node, path, "a source cannot be its own fallback")
            }
        }
        checkDependencies(parents, seen: seen, list: list)
        // An old name is nobody's current name, and only one source can take its history.
        var claimed: [String: Int] = [:]
        for rename in renames {
            let path = "sources[\(rename.index)].renamed_from"
            if let current = seen[rename.name] {
                problem(
                    rename.node, path,
                    current == rename.index ? "a source cannot be renamed from its own name" : "\"\(rename.name)\" is the name of sources[\(current)]")
            } else if let other = claimed[rename.name], other != rename.index {
                problem(rename.node, path, "\"\(rename.name)\" is already claimed by sources[\(other)].renamed_from")
            } else {
                claimed[rename.name] = rename.index
            }
        }
        return sources
    }

    /// Every `depends_on` names another source, and no source depends on itself, even through
    /// others: a cycle would hold back every alert of the sources in it.
    private mutating func checkDependencies(_ parents: [(index: Int, name: String, node: Node)], seen: [String: Int], list: Node.Sequence) {
        var edges: [Int: [Int]] = [:]
        for parent in parents {
            let path = "sources[\(parent.index)].depends_on"
            guard let target = seen[parent.name] else {
                problem(parent.node, path, "\"\(parent.name)\" is not the name of a source")
                continue
            }
            if target == parent.index {
                problem(parent.node, path, "a source cannot depend on itself")
                continue
            }
            edges[parent.index, default: []].append(target)
        }
        // Depth-first search; a back edge closes a cycle, reported once at the source that closes it.
        var state: [Int: Bool] = [:]  // false: on the current path; true: done
        func visit(_ node: Int, _ path: [Int]) {
            state[node] = false
            for next in edges[node] ?? [] {
                if state[next] == false {
                    let cycle = (path + [node]).drop { $0 != next } + [next]
                    let names = cycle.map { index in seen.first { $0.value == index }?.key ?? "sources[\(index)]" }
                    let culprit = parents.first { $0.index == node && seen[$0.name] == next }
                    problem(culprit?.node ?? list[node], "sources[\(node)].depends_on", "closes a cycle: \(names.joined(separator: " → "))")
                } else if state[next] == nil {
                    visit(next, path + [node])
                }
            }
            state[node] = true
        }
        for node in edges.keys.sorted() where state[node] == nil { visit(node, []) }
    }

    private mutating func checkKindSpecific(_ source: SourceConfig, _ map: [String: (key: Node, value: Node)], _ path: String) {
        // The keys each kind's prober reads alone (`sha256`, `expect.json_path`).
        for prober in Probers.all where prober.kind != source.kind {
            for key in prober.ownKeys {
                let parts = key.split(separator: ".").map(String.init)
                guard let entry = map[parts[0]] else { continue }
                if parts.count == 2, entry.value.mapping?[Node(parts[1])] == nil { continue }
                problem(parts.count == 2 ? entry.key : entry.key, "\(path).\(key)", "only applies to kind: \(prober.kind)")
            }
        }
        if source.policy.upgradeToHTTPS && !source.policy.requireHTTPS, let upgrade = map["upgrade_to_https"] {
            problem(upgrade.key, "\(path).upgrade_to_https", "only applies with require_https: true")
        }
    }

    /// The keys a source shares with `defaults`.
    /// Warns about retries that can never run. A call ends at the interval (its deadline), so an
    /// attempt that would start after it never does: with a 30 s interval, `max_attempts: 5` of
    /// exponential backoff from 5 s leaves the fifth attempt out (0 + 5 + 10 + 20 s).
    mutating func checkRetriesFit(_ source: SourceConfig, _ map: [String: (key: Node, value: Node)], _ path: String, fallback: Node) {
        // A call ends at its deadline: the interval, or 2 × timeout × attempts if shorter.
        let deadline = SourceProber.deadline(for: source)
        let intervalMs = deadline.totalMilliseconds
        var parts: [String] = []
        var first: ErrorCategory?
        for category in ErrorCategory.allCases {
            guard let rule = source.policy.retry.rules[category], rule.maxAttempts > 1, category.isRetryable else { continue }
            // A timed-out attempt takes the whole timeout; other failures come back quickly.
            let attemptMs = category == .timeout ? source.timeout.totalMilliseconds : 0
            // Waits without jitter (random 0.5 is the middle of the spread).
            let waits = (1..<min(rule.maxAttempts, 100)).map { RetryPolicy.backoff(rule, failedAttempt: $0, random: 0.5) }
            var startMs: Int64 = 0
            var starting = 0
            for attempt in 1...min(rule.maxAttempts, 100) {
                guard startMs < intervalMs else { break }
                starting += 1
                startMs = startMs &+ attemptMs &+ (attempt <= waits.count ? waits[attempt - 1].totalMilliseconds : 0)
            }
            guard starting < rule.maxAttempts else { continue }
            first = first ?? category
            let each = category == .timeout ? " of up to \(ConfigValues.format(source.timeout))" : ""
            let shown = waits.prefix(4).map(ConfigValues.format).joined(separator: ", ") + (waits.count > 4 ? "…" : "")
            parts.append("\(category.rawValue) \(rule.maxAttempts) attempts\(each) with waits of \(shown), only \(starting) can start")
        }
        guard let first else { return }
        let retry = map["retry"]?.value
        let node = retry?.mapping?[Node(first.rawValue)] ?? retry ?? map["interval"]?.value ?? fallback
        warning(
            node, "\(path).retry",
            "retries that cannot start before the call's deadline (\(ConfigValues.format(deadline))\(deadline < source.interval ? ": 2 × timeout × attempts" : ", the interval")): \(parts.joined(separator: "; ")); lower max_attempts or the backoff, or raise \(deadline < source.interval ? "the timeout" : "the interval")"
        )
    }

    mutating func readPolicy(_ map: [String: (key: Node, value: Node)], _ path: String, into source: inout SourceConfig) {
        if let node = map["interval"]?.value, let value = duration(node, "\(path).interval") { source.interval = value }
        if let node = map["timeout"]?.value, let value = duration(node, "\(path).timeout") { source.timeout = value }
        if let node = map["require_https"]?.value, let value = bool(node, "\(path).require_https") { source.policy.requireHTTPS = value }
        if let node = map["upgrade_to_https"]?.value, let value = bool(node, "\(path).upgrade_to_https") { source.policy.upgradeToHTTPS = value }
        if let node = map["method"]?.value, let value = string(node, "\(path).method") {
            let method = value.uppercased()
            if ["GET", "HEAD", "POST"].contains(method) {
                source.method = method
            } else {
                problem(node, "\(path).method", "\"\(value)\" is not supported (use GET, HEAD or POST)")
            }
        }
        if let node = map["headers"]?.value, let values = stringMap(node, "\(path).headers") {
            for (name, raw) in values.sorted(by: { $0.key < $1.key }) {
                guard let value = expandingEnvironment(raw, node, "\(path).headers.\(name)") else { continue }
                source.headers.removeAll { $0.name.lowercased() == name.lowercased() }
                source.headers.append(HeaderField(name, value))
            }
        }
        if let node = map["forward_headers_on_redirect"]?.value, let value = bool(node, "\(path).forward_headers_on_redirect") {
            source.forwardHeadersOnRedirect = value
        }
        if let node = map["max_bytes"]?.value, let value = size(node, "\(path).max_bytes") { source.maxBytes = value }
        if let node = map["expect"]?.value { readExpect(node, "\(path).expect", into: &source.expect) }
        if let node = map["retry"]?.value { readRetry(node, "\(path).retry", into: &source.policy.retry) }
        if let node = map["retry_budget"]?.value,
            let budget = mapping(node, "\(path).retry_budget", known: ["ratio", "min_retries_per_minute"])
        {
            if let value = budget["ratio"]?.value, let ratio = double(value, "\(path).retry_budget.ratio", range: 0...1) {
                source.policy.retryBudgetRatio = ratio
            }
            if let value = budget["min_retries_per_minute"]?.value, let floor = int(value, "\(path).retry_budget.min_retries_per_minute", range: 0...1_000_000)
            {
                source.policy.retryBudgetMinPerMinute = floor
            }
        }
        if let node = map["circuit_breaker"]?.value { readBreaker(node, "\(path).circuit_breaker", into: &source.policy.breaker) }
        if let node = map["outage"]?.value { readOutage(node, "\(path).outage", into: &source.outage) }
        if let node = map["max_retry_after"]?.value, let value = duration(node, "\(path).max_retry_after", zeroAllowed: true) {
            if value > .seconds(86_400) {
                problem(node, "\(path).max_retry_after", "\(ConfigValues.format(value)) is too long (at most 1d): an upstream could silence its own source")
            } else {
                source.maxServerWait = value
            }
        }
        if let node = map["rate_limit"]?.value, let limit = mapping(node, "\(path).rate_limit", known: ["rate", "burst"]) {
            var settings = source.policy.rateLimit ?? RateLimitSettings()
            if let value = limit["rate"]?.value, let rate = rate(value, "\(path).rate_limit.rate") { settings.perSecond = rate }
            if let value = limit["burst"]?.value, let burst = int(value, "\(path).rate_limit.burst", range: 1...1_000_000) {
                settings.burst = Double(burst)
            }
            source.policy.rateLimit = settings
        }
    }

    private mutating func readRetry(_ node: Node, _ path: String, into policy: inout RetryPolicy) {
        guard let categories = mapping(node, path, known: ConfigReader.retryCategories.keys.sorted()) else { return }
        for (name, entry) in categories {
            let category = ConfigReader.retryCategories[name]!
            let rulePath = "\(path).\(name)"
            guard let fields = mapping(entry.value, rulePath, known: ["max_attempts", "backoff", "base", "max", "jitter"]) else { continue }
            var rule = policy.rules[category] ?? RetryRule(maxAttempts: 1, backoff: .exponential, base: .seconds(1), max: .seconds(10), jitter: 0.2)
            if let value = fields["max_attempts"]?.value, let attempts = int(value, "\(rulePath).max_attempts", range: 1...20) { rule.maxAttempts = attempts }
            if let value = fields["backoff"]?.value, let text = string(value, "\(rulePath).backoff") {
                if let kind = BackoffKind(rawValue: text) {
                    rule.backoff = kind
                } else {
                    problem(value, "\(rulePath).backoff", "\"\(text)\" is not a backoff (use exponential, linear or constant)")
                }
            }
            if let value = fields["base"]?.value, let base = duration(value, "\(rulePath).base") { rule.base = base }
            if let value = fields["max"]?.value, let max = duration(value, "\(rulePath).max") { rule.max = max }
            if let value = fields["jitter"]?.value, let jitter = double(value, "\(rulePath).jitter", range: 0...1) { rule.jitter = jitter }
            if rule.max < rule.base, let value = fields["max"]?.value ?? fields["base"]?.value {
                problem(value, "\(rulePath).max", "\(ConfigValues.format(rule.max)) is shorter than base \(ConfigValues.format(rule.base))")
            }
            policy.rules[category] = rule
        }
    }

    private mutating func readBreaker(_ node: Node, _ path: String, into settings: inout CircuitBreakerSettings) {
        let known = ["failure_threshold", "success_threshold", "open_timeout", "open_timeout_max", "jitter", "half_open_max_calls"]
        guard let fields = mapping(node, path, known: known) else { return }
        if let value = fields["failure_threshold"]?.value, let count = int(value, "\(path).failure_threshold", range: 1...1000) {
            settings.failureThreshold = count
        }
        if let value = fields["success_threshold"]?.value, let count = int(value, "\(path).success_threshold", range: 1...1000) {
            settings.successThreshold = count
        }
        if let value = fields["open_timeout"]?.value, let timeout = duration(value, "\(path).open_timeout") { settings.openTimeout = timeout }
        if let value = fields["open_timeout_max"]?.value, let timeout = duration(value, "\(path).open_timeout_max") { settings.openTimeoutMax = timeout }
        if let value = fields["jitter"]?.value, let jitter = double(value, "\(path).jitter", range: 0...1) { settings.jitter = jitter }
        if let value = fields["half_open_max_calls"]?.value, let count = int(value, "\(path).half_open_max_calls", range: 1...1000) {
            settings.halfOpenMaxCalls = count
        }
        if settings.openTimeoutMax < settings.openTimeout, let value = fields["open_timeout_max"]?.value ?? fields["open_timeout"]?.value {
            problem(value, "\(path).open_timeout_max", "is shorter than open_timeout")
        }
    }

    /// `outage: {failure_threshold: 2, success_threshold: 1, window: {failures: 3, probes: 10}}`.
    private mutating func readOutage(_ node: Node, _ path: String, into policy: inout OutagePolicy) {
        guard let fields = mapping(node, path, known: ["failure_threshold", "success_threshold", "window"]) else { return }
        if let value = fields["failure_threshold"]?.value, let count = int(value, "\(path).failure_threshold", range: 1...OutageTracker.maxWindow) {
            policy.failureThreshold = count
        }
        if let value = fields["success_threshold"]?.value, let count = int(value, "\(path).success_threshold", range: 1...OutageTracker.maxWindow) {
            policy.successThreshold = count
        }
        guard let value = fields["window"]?.value else { return }
        if value.string == "off" {
            policy.windowFailures = nil
            policy.windowProbes = nil
            return
        }
        guard let window = mapping(value, "\(path).window", known: ["failures", "probes"]) else { return }
        let probes = window["probes"].flatMap { int($0.value, "\(path).window.probes", range: 1...OutageTracker.maxWindow) }
        let failures = window["failures"].flatMap { int($0.value, "\(path).window.failures", range: 1...OutageTracker.maxWindow) }
        guard let probes, let failures else {
            if window["probes"] == nil || window["failures"] == nil {
                problem(value, "\(path).window", "needs both failures and probes, e.g. {failures: 3, probes: 10}")
            }
            return
        }
        guard failures <= probes else {
            problem(window["failures"]!.value, "\(path).window.failures", "\(failures) is more than the \(probes) probes of the window")
            return
        }
        policy.windowFailures = failures
        policy.windowProbes = probes
    }

    private mutating func readExpect(_ node: Node, _ path: String, into expect: inout Expectations) {
        guard let fields = mapping(node, path, known: ["status", "body_contains", "json_path", "min_items", "max_latency"]) else { return }
        if let value = fields["status"]?.value {
            let items = value.sequence.map(Array.init) ?? [value]
            var statuses = Set<Int>()
            for (index, item) in items.enumerated() {
                let itemPath = value.sequence == nil ? "\(path).status" : "\(path).status[\(index)]"
                if let status = int(item, itemPath, range: 100...599) { statuses.insert(status) }
            }
            expect.statuses = statuses
        }
        if let value = fields["body_contains"]?.value, let text = string(value, "\(path).body_contains") { expect.bodyContains = text }
        if let value = fields["min_items"]?.value, let count = int(value, "\(path).min_items") { expect.minItems = count }
        if let value = fields["max_latency"]?.value, let latency = duration(value, "\(path).max_latency") { expect.maxLatency = latency }
        if let value = fields["json_path"]?.value,
            let assertion = mapping(value, "\(path).json_path", known: ["path", "min", "max", "equals", "exists"])
        {
            guard let pathNode = assertion["path"]?.value, let jsonPath = string(pathNode, "\(path).json_path.path") else {
                if assertion["path"] == nil { problem(value, "\(path).json_path.path", "is missing") }
                return
            }
            var parsed = JSONPathAssertion(path: jsonPath)
            if let node = assertion["min"]?.value { parsed.min = double(node, "\(path).json_path.min") }
            if let node = assertion["max"]?.value { parsed.max = double(node, "\(path).json_path.max") }
            if let node = assertion["equals"]?.value { parsed.equals = string(node, "\(path).json_path.equals") }
            if let node = assertion["exists"]?.value { parsed.exists = bool(node, "\(path).json_path.exists") }
            if parsed.min == nil && parsed.max == nil && parsed.equals == nil && parsed.exists == nil {
                problem(value, "\(path).json_path", "needs one of min, max, equals or exists")
            }
            expect.jsonPath = parsed
        }
    }

    private mutating func readAuth(_ node: Node, _ path: String) -> AuthMethod? {
        guard let fields = mapping(node, path, known: ["bearer_token_file", "bearer_token", "oauth2"]) else { return nil }
        if let file = fields["bearer_token_file"]?.value, let name = string(file, "\(path).bearer_token_file") {
            let resolved = resolvePath(name)
            guard FileManager.default.isReadableFile(atPath: resolved) else {
                problem(file, "\(path).bearer_token_file", "cannot read \(resolved)")
                return nil
            }
            return .bearerTokenFile(path: resolved)
        }
        if let inline = fields["bearer_token"] {
            return secret(inline: inline.value, file: nil, parent: path, inlineKey: "bearer_token", fileKey: "bearer_token_file")
                .map { .bearerToken($0) }
        }
        guard let oauth = fields["oauth2"]?.value else {
            problem(node, path, "needs bearer_token_file, bearer_token or oauth2")
            return nil
        }
        let oauthPath = "\(path).oauth2"
        guard let client = mapping(oauth, oauthPath, known: ["token_url", "client_id", "client_secret", "client_secret_file", "scopes"]) else {
            return nil
        }
        let tokenURL = client["token_url"].flatMap { url($0.value, "\(oauthPath).token_url") }
        let clientID = client["client_id"].flatMap { string($0.value, "\(oauthPath).client_id") }
        if client["token_url"] == nil { problem(oauth, "\(oauthPath).token_url", "is missing") }
        if client["client_id"] == nil { problem(oauth, "\(oauthPath).client_id", "is missing") }
        if client["client_secret"] == nil && client["client_secret_file"] == nil {
            problem(oauth, "\(oauthPath).client_secret_file", "is missing")
        }
        let clientSecret = secret(
            inline: client["client_secret"]?.value, file: client["client_secret_file"]?.value, parent: oauthPath,
            inlineKey: "client_secret", fileKey: "client_secret_file")
        let scopes = client["scopes"].flatMap { strings($0.value, "\(oauthPath).scopes") } ?? []
        guard let tokenURL, let clientID, let clientSecret else { return nil }
        return .oauth2(OAuth2ClientCredentials(tokenURL: tokenURL, clientID: clientID, clientSecret: clientSecret, scopes: scopes))
    }
}
