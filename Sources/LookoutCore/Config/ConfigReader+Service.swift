import Foundation
import Yams

extension MaintenanceWindow {
    enum Key: String, ConfigKey { case name, sources, matchers, start, end, recurring, note }
    enum RecurringKey: String, ConfigKey {
        case weekdays, at, duration
        case timeZone = "time_zone"
    }
}

extension ProbeModule {
    enum Key: String, ConfigKey {
        case kind, timeout, allow, compression
        case followRedirects = "follow_redirects"
        case maxRedirects = "max_redirects"
    }
}

extension AlertRuleConfig {
    /// A rule of `alerts.rules`; a change to a default rule (`alerts.defaults.NAME`) has all
    /// but `name`.
    enum Key: String, ConfigKey { case name, severity, expr, `for`, labels, annotations }
    enum ChangeKey: String, ConfigKey { case severity, expr, `for`, labels, annotations }
    static let severities = ["critical", "warning", "info"]
}

/// Maintenance windows, probe modules, alert rules and hooks.
extension ConfigReader {
    /// `maintenance:` windows: one-off (`start`, `end`) or `recurring` (weekdays, `at` local
    /// time, `duration`, `time_zone`), over `sources` by name or label `matchers`, with a `note`.
    mutating func readMaintenance(_ node: Node, sources: [SourceConfig]) -> [MaintenanceWindow] {
        guard let list = sequence(node, "maintenance") else { return [] }
        var windows: [MaintenanceWindow] = []
        let known = Set(sources.map(\.name))
        for (index, item) in list.enumerated() {
            guard let fields = section(item, "maintenance[\(index)]", MaintenanceWindow.Key.self) else { continue }
            let before = problems.count
            let name = string(fields[.name]) ?? "maintenance-\(index + 1)"
            let names = strings(fields[.sources]) ?? []
            if let entry = fields[.sources] {
                for missing in names where !known.contains(missing) {
                    problem(entry, "\"\(missing)\" is not the name of a source")
                }
            }
            let matchers = stringMap(fields[.matchers]) ?? [:]
            let note = string(fields[.note]) ?? ""
            if let entry = fields[.note], let problem = DisplayText.problem(note, multiline: true) { self.problem(entry, problem) }
            var schedule: MaintenanceWindow.Schedule?
            switch (fields[.recurring], fields[.start], fields[.end]) {
            case (let recurring?, nil, nil):
                schedule = readRecurring(recurring)
            case (nil, let start?, let end?):
                if let startMs = timestamp(start), let endMs = timestamp(end) {
                    if endMs <= startMs { problem(end, "must be after start") } else { schedule = .once(startMs: startMs, endMs: endMs) }
                }
            default:
                problem(item, fields.path, "give either start and end (RFC 3339), or recurring: {weekdays, at, duration, time_zone}")
            }
            if problems.count == before, let schedule {
                windows.append(MaintenanceWindow(name: name, sources: names, matchers: matchers, schedule: schedule, note: note))
            }
        }
        return windows
    }

    private mutating func readRecurring(_ entry: ConfigEntry) -> MaintenanceWindow.Schedule? {
        guard let fields = section(entry.value, entry.path, MaintenanceWindow.RecurringKey.self) else { return nil }
        let before = problems.count
        var weekdays = Set(1...7)
        if let entry = fields[.weekdays], let names = strings(entry) {
            weekdays = []
            for name in names {
                if let day = MaintenanceWindow.weekday(named: name) {
                    weekdays.insert(day)
                } else {
                    problem(entry, "\"\(name)\" is not a weekday (use mon, tue, wed, thu, fri, sat, sun)")
                }
            }
        }
        var minuteOfDay = 0
        if let entry = fields[.at], let text = string(entry) {
            if let minute = MaintenanceWindow.minuteOfDay(text) {
                minuteOfDay = minute
            } else {
                problem(entry, "\"\(text)\" is not a time of day (use HH:MM, e.g. 02:30)")
            }
        } else {
            require(fields, .at, "the local time the window starts, e.g. 02:30")
        }
        var durationMs: Int64 = 0
        if let entry = fields[.duration] {
            if let value = duration(entry) {
                durationMs = value.totalMilliseconds
                if durationMs > 7 * 86_400_000 { problem(entry, "must be at most 7 days") }
                if durationMs <= 0 { problem(entry, "must be at least 1ms") }
            }
        } else {
            problem(entry.value, fields.path(.duration), "is missing, e.g. 30m")
        }
        var zone = "UTC"
        if let entry = fields[.timeZone], let text = string(entry) {
            if TimeZone(identifier: text) == nil {
                problem(entry, "\"\(text)\" is not an IANA time zone (e.g. Europe/Berlin, America/New_York, UTC)")
            } else {
                zone = text
            }
        }
        guard problems.count == before else { return nil }
        return .recurring(weekdays: weekdays, minuteOfDay: minuteOfDay, durationMs: durationMs, timeZone: zone)
    }

