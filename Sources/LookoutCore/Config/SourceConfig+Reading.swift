import DomainRegistration
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
        case domainExpiry = "domain_expiry"
        case sla
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
        // kind: push
        case expectEvery = "expect_every"
        case schedule
        case timeZone = "time_zone"
        case grace, token
        case tokenFile = "token_file"
        // kind: flow
        case steps, finally
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
        var defaultsWroteRetry = false
        if let defaultsNode, let policy = section(defaultsNode, "defaults", SourceConfig.PolicyKey.self) {
            readPolicy(policy, into: &defaults)
            // Only retries someone wrote are worth a warning: the built-in ones that a short
            // interval cuts off are what the user chose by choosing it, and nothing to act on.
            defaultsWroteRetry = policy.has(.retry)
            if defaultsWroteRetry { checkRetriesFit(defaults, policy, fallback: defaultsNode) }
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
            if source.kind == .push {
                readPush(own, into: &source)
            } else if source.kind == .flow {
                readFlow(own, into: &source)
            } else if require(own, .url), let text = url(own[.url], kind: source.kind) {
                source.url = text
            }
            readPolicy(policy, into: &source)
            source.ownsSLA = policy.has(.sla)
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
                if Probers.prober(for: source.kind).isHTTPRequest || source.kind == .dns {
                    moduleReferences.append((index, name, entry.value))
                } else {
                    problem(entry, "only applies to \(Probers.httpRequestNames) and dns sources")
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
            if source.watchesDomain, source.registrationDomain == nil {
                source.registrationDomain = URLParts(source.url)?.host.flatMap { PublicSuffix.registrableDomain(of: $0) }
            }
            if source.timeout > source.interval {
                let node = policy[.timeout]?.value ?? policy[.interval]?.value ?? item
                warning(
                    node, policy.path(.timeout),
                    "\(ConfigValues.format(source.timeout)) is longer than the interval (\(ConfigValues.format(source.interval))): each probe is cut off at the interval, so the timeout never applies"
                )
            } else if policy.has(.retry) || (defaultsWroteRetry && (policy.has(.interval) || policy.has(.timeout))) {
                // Inherited settings were checked once, under defaults.
                checkRetriesFit(source, policy, fallback: item)
            }
            // A source with a problem of its own (a bad display_name) still has its name: kept,
            // so what names it later (maintenance, groups, announcements) is not a second error
            // for the same cause. The config is refused either way.
            if problems.count == before || seen[source.name] == index { sources.append(source) }
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

    /// Each prober's own keys (`sha256`, `expect.json_path`), parsed once: the key of a source
    /// or of its policy it starts with, and the key inside that, if any.
    static let kindSpecificKeys: [(kind: SourceKind, spelled: String, own: SourceConfig.Key?, policy: SourceConfig.PolicyKey?, inner: String?)] = Probers.all
        .flatMap {
            prober in
            prober.ownKeys.map { key in
                let parts = key.split(separator: ".", maxSplits: 1).map(String.init)
                let first = parts[0]
                return (prober.kind, key, SourceConfig.Key(rawValue: first), SourceConfig.PolicyKey(rawValue: first), parts.count == 2 ? parts[1] : nil)
            }
        }

    private mutating func checkKindSpecific(
        _ source: SourceConfig, _ own: ConfigSection<SourceConfig.Key>, _ policy: ConfigSection<SourceConfig.PolicyKey>
    ) {
        // The keys each kind's prober reads alone (`sha256`, `expect.json_path`).
        for key in ConfigReader.kindSpecificKeys where key.kind != source.kind {
            let entry: ConfigEntry
            if let name = key.own, let found = own[name] {
                entry = found
            } else if let name = key.policy, let found = policy[name] {
                entry = found
            } else {
                continue
            }
            if let inner = key.inner, entry.value.mapping?[Node(inner)] == nil { continue }
            problem(entry.key, "\(own.path).\(key.spelled)", "only applies to kind: \(key.kind)")
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
        if let entry = policy[.domainExpiry], let text = entry.value.scalar?.string {
            // true, false, or the domain to watch when it is not the URL's (an address, a CDN).
            if let flag = Bool(text.lowercased()) {
                source.watchesDomain = flag
                if flag { source.registrationDomain = nil }
            } else if !text.isEmpty, text.contains("."), text.utf8.allSatisfy({ $0.isLetterOrDigit || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-") }) {
                source.watchesDomain = true
                source.registrationDomain = text.lowercased()
            } else {
                problem(entry, "\"\(text)\" is not true, false or a domain name (e.g. acme.com)")
            }
        }
        if let entry = policy[.sla] { readSLA(entry, into: &source.sla) }
        if let value = size(policy[.maxBytes]) { source.maxBytes = value }
        // Each read only when the key is there: writing through `source` copies its storage.
        if let entry = policy[.expect] { read(entry, into: &source.expect) }
        if let entry = policy[.retry] { readRetry(entry, into: &source.policy.retry) }
        if let entry = policy[.retryBudget], let budget = section(entry.value, entry.path, SourceConfig.RetryBudgetKey.self) {
            if let ratio = double(budget[.ratio], range: 0...1) { source.policy.retryBudgetRatio = ratio }
            if let floor = int(budget[.minRetriesPerMinute], range: 0...1_000_000) { source.policy.retryBudgetMinPerMinute = floor }
        }
        if let entry = policy[.circuitBreaker] { read(entry, into: &source.policy.breaker) }
        if let entry = policy[.outage] { read(entry, into: &source.outage) }
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
