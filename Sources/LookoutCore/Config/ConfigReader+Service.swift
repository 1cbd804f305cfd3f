import Foundation
import Yams

/// Maintenance windows, probe modules, alert rules and hooks.
extension ConfigReader {
    /// `maintenance:` windows: one-off (`start`, `end`) or `recurring` (weekdays, `at` local
    /// time, `duration`, `time_zone`), over `sources` by name or label `matchers`, with a `note`.
    mutating func readMaintenance(_ node: Node, sources: [SourceConfig]) -> [MaintenanceWindow] {
        guard let list = sequence(node, "maintenance") else { return [] }
        var windows: [MaintenanceWindow] = []
        let known = Set(sources.map(\.name))
        for (index, item) in list.enumerated() {
            let path = "maintenance[\(index)]"
            guard let fields = mapping(item, path, known: ["name", "sources", "matchers", "start", "end", "recurring", "note"]) else { continue }
            let before = problems.count
            let name = fields["name"].flatMap { string($0.value, "\(path).name") } ?? "maintenance-\(index + 1)"
            let names = fields["sources"].flatMap { strings($0.value, "\(path).sources") } ?? []
            if let node = fields["sources"]?.value {
                for missing in names where !known.contains(missing) {
                    problem(node, "\(path).sources", "\"\(missing)\" is not the name of a source")
                }
            }
            let matchers = fields["matchers"].flatMap { stringMap($0.value, "\(path).matchers") } ?? [:]
            let note = fields["note"].flatMap { string($0.value, "\(path).note") } ?? ""
            var schedule: MaintenanceWindow.Schedule?
            switch (fields["recurring"], fields["start"], fields["end"]) {
            case (let recurring?, nil, nil):
                schedule = readRecurring(recurring.value, "\(path).recurring")
            case (nil, let start?, let end?):
                let startMs = timestamp(start.value, "\(path).start")
                let endMs = timestamp(end.value, "\(path).end")
                if let startMs, let endMs {
                    if endMs <= startMs { problem(end.value, "\(path).end", "must be after start") } else { schedule = .once(startMs: startMs, endMs: endMs) }
                }
            default:
                problem(item, path, "give either start and end (RFC 3339), or recurring: {weekdays, at, duration, time_zone}")
            }
            if problems.count == before, let schedule {
                windows.append(MaintenanceWindow(name: name, sources: names, matchers: matchers, schedule: schedule, note: note))
            }
        }
        return windows
    }