    /// An RFC 3339 time, in milliseconds since 1970.
    mutating func timestamp(_ node: Node, _ path: String) -> Int64? {
        guard let text = string(node, path) else { return nil }
        if let ms = Timestamp.parseRFC3339(text) { return ms }
        problem(node, path, "\"\(text)\" is not an RFC 3339 time (e.g. 2026-12-01T22:00:00Z)")
        return nil
    }

    mutating func readModules(_ node: Node) -> [String: ProbeModule] {
        guard let modules = node.mapping else {
            problem(node, "probe_modules", "must be a mapping of module names to modules")
            return [:]
        }
        var result: [String: ProbeModule] = [:]
        for (key, value) in modules {
            guard let name = key.scalar?.string else { continue }
            guard let fields = section(value, "probe_modules.\(name)", ProbeModule.Key.self) else { continue }
            var module = ProbeModule()
            if let entry = fields[.kind], let text = string(entry) {
                if let parsed = SourceKind(rawValue: text), Probers.prober(for: parsed).isHTTPRequest {
                    module.kind = parsed
                } else if SourceKind(rawValue: text) != nil {
                    problem(entry, "\"\(text)\" is a kind of source, not served at /probe (use \(Probers.httpRequestNames))")
                } else {
                    problem(entry, "\"\(text)\" is not a kind (use \(Probers.names))")
                }
            }
            if let value = duration(fields[.timeout]) { module.timeout = value }
            if let entry = fields[.allow], let patterns = sequence(entry) {
                for (index, item) in patterns.enumerated() {
                    let path = "\(entry.path)[\(index)]"
                    if let pattern = pattern(item, path) {
                        module.allow.append(pattern)
                        if ProbeModule.allowsAnyHost(pattern) {
                            warning(
                                item, path,
                                "\"\(pattern)\" allows any host: anyone who can reach /probe can make Lookout request any URL (patterns match the whole target, e.g. \"https?://api\\\\.example\\\\.com/.*\")"
                            )
                        }
                    }
                }
            }
            if let follow = bool(fields[.followRedirects]) { module.followRedirects = follow }
            if let count = int(fields[.maxRedirects], range: 0...20) { module.maxRedirects = count }
            if let entry = fields[.compression], let text = string(entry) {
                if ["gzip", "br", "deflate", "identity", "zstd"].contains(text) {
                    module.compression = text
                } else {
                    problem(entry, "\"\(text)\" is not an encoding (use gzip, br, deflate, zstd or identity)")
                }
            }
            if module.allow.isEmpty, !fields.has(.allow) {
                problem(value, fields.path(.allow), "is missing: list the target patterns this module may probe")
            }
            result[name] = module
        }
        return result
    }

    /// `alerts.defaults: on | off | {RULE: off | {severity, expr, for, labels, annotations}}`.
    mutating func readDefaultRules(_ node: Node, into config: inout LookoutConfig) {
        if let text = node.scalar?.string, node.scalar != nil {
            switch text {
            case "on", "true": config.alertDefaultsKept = true
            case "off", "false": config.alertDefaultsKept = false
            default: problem(node, "alerts.defaults", "\"\(text)\" is not on, off or a map of default rules to change")
            }
            return
        }
        let names = AlertRule.defaults.map(\.name)
        guard let rules = mapping(node, "alerts.defaults", known: names) else { return }
        config.alertDefaultsKept = true
        for (name, entry) in rules {
            let path = "alerts.defaults.\(name)"
            if let text = entry.value.scalar?.string, entry.value.scalar != nil {
                if text == "off" || text == "false" {
                    config.alertDefaults[name] = .off
                } else if text != "on" && text != "true" {
                    problem(entry.value, path, "\"\(text)\" is not on, off or a map of changes (severity, expr, for, labels, annotations)")
                }
                continue
            }
            guard let fields = section(entry.value, path, AlertRuleConfig.ChangeKey.self) else { continue }
            let severity = string(fields[.severity])
            if let severity, !AlertRuleConfig.severities.contains(severity), let entry = fields[.severity] {
                problem(entry, "\"\(severity)\" is not a severity (use critical, warning or info)")
            }
            let expr = string(fields[.expr])
            if let expr, let entry = fields[.expr] {
                do throws(AlertExpressionError) {
                    _ = try AlertExpressionParser.parse(expr)
                } catch {
                    problem(entry, error.message)
                }
            }
            let forDuration = duration(fields[.for], zeroAllowed: true)
            let labels = stringMap(fields[.labels]) ?? [:]
            let annotations = stringMap(fields[.annotations]) ?? [:]
            config.alertDefaults[name] = .change(severity: severity, expr: expr, forDuration: forDuration, labels: labels, annotations: annotations)
        }
    }

