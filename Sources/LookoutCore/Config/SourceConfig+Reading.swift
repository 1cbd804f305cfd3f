import Foundation
import ResilientHTTP
import Yams

/// `defaults` and `sources`: every source starts from the defaults, and a nested map it names
/// (retry, circuit_breaker...) overrides only the keys it gives.
extension SourceConfig {
    /// The keys `defaults` may give; every source may give them too.
    enum PolicyKey: String, ConfigKey {
        case interval, timeout, retry, headers, method, expect, outage
        case requireHTTPS = "require_https"
        case upgradeToHTTPS = "upgrade_to_https"
        case retryBudget = "retry_budget"
        case circuitBreaker = "circuit_breaker"
        case rateLimit = "rate_limit"
        case forwardHeadersOnRedirect = "forward_headers_on_redirect"
        case maxBytes = "max_bytes"
        case maxRetryAfter = "max_retry_after"
    }

    /// The keys only a source gives.
    enum Key: String, ConfigKey {
        case name, kind, url, auth, fallback, labels, sha256, group, module
        case dependsOn = "depends_on"
        case renamedFrom = "renamed_from"
        case caFile = "ca_file"
        case vendorStatus = "vendor_status"
        case displayName = "display_name"
        case description
        case `public`
    }

    enum RetryBudgetKey: String, ConfigKey {
        case ratio
        case minRetriesPerMinute = "min_retries_per_minute"
    }
}