    private mutating func readRecurring(_ node: Node, _ path: String) -> MaintenanceWindow.Schedule? {
        guard let fields = mapping(node, path, known: ["weekdays", "at", "duration", "time_zone"]) else { return nil }
        let before = problems.count
        var weekdays = Set(1...7)
        if let node = fields["weekdays"]?.value, let names = strings(node, "\(path).weekdays") {
            weekdays = []
            for name in names {
                if let day = MaintenanceWindow.weekday(named: name) {
                    weekdays.insert(day)
                } else {
                    problem(node, "\(path).weekdays", "\"\(name)\" is not a weekday (use mon, tue, wed, thu, fri, sat, sun)")
                }
            }
        }
        var minuteOfDay = 0
        if let node = fields["at"]?.value, let text = string(node, "\(path).at") {
            if let minute = MaintenanceWindow.minuteOfDay(text) {
                minuteOfDay = minute
            } else {
                problem(node, "\(path).at", "\"\(text)\" is not a time of day (use HH:MM, e.g. 02:30)")
            }
        } else if fields["at"] == nil {
            problem(node, "\(path).at", "is missing: the local time the window starts, e.g. 02:30")
        }
        var durationMs: Int64 = 0
        if let node = fields["duration"]?.value {
            if let value = duration(node, "\(path).duration") {
                durationMs = value.totalMilliseconds
                if durationMs > 7 * 86_400_000 { problem(node, "\(path).duration", "must be at most 7 days") }
                if durationMs <= 0 { problem(node, "\(path).duration", "must be at least 1ms") }
            }
        } else {
            problem(node, "\(path).duration", "is missing, e.g. 30m")
        }
        var zone = "UTC"
        if let node = fields["time_zone"]?.value, let text = string(node, "\(path).time_zone") {
            if TimeZone(identifier: text) == nil {
                problem(node, "\(path).time_zone", "\"\(text)\" is not an IANA time zone (e.g. Europe/Berlin, America/New_York, UTC)")
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
            let path = "probe_modules.\(name)"
            guard let fields = mapping(value, path, known: ["kind", "timeout", "allow", "follow_redirects", "max_redirects", "compression"]) else { continue }
            var module = ProbeModule()
            if let kind = fields["kind"]?.value, let text = string(kind, "\(path).kind") {
                if let parsed = SourceKind(rawValue: text), Probers.prober(for: parsed).isHTTPRequest {
                    module.kind = parsed
                } else if SourceKind(rawValue: text) != nil {
                    problem(kind, "\(path).kind", "\"\(text)\" is a kind of source, not served at /probe (use \(Probers.httpRequestNames))")
                } else {
                    problem(kind, "\(path).kind", "\"\(text)\" is not a kind (use \(Probers.names))")
                }
            }
            if let timeout = fields["timeout"]?.value, let value = duration(timeout, "\(path).timeout") { module.timeout = value }
            if let allow = fields["allow"]?.value, let patterns = sequence(allow, "\(path).allow") {
                for (index, item) in patterns.enumerated() {
                    guard let pattern = string(item, "\(path).allow[\(index)]") else { continue }
                    if (try? NSRegularExpression(pattern: pattern)) == nil {
                        problem(item, "\(path).allow[\(index)]", "\"\(pattern)\" is not a regular expression")
                    } else {
                        module.allow.append(pattern)
                        if ProbeModule.allowsAnyHost(pattern) {
                            warning(
                                item, "\(path).allow[\(index)]",
                                "\"\(pattern)\" allows any host: anyone who can reach /probe can make Lookout request any URL (patterns match the whole target, e.g. \"https?://api\\\\.example\\\\.com/.*\")"
                            )
                        }
                    }
                }
            }
            if let node = fields["follow_redirects"]?.value, let follow = bool(node, "\(path).follow_redirects") { module.followRedirects = follow }
            if let node = fields["max_redirects"]?.value, let count = int(node, "\(path).max_redirects", range: 0...20) { module.maxRedirects = count }
            if let node = fields["compression"]?.value, let text = string(node, "\(path).compression") {
                if ["gzip", "br", "deflate", "identity", "zstd"].contains(text) {
                    module.compression = text
                } else {
                    problem(node, "\(path).compression", "\"\(text)\" is not an encoding (use gzip, br, deflate, zstd or identity)")
                }
            }
            if module.allow.isEmpty, fields["allow"] == nil {
                problem(value, "\(path).allow", "is missing: list the target patterns this module may probe")
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
            guard let fields = mapping(entry.value, path, known: ["severity", "expr", "for", "labels", "annotations"]) else { continue }
            let severity = fields["severity"].flatMap { string($0.value, "\(path).severity") }
            if let severity, !["critical", "warning", "info"].contains(severity), let node = fields["severity"]?.value {
                problem(node, "\(path).severity", "\"\(severity)\" is not a severity (use critical, warning or info)")
            }
            let expr = fields["expr"].flatMap { string($0.value, "\(path).expr") }
            if let expr, let node = fields["expr"]?.value {
                do throws(AlertExpressionError) {
                    _ = try AlertExpressionParser.parse(expr)
                } catch {
                    problem(node, "\(path).expr", error.message)
                }
            }
            let forDuration = fields["for"].flatMap { duration($0.value, "\(path).for", zeroAllowed: true) }
            let labels = fields["labels"].flatMap { stringMap($0.value, "\(path).labels") } ?? [:]
            let annotations = fields["annotations"].flatMap { stringMap($0.value, "\(path).annotations") } ?? [:]
            config.alertDefaults[name] = .change(severity: severity, expr: expr, forDuration: forDuration, labels: labels, annotations: annotations)
        }
    }

    mutating func readRules(_ node: Node) -> [AlertRuleConfig] {
        guard let list = sequence(node, "alerts.rules") else { return [] }
        var rules: [AlertRuleConfig] = []
        for (index, item) in list.enumerated() {
            let path = "alerts.rules[\(index)]"
            guard let fields = mapping(item, path, known: ["name", "severity", "expr", "for", "labels", "annotations"]) else { continue }
            let name = fields["name"].flatMap { string($0.value, "\(path).name") }
            let expr = fields["expr"].flatMap { string($0.value, "\(path).expr") }
            if let expr, let node = fields["expr"]?.value {
                do throws(AlertExpressionError) {
                    _ = try AlertExpressionParser.parse(expr)
                } catch {
                    let shown = expr.count > 80 ? expr.prefix(80) + "…" : Substring(expr)
                    problem(node, "\(path).expr", "\(error.message) (at character \(error.offset + 1) of \"\(shown)\")")
                }
            }
            if fields["name"] == nil { problem(item, "\(path).name", "is missing") }
            if fields["expr"] == nil { problem(item, "\(path).expr", "is missing") }
            let severity = fields["severity"].flatMap { string($0.value, "\(path).severity") } ?? "warning"
            if !["critical", "warning", "info"].contains(severity), let node = fields["severity"]?.value {
                problem(node, "\(path).severity", "\"\(severity)\" is not a severity (use critical, warning or info)")
            }
            let forDuration = fields["for"].flatMap { duration($0.value, "\(path).for", zeroAllowed: true) } ?? .zero
            let labels = fields["labels"].flatMap { stringMap($0.value, "\(path).labels") } ?? [:]
            let annotations = fields["annotations"].flatMap { stringMap($0.value, "\(path).annotations") } ?? [:]
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
        let known = [
            "name", "type", "url", "url_file", "severities", "matchers", "send_resolved", "group_by", "group_wait", "group_interval",
            "repeat_interval", "hmac_secret_file", "hmac_secret", "routing_key", "routing_key_file", "template", "headers",
            "from", "to", "username", "password", "password_file", "starttls", "ca_file",
        ]
        for (index, item) in list.enumerated() {
            let path = "alerts.hooks[\(index)]"
            guard let fields = mapping(item, path, known: known) else { continue }
            let before = problems.count
            let name = fields["name"].flatMap { string($0.value, "\(path).name") }
            if fields["name"] == nil { problem(item, "\(path).name", "is missing") }
            if let name, !names.insert(name).inserted, let node = fields["name"]?.value {
                problem(node, "\(path).name", "\"\(name)\" is already the name of another hook")
            }
            var type = HookConfig.HookType.webhook
            if let node = fields["type"]?.value, let text = string(node, "\(path).type") {
                if let parsed = HookConfig.HookType(rawValue: text) {
                    type = parsed
                } else {
                    let types = HookConfig.HookType.allCases.map(\.rawValue).joined(separator: ", ")
                    problem(node, "\(path).type", "\"\(text)\" is not a hook type (use \(types))")
                }
            }
            // Chat webhook URLs carry their secret in the path: url_file or ${ENV} keeps them out
            // of the config.
            var hookURL: String?
            if fields["url_file"] != nil {
                if let text = secret(inline: nil, file: fields["url_file"]?.value, parent: path, inlineKey: "url", fileKey: "url_file"),
                    let node = fields["url_file"]?.value
                {
                    // Not what it holds: a webhook URL is a secret, and a wrong path may name
                    // any file (/etc/shadow) whose contents must not reach a log.
                    if ProbeURL.problem(text) != nil {
                        problem(node, "\(path).url_file", "the file does not hold a usable http(s) URL (its contents are not shown: they may be secret)")
                    } else {
                        hookURL = text
                    }
                }
            } else if type == .email, let node = fields["url"]?.value, let text = string(node, "\(path).url") {
                let lowered = text.lowercased()
                if lowered.hasPrefix("smtp://") || lowered.hasPrefix("smtps://"), URLComponents(string: text)?.host?.isEmpty == false {
                    hookURL = text
                } else {
                    problem(node, "\(path).url", "\"\(text)\" is not an SMTP URL (use smtp://host:587 with STARTTLS, or smtps://host:465)")
                }
            } else if let node = fields["url"]?.value, let text = string(node, "\(path).url"),
                let expanded = expandingEnvironment(text, node, "\(path).url")
            {
                if let message = ProbeURL.problem(expanded) {
                    // An expanded ${ENV} URL is a secret: say which variable, not what it holds.
                    problem(
                        node, "\(path).url",
                        expanded == text ? message : "\(text) does not expand to a usable http(s) URL (its value is not shown: it may be secret)")
                } else {
                    hookURL = expanded
                }
            } else if fields["url"] != nil {
                // string() or the environment already said what is wrong
            } else if type == .pagerduty {
                hookURL = HookConfig.pagerDutyEventsURL
            } else {
                problem(item, "\(path).url", "is missing (or give url_file)")
            }
            var routingKey: String?
            if type == .pagerduty {
                if fields["routing_key_file"] != nil || fields["routing_key"] != nil {
                    routingKey = secret(
                        inline: fields["routing_key"]?.value, file: fields["routing_key_file"]?.value, parent: path,
                        inlineKey: "routing_key", fileKey: "routing_key_file")
                } else {
                    problem(item, "\(path).routing_key_file", "is missing: a pagerduty hook needs the integration's routing key")
                }
            } else if let node = fields["routing_key_file"]?.key ?? fields["routing_key"]?.key {
                problem(node, "\(path).routing_key", "only applies to type: pagerduty")
            }
            let severities = fields["severities"].flatMap { strings($0.value, "\(path).severities") } ?? []
            let matchers = fields["matchers"].flatMap { stringMap($0.value, "\(path).matchers") } ?? [:]
            let sendResolved = fields["send_resolved"].flatMap { bool($0.value, "\(path).send_resolved") } ?? true
            let repeatInterval = fields["repeat_interval"].flatMap { duration($0.value, "\(path).repeat_interval") } ?? .seconds(4 * 3600)
            let groupBy = fields["group_by"].flatMap { strings($0.value, "\(path).group_by") } ?? ["source"]
            let groupWait = fields["group_wait"].flatMap { duration($0.value, "\(path).group_wait", zeroAllowed: true) } ?? .seconds(30)
            let groupInterval = fields["group_interval"].flatMap { duration($0.value, "\(path).group_interval") } ?? .seconds(300)
            var hmac: String?
            if fields["hmac_secret_file"] != nil || fields["hmac_secret"] != nil {
                hmac = secret(
                    inline: fields["hmac_secret"]?.value, file: fields["hmac_secret_file"]?.value, parent: path,
                    inlineKey: "hmac_secret", fileKey: "hmac_secret_file")
            }
            var mail = MailSettings()
            let mailKeys = ["from", "to", "username", "password", "password_file", "starttls", "ca_file"]
            if type == .email {
                if let node = fields["from"]?.value, let text = string(node, "\(path).from") {
                    if ConfigReader.isMailAddress(text) { mail.from = text } else { problem(node, "\(path).from", "\"\(text)\" is not a mail address") }
                } else if fields["from"] == nil {
                    problem(item, "\(path).from", "is missing: the sender's address")
                }
                if let node = fields["to"]?.value, let list = strings(node, "\(path).to") {
                    for address in list where !ConfigReader.isMailAddress(address) { problem(node, "\(path).to", "\"\(address)\" is not a mail address") }
                    mail.to = list
                    if list.isEmpty { problem(node, "\(path).to", "must list at least one recipient") }
                } else if fields["to"] == nil {
                    problem(item, "\(path).to", "is missing: the recipients")
                }
                mail.username = fields["username"].flatMap { string($0.value, "\(path).username") }
                if fields["password_file"] != nil || fields["password"] != nil {
                    mail.password = secret(
                        inline: fields["password"]?.value, file: fields["password_file"]?.value, parent: path, inlineKey: "password", fileKey: "password_file")
                }
                if let node = fields["starttls"]?.value, let flag = bool(node, "\(path).starttls") { mail.startTLS = flag }
                if let node = fields["ca_file"]?.value, let name = string(node, "\(path).ca_file") { mail.caFile = resolvePath(name) }
            } else if let key = mailKeys.compactMap({ fields[$0]?.key }).first {
                problem(key, "\(path).\(key.string ?? "from")", "only applies to type: email")
            }
            var template: String?
            var headerTemplates: [String: String] = [:]
            if let node = fields["template"]?.value, let text = string(node, "\(path).template") {
                template = text
                if type != .webhook { problem(fields["template"]!.key, "\(path).template", "only applies to type: webhook") }
                if let message = HookTemplate.problem(text) { problem(node, "\(path).template", message) }
            }
            if let node = fields["headers"]?.value, let values = stringMap(node, "\(path).headers") {
                headerTemplates = values
                if type != .webhook { problem(fields["headers"]!.key, "\(path).headers", "only applies to type: webhook") }
                for (header, text) in values.sorted(by: { $0.key < $1.key }) {
                    if let message = HookTemplate.problem(text) { problem(node, "\(path).headers.\(header)", message) }
                }
            }
            if problems.count == before, let name, let hookURL {
                hooks.append(
                    HookConfig(
                        name: name, type: type, url: hookURL, severities: severities, matchers: matchers, sendResolved: sendResolved,
                        groupBy: groupBy, groupWait: groupWait, groupInterval: groupInterval, repeatInterval: repeatInterval, hmacSecret: hmac,
                        routingKey: routingKey, template: template, headerTemplates: headerTemplates, mail: mail))
            }
        }
        return hooks
    }
}