    mutating func readRules(_ node: Node) -> [AlertRuleConfig] {
        guard let list = sequence(node, "alerts.rules") else { return [] }
        var rules: [AlertRuleConfig] = []
        for (index, item) in list.enumerated() {
            guard let fields = section(item, "alerts.rules[\(index)]", AlertRuleConfig.Key.self) else { continue }
            let name = string(fields[.name])
            let expr = string(fields[.expr])
            if let expr, let entry = fields[.expr] {
                do throws(AlertExpressionError) {
                    _ = try AlertExpressionParser.parse(expr)
                } catch {
                    let shown = expr.count > 80 ? expr.prefix(80) + "…" : Substring(expr)
                    problem(entry, "\(error.message) (at character \(error.offset + 1) of \"\(shown)\")")
                }
            }
            require(fields, .name)
            require(fields, .expr)
            let severity = string(fields[.severity]) ?? "warning"
            if !AlertRuleConfig.severities.contains(severity), let entry = fields[.severity] {
                problem(entry, "\"\(severity)\" is not a severity (use critical, warning or info)")
            }
            let forDuration = duration(fields[.for], zeroAllowed: true) ?? .zero
            let labels = stringMap(fields[.labels]) ?? [:]
            let annotations = stringMap(fields[.annotations]) ?? [:]
            if let name, let expr {
                rules.append(AlertRuleConfig(name: name, severity: severity, expr: expr, forDuration: forDuration, labels: labels, annotations: annotations))
            }
        }
        return rules
    }

    mutating func readHooks(_ node: Node) -> [HookConfig] {
        guard let list = sequence(node, "alerts.hooks") else { return [] }
        var hooks: [HookConfig] = []
        var names = Set<String>()
        let shared = HookConfig.Key.allCases.map(\.rawValue)
        for (index, item) in list.enumerated() {
            let path = "alerts.hooks[\(index)]"
            // Every provider's keys are known here, so one of another type's is named as such.
            guard let found = mapping(item, path, known: shared + hookKinds.flatMap { $0.ownKeys }) else { continue }
            let fields = ConfigSection<HookConfig.Key>(node: item, path: path, checked: found)
            let before = problems.count
            let name = string(fields[.name])
            require(fields, .name)
            if let name, !names.insert(name).inserted, let entry = fields[.name] {
                problem(entry, "\"\(name)\" is already the name of another hook")
            }
            let type = string(fields[.type]).map(HookType.init(rawValue:)) ?? .webhook
            var hook = HookConfig(name: name ?? "", type: type, url: "")
            // With a type nobody knows, the shared keys are still checked in this pass.
            let kind = hookKind(type, fields)
            let hookURL = kind.flatMap { readHookURL(fields, kind: $0) }
            if let value = strings(fields[.severities]) { hook.severities = value }
            if let value = stringMap(fields[.matchers]) { hook.matchers = value }
            if let value = bool(fields[.sendResolved]) { hook.sendResolved = value }
            if let value = duration(fields[.repeatInterval]) { hook.repeatInterval = value }
            if let value = strings(fields[.groupBy]) { hook.groupBy = value }
            if let value = duration(fields[.groupWait], zeroAllowed: true) { hook.groupWait = value }
            if let value = duration(fields[.groupInterval]) { hook.groupInterval = value }
            if fields.has(.hmacSecretFile) || fields.has(.hmacSecret) { hook.hmacSecret = secret(fields, inline: .hmacSecret, file: .hmacSecretFile) }
            if let kind { readOwnKeys(found, of: kind, fields, into: &hook) }
            if problems.count == before, name != nil, let hookURL {
                hook.url = hookURL
                hooks.append(hook)
            }
        }
        return hooks
    }