extension ConfigReader {
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
        if let defaultsNode, let policy = section(defaultsNode, "defaults", SourceConfig.PolicyKey.self) {
            readPolicy(policy, into: &defaults)
            checkRetriesFit(defaults, policy, fallback: defaultsNode)
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
            guard let (own, policy) = sections(item, "sources[\(index)]", SourceConfig.Key.self, SourceConfig.PolicyKey.self) else { continue }
            let before = problems.count
            var source = defaults
            if let entry = own[.name], let text = string(entry) {
                source.name = text
                if !ConfigReader.isSourceName(text) {
                    problem(entry, "\"\(text)\" must be 1 to 64 letters, digits, '.', '_' or '-'")
                } else if let first = seen[text] {
                    problem(entry, "\"\(text)\" is already the name of sources[\(first)]")
                } else {
                    seen[text] = index
                }
            } else {
                require(own, .name)
            }
            if let entry = own[.kind], let text = string(entry) {
                if let parsed = SourceKind(rawValue: text) {
                    source.kind = parsed
                } else {
                    problem(entry, "\"\(text)\" is not a kind (use \(Probers.names))")
                }
            }
            if require(own, .url), let text = url(own[.url], kind: source.kind) { source.url = text }
            readPolicy(policy, into: &source)
            if let entry = own[.auth] { source.policy.auth = readAuth(entry.value, entry.path) }
            if let entry = own[.fallback], let text = string(entry) {
                source.fallback = text
                fallbacks.append((index, text, entry.value))
            }
            for (name, node) in names(own[.dependsOn]) {
                source.dependsOn.append(name)
                parents.append((index, name, node))
            }
            // The names this source had before: its stored history follows it.
            for (position, (name, node)) in names(own[.renamedFrom]).enumerated() {
                if !ConfigReader.isSourceName(name) {
                    problem(node, "\(own.path(.renamedFrom))[\(position)]", "\"\(name)\" must be 1 to 64 letters, digits, '.', '_' or '-'")
                } else {
                    source.renamedFrom.append(name)
                    renames.append((index, name, node))
                }
            }
            if let entry = own[.labels], let values = stringMap(entry) {
                source.labels = values
                // They become alert labels and matchers: Prometheus's label name rules.
                for name in values.keys.sorted() where !ConfigReader.isLabelName(name) {
                    problem(entry.value, "\(entry.path).\(name)", "is not a label name (letters, digits and _, not starting with a digit or __)")
                }
            }
            if let entry = own[.group], let text = string(entry) {
                if text.isEmpty || text.count > 64 || text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
                    problem(entry, "must be 1 to 64 characters, without control characters")
                } else {
                    source.group = text
                }
            }
            if let entry = own[.module], let name = string(entry) {
                if Probers.prober(for: source.kind).isHTTPRequest {
                    moduleReferences.append((index, name, entry.value))
                } else {
                    problem(entry, "only applies to \(Probers.httpRequestNames) sources")
                }
            }
            if let entry = own[.caFile] { source.caFile = readableFile(entry.value, entry.path) }
            if let entry = own[.vendorStatus] { source.vendorStatus = vendorStatus(entry) }
            for (key, limit) in [(SourceConfig.Key.displayName, 100), (.description, 300)] {
                guard let entry = own[key], let text = string(entry) else { continue }
                if text.isEmpty || text.count > limit || text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
                    problem(entry, "must be 1 to \(limit) characters, without control characters")
                } else if key == .displayName {
                    source.displayName = text
                } else {
                    source.description = text
                }
            }
            if let value = bool(own[.public]) { source.isPublic = value }
            if let entry = own[.sha256], let text = string(entry) {
                if !(text.utf8.count == 64 && text.utf8.allSatisfy({ $0.isHexDigit })) {
                    problem(entry, "must be 64 hex digits")
                } else {
                    source.sha256 = text.lowercased()
                }
            }
            checkKindSpecific(source, own, policy)
            if source.timeout > source.interval {
                let node = policy[.timeout]?.value ?? policy[.interval]?.value ?? item
                warning(
                    node, policy.path(.timeout),
                    "\(ConfigValues.format(source.timeout)) is longer than the interval (\(ConfigValues.format(source.interval))): each probe is cut off at the interval, so the timeout never applies"
                )
            } else if policy.has(.retry) || policy.has(.interval) || policy.has(.timeout) {
                // Inherited settings were checked once, under defaults.
                checkRetriesFit(source, policy, fallback: item)
            }
            if problems.count == before { sources.append(source) }
        }
        for fallback in fallbacks {
            let path = "sources[\(fallback.index)].\(SourceConfig.Key.fallback.rawValue)"
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
            let path = "sources[\(rename.index)].\(SourceConfig.Key.renamedFrom.rawValue)"
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

    /// One name, or a list of names, each with its node.
    private mutating func names(_ entry: ConfigEntry?) -> [(String, Node)] {
        guard let entry else { return [] }
        let items: [Node] = if case .scalar = entry.value { [entry.value] } else { sequence(entry).map(Array.init) ?? [] }
        return items.enumerated().compactMap { position, node in string(node, "\(entry.path)[\(position)]").map { ($0, node) } }
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

    private mutating func checkKindSpecific(
        _ source: SourceConfig, _ own: ConfigSection<SourceConfig.Key>, _ policy: ConfigSection<SourceConfig.PolicyKey>
    ) {
        // The keys each kind's prober reads alone (`sha256`, `expect.json_path`).
        for prober in Probers.all where prober.kind != source.kind {
            for key in prober.ownKeys {
                let parts = key.split(separator: ".").map(String.init)
                guard let entry = own.entry(named: parts[0]) ?? policy.entry(named: parts[0]) else { continue }
                if parts.count == 2, entry.value.mapping?[Node(parts[1])] == nil { continue }
                problem(entry.key, "\(own.path).\(key)", "only applies to kind: \(prober.kind)")
            }
        }
        if source.policy.upgradeToHTTPS && !source.policy.requireHTTPS, let upgrade = policy[.upgradeToHTTPS] {
            problem(upgrade.key, upgrade.path, "only applies with \(SourceConfig.PolicyKey.requireHTTPS.rawValue): true")
        }
    }

    /// Warns about retries that can never run. A call ends at the interval (its deadline), so an
    /// attempt that would start after it never does: with a 30 s interval, `max_attempts: 5` of
    /// exponential backoff from 5 s leaves the fifth attempt out (0 + 5 + 10 + 20 s).
    mutating func checkRetriesFit(_ source: SourceConfig, _ policy: ConfigSection<SourceConfig.PolicyKey>, fallback: Node) {
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
        let retry = policy[.retry]?.value
        let node = retry?.mapping?[Node(first.rawValue)] ?? retry ?? policy[.interval]?.value ?? fallback
        warning(
            node, policy.path(.retry),
            "retries that cannot start before the call's deadline (\(ConfigValues.format(deadline))\(deadline < source.interval ? ": 2 × timeout × attempts" : ", the interval")): \(parts.joined(separator: "; ")); lower max_attempts or the backoff, or raise \(deadline < source.interval ? "the timeout" : "the interval")"
        )
    }

    /// The keys a source shares with `defaults`, read over what it has (the defaults' values).
    mutating func readPolicy(_ policy: ConfigSection<SourceConfig.PolicyKey>, into source: inout SourceConfig) {
        if let value = duration(policy[.interval]) { source.interval = value }
        if let value = duration(policy[.timeout]) { source.timeout = value }
        if let value = bool(policy[.requireHTTPS]) { source.policy.requireHTTPS = value }
        if let value = bool(policy[.upgradeToHTTPS]) { source.policy.upgradeToHTTPS = value }
        if let entry = policy[.method], let value = string(entry) {
            let method = value.uppercased()
            if ["GET", "HEAD", "POST"].contains(method) {
                source.method = method
            } else {
                problem(entry, "\"\(value)\" is not supported (use GET, HEAD or POST)")
            }
        }
        if let entry = policy[.headers], let values = stringMap(entry) {
            for (name, raw) in values.sorted(by: { $0.key < $1.key }) {
                guard let value = expandingEnvironment(raw, entry.value, "\(entry.path).\(name)") else { continue }
                source.headers.removeAll { $0.name.lowercased() == name.lowercased() }
                source.headers.append(HeaderField(name, value))
            }
        }
        if let value = bool(policy[.forwardHeadersOnRedirect]) { source.forwardHeadersOnRedirect = value }
        if let value = size(policy[.maxBytes]) { source.maxBytes = value }
        read(policy[.expect], into: &source.expect)
        if let entry = policy[.retry] { readRetry(entry, into: &source.policy.retry) }
        if let entry = policy[.retryBudget], let budget = section(entry.value, entry.path, SourceConfig.RetryBudgetKey.self) {
            if let ratio = double(budget[.ratio], range: 0...1) { source.policy.retryBudgetRatio = ratio }
            if let floor = int(budget[.minRetriesPerMinute], range: 0...1_000_000) { source.policy.retryBudgetMinPerMinute = floor }
        }
        read(policy[.circuitBreaker], into: &source.policy.breaker)
        read(policy[.outage], into: &source.outage)
        if let entry = policy[.maxRetryAfter], let value = duration(entry, zeroAllowed: true) {
            if value > .seconds(86_400) {
                problem(entry, "\(ConfigValues.format(value)) is too long (at most 1d): an upstream could silence its own source")
            } else {
                source.maxServerWait = value
            }
        }
        if policy.has(.rateLimit) {
            var settings = source.policy.rateLimit ?? RateLimitSettings()
            read(policy[.rateLimit], into: &settings)
            source.policy.rateLimit = settings
        }
    }

    /// `retry: {CATEGORY: {max_attempts, backoff, base, max, jitter}}`.
    private mutating func readRetry(_ entry: ConfigEntry, into policy: inout RetryPolicy) {
        guard let categories = mapping(entry.value, entry.path, known: ConfigReader.retryCategories.keys.sorted()) else { return }
        for (name, rule) in categories {
            let category = ConfigReader.retryCategories[name]!
            var value = policy.rules[category] ?? RetryRule(maxAttempts: 1, backoff: .exponential, base: .seconds(1), max: .seconds(10), jitter: 0.2)
            read(ConfigEntry(key: rule.key, value: rule.value, path: "\(entry.path).\(name)"), into: &value)
            policy.rules[category] = value
        }
    }
}

extension RetryRule: ConfigReadable {
    enum Key: String, ConfigKey {
        case backoff, base, max, jitter
        case maxAttempts = "max_attempts"
    }

    mutating func read(_ fields: ConfigSection<Key>, _ reader: inout ConfigReader) {
        if let attempts = reader.int(fields[.maxAttempts], range: 1...20) { maxAttempts = attempts }
        if let kind: BackoffKind = reader.choice(fields[.backoff], "a backoff") { backoff = kind }
        if let value = reader.duration(fields[.base]) { base = value }
        if let value = reader.duration(fields[.max]) { max = value }
        if let value = reader.double(fields[.jitter], range: 0...1) { jitter = value }
        if max < base, let node = fields[.max]?.value ?? fields[.base]?.value {
            reader.problem(node, fields.path(.max), "\(ConfigValues.format(max)) is shorter than base \(ConfigValues.format(base))")
        }
    }
}

extension CircuitBreakerSettings: ConfigReadable {
    enum Key: String, ConfigKey {
        case jitter
        case failureThreshold = "failure_threshold"
        case successThreshold = "success_threshold"
        case openTimeout = "open_timeout"
        case openTimeoutMax = "open_timeout_max"
        case halfOpenMaxCalls = "half_open_max_calls"
    }

    mutating func read(_ fields: ConfigSection<Key>, _ reader: inout ConfigReader) {
        if let count = reader.int(fields[.failureThreshold], range: 1...1000) { failureThreshold = count }
        if let count = reader.int(fields[.successThreshold], range: 1...1000) { successThreshold = count }
        if let value = reader.duration(fields[.openTimeout]) { openTimeout = value }
        if let value = reader.duration(fields[.openTimeoutMax]) { openTimeoutMax = value }
        if let value = reader.double(fields[.jitter], range: 0...1) { jitter = value }
        if let count = reader.int(fields[.halfOpenMaxCalls], range: 1...1000) { halfOpenMaxCalls = count }
        if openTimeoutMax < openTimeout, let node = fields[.openTimeoutMax]?.value ?? fields[.openTimeout]?.value {
            reader.problem(node, fields.path(.openTimeoutMax), "is shorter than open_timeout")
        }
    }
}

extension RateLimitSettings: ConfigReadable {
    enum Key: String, ConfigKey { case rate, burst }

    mutating func read(_ limit: ConfigSection<Key>, _ reader: inout ConfigReader) {
        if let value = reader.rate(limit[.rate]) { perSecond = value }
        if let value = reader.int(limit[.burst], range: 1...1_000_000) { burst = Double(value) }
    }
}

/// `outage: {failure_threshold: 2, success_threshold: 1, window: {failures: 3, probes: 10}}`.
extension OutagePolicy: ConfigReadable {
    enum Key: String, ConfigKey {
        case window
        case failureThreshold = "failure_threshold"
        case successThreshold = "success_threshold"
    }

    enum WindowKey: String, ConfigKey { case failures, probes }

    mutating func read(_ fields: ConfigSection<Key>, _ reader: inout ConfigReader) {
        let counts = 1...OutageTracker.maxWindow
        if let count = reader.int(fields[.failureThreshold], range: counts) { failureThreshold = count }
        if let count = reader.int(fields[.successThreshold], range: counts) { successThreshold = count }
        guard let entry = fields[.window] else { return }
        if entry.value.string == "off" {
            windowFailures = nil
            windowProbes = nil
            return
        }
        guard let window = reader.section(entry.value, entry.path, WindowKey.self) else { return }
        let probes = reader.int(window[.probes], range: counts)
        let failures = reader.int(window[.failures], range: counts)
        guard let probes, let failures else {
            if !window.has(.probes) || !window.has(.failures) {
                reader.problem(entry, "needs both failures and probes, e.g. {failures: 3, probes: 10}")
            }
            return
        }
        guard failures <= probes else {
            reader.problem(window[.failures]!, "\(failures) is more than the \(probes) probes of the window")
            return
        }
        windowFailures = failures
        windowProbes = probes
    }
}

/// `expect: {status, body_contains, json_path, min_items, max_latency}`.
extension Expectations: ConfigReadable {
    enum Key: String, ConfigKey {
        case status
        case bodyContains = "body_contains"
        case jsonPath = "json_path"
        case minItems = "min_items"
        case maxLatency = "max_latency"
    }

    mutating func read(_ fields: ConfigSection<Key>, _ reader: inout ConfigReader) {
        if let entry = fields[.status] {
            let items = entry.value.sequence.map(Array.init) ?? [entry.value]
            var statuses = Set<Int>()
            for (index, item) in items.enumerated() {
                let itemPath = entry.value.sequence == nil ? entry.path : "\(entry.path)[\(index)]"
                if let status = reader.int(item, itemPath, range: 100...599) { statuses.insert(status) }
            }
            self.statuses = statuses
        }
        if let text = reader.string(fields[.bodyContains]) { bodyContains = text }
        if let count = reader.int(fields[.minItems]) { minItems = count }
        if let latency = reader.duration(fields[.maxLatency]) { maxLatency = latency }
        if let entry = fields[.jsonPath], let assertion = reader.section(entry.value, entry.path, JSONPathAssertion.Key.self) {
            guard let path = reader.string(assertion[.path]) else {
                reader.require(assertion, .path)
                return
            }
            var parsed = JSONPathAssertion(path: path)
            parsed.read(assertion, &reader)
            if parsed.min == nil && parsed.max == nil && parsed.equals == nil && parsed.exists == nil {
                reader.problem(entry, "needs one of min, max, equals or exists")
            }
            jsonPath = parsed
        }
    }
}

/// `json_path: {path, min, max, equals, exists}`.
extension JSONPathAssertion: ConfigReadable {
    enum Key: String, ConfigKey { case path, min, max, equals, exists }

    mutating func read(_ assertion: ConfigSection<Key>, _ reader: inout ConfigReader) {
        let anything = -Double.greatestFiniteMagnitude...Double.greatestFiniteMagnitude
        if let entry = assertion[.min] { min = reader.double(entry, range: anything) }
        if let entry = assertion[.max] { max = reader.double(entry, range: anything) }
        if let entry = assertion[.equals] { equals = reader.string(entry) }
        if let entry = assertion[.exists] { exists = reader.bool(entry) }
    }
}

/// `auth: {bearer_token_file | bearer_token | oauth2: {token_url, client_id, client_secret(_file), scopes, endpoint_params}}`.
extension AuthMethod {
    enum Key: String, ConfigKey {
        case oauth2
        case bearerTokenFile = "bearer_token_file"
        case bearerToken = "bearer_token"
    }

    enum OAuth2Key: String, ConfigKey {
        case scopes
        case tokenURL = "token_url"
        case clientID = "client_id"
        case clientSecret = "client_secret"
        case clientSecretFile = "client_secret_file"
        case endpointParams = "endpoint_params"
    }
}

extension ConfigReader {
    fileprivate mutating func readAuth(_ node: Node, _ path: String) -> AuthMethod? {
        guard let fields = section(node, path, AuthMethod.Key.self) else { return nil }
        if let entry = fields[.bearerTokenFile], let name = string(entry) {
            let resolved = resolvePath(name)
            guard FileManager.default.isReadableFile(atPath: resolved) else {
                problem(entry, "cannot read \(resolved)")
                return nil
            }
            return .bearerTokenFile(path: resolved)
        }
        if let inline = fields[.bearerToken] {
            return secret(
                inline: inline.value, file: nil, parent: path, inlineKey: AuthMethod.Key.bearerToken.rawValue,
                fileKey: AuthMethod.Key.bearerTokenFile.rawValue
            )
            .map { .bearerToken($0) }
        }
        guard let oauth = fields[.oauth2] else {
            problem(node, path, "needs bearer_token_file, bearer_token or oauth2")
            return nil
        }
        guard let client = section(oauth.value, oauth.path, AuthMethod.OAuth2Key.self) else { return nil }
        let tokenURL = url(client[.tokenURL])
        let clientID = string(client[.clientID])
        require(client, .tokenURL)
        require(client, .clientID)
        if !client.has(.clientSecret) && !client.has(.clientSecretFile) { require(client, .clientSecretFile) }
        let clientSecret = secret(
            inline: client[.clientSecret]?.value, file: client[.clientSecretFile]?.value, parent: oauth.path,
            inlineKey: AuthMethod.OAuth2Key.clientSecret.rawValue, fileKey: AuthMethod.OAuth2Key.clientSecretFile.rawValue)
        let scopes = strings(client[.scopes]) ?? []
        let params = stringMap(client[.endpointParams]) ?? [:]
        guard let tokenURL, let clientID, let clientSecret else { return nil }
        return .oauth2(OAuth2ClientCredentials(tokenURL: tokenURL, clientID: clientID, clientSecret: clientSecret, scopes: scopes, endpointParams: params))
    }
}