    /// The provider a hook's `type:` names, or nil and a problem listing those there are.
    private mutating func hookKind(_ type: HookType, _ fields: ConfigSection<HookConfig.Key>) -> (any HookKind.Type)? {
        if let kind = hookKinds.first(where: { $0.type == type }) { return kind }
        let known = hookKinds.map { $0.type.rawValue }
        problem(
            fields[.type]?.value ?? fields.node, fields.path(.type),
            "\"\(type)\" is not a hook type (use \(known.isEmpty ? "none: no provider is known" : known.listedWithOr))")
        return nil
    }

    /// The keys only `kind` reads, read by it; another provider's keys are named as theirs.
    private mutating func readOwnKeys(
        _ found: [String: (key: Node, value: Node)], of kind: any HookKind.Type, _ fields: ConfigSection<HookConfig.Key>, into hook: inout HookConfig
    ) {
        for (key, entry) in found.sorted(by: { $0.key < $1.key }) where HookConfig.Key(rawValue: key) == nil && !kind.ownKeys.contains(key) {
            let owners = hookKinds.filter { $0.ownKeys.contains(key) }.map { $0.type.rawValue }
            problem(entry.key, "\(fields.path).\(key)", "only applies to type: \(owners.joined(separator: ", "))")
        }
        // A reader of its own, whose problems and warnings are then this one's.
        var own = HookKeys(
            reader: ConfigReader(file: file, directory: directory, environment: environment), node: fields.node, path: fields.path,
            entries: found.filter { kind.ownKeys.contains($0.key) })
        kind.read(&own, into: &hook)
        problems += own.reader.problems
        warnings += own.reader.warnings
    }

    /// Chat webhook URLs carry their secret in the path: `url_file` or `${ENV}` keeps them out
    /// of the config. Each provider says what its URL must be (SMTP for email); PagerDuty's has
    /// a default.
    private mutating func readHookURL(_ fields: ConfigSection<HookConfig.Key>, kind: any HookKind.Type) -> String? {
        if let file = fields[.urlFile] {
            guard let text = secret(fields, inline: .url, file: .urlFile) else { return nil }
            // Not what it holds: a webhook URL is a secret, and a wrong path may name any file
            // (/etc/shadow) whose contents must not reach a log.
            guard kind.urlProblem(text) == nil else {
                problem(file, "the file does not hold a usable \(kind.urlDescription) URL (its contents are not shown: they may be secret)")
                return nil
            }
            return text
        }
        guard let entry = fields[.url] else {
            if let url = kind.defaultURL { return url }
            problem(fields.node, fields.path(.url), "is missing (or give url_file)")
            return nil
        }
        guard let text = string(entry), let expanded = expandingEnvironment(text, entry.value, entry.path) else { return nil }
        if let message = kind.urlProblem(expanded) {
            // An expanded ${ENV} URL is a secret: say which variable, not what it holds.
            problem(
                entry,
                expanded == text ? message : "\(text) does not expand to a usable \(kind.urlDescription) URL (its value is not shown: it may be secret)")
            return nil
        }
        return expanded
    }
}

extension HookConfig {
    /// The keys every hook has; a provider's own are its `HookKind.ownKeys`.
    enum Key: String, ConfigKey {
        case name, type, url
        case urlFile = "url_file"
        case severities, matchers
        case sendResolved = "send_resolved"
        case groupBy = "group_by"
        case groupWait = "group_wait"
        case groupInterval = "group_interval"
        case repeatInterval = "repeat_interval"
        case hmacSecretFile = "hmac_secret_file"
        case hmacSecret = "hmac_secret"
    }
}

extension ConfigReader {
    /// A secret of `section`, inline (a `${ENV}` reference) or in a file.
    mutating func secret<Key: ConfigKey>(_ section: ConfigSection<Key>, inline: Key, file: Key) -> String? {
        secret(inline: section[inline]?.value, file: section[file]?.value, parent: section.path, inlineKey: inline.rawValue, fileKey: file.rawValue)
    }
}
