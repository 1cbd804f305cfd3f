import Foundation
import Yams

/// The top level of the config file. Each value's default is its property's in `LookoutConfig`;
/// reading only replaces what the file gives.
extension LookoutConfig: ConfigReadable {
    enum Key: String, ConfigKey {
        case listen, database, retention, groups, location, peers, shard, defaults, sources, connectivity, maintenance, announcements, metrics, alerts
        case probeModulesFile = "probe_modules_file"
        case probeAllow = "probe_allow"
        case rawRetention = "raw_retention"
        case rollupRetention = "rollup_retention"
        case externalURL = "external_url"
        case adminTokenFile = "admin_token_file"
        case adminToken = "admin_token"
        case probeModules = "probe_modules"
        case statusPage = "status_page"
        case rdap
    }

    enum RDAPKey: String, ConfigKey {
        case bootstrapURL = "bootstrap_url"
        case servers
    }

    enum ConnectivityKey: String, ConfigKey { case canaries }
    enum GroupKey: String, ConfigKey {
        case vendorStatus = "vendor_status"
        case sla
    }
    enum MetricsKey: String, ConfigKey { case detail }
    enum AlertsKey: String, ConfigKey {
        case rules, defaults, hooks
        case evaluationInterval = "evaluation_interval"
        case requireHTTPS = "require_https"
    }

    mutating func read(_ top: ConfigSection<Key>, _ reader: inout ConfigReader) {
        if let entry = top[.listen], let listen = reader.string(entry) {
            if listen.contains(":"), let port = listen.split(separator: ":").last, UInt16(port) != nil {
                self.listen = listen
            } else {
                reader.problem(entry, "\"\(listen)\" is not HOST:PORT (e.g. 127.0.0.1:9464)")
            }
        }
        if let entry = top[.database], let database = reader.string(entry) { readDatabase(database, entry, &reader) }
        if let value = reader.duration(top[.retention]) { retention = value }
        if let value = reader.duration(top[.rawRetention]) { rawRetention = value }
        reader.read(top[.rollupRetention], into: &rollupRetention)
        if let entry = top[.location], let value = reader.string(entry) {
            if ConfigReader.isSourceName(value) {
                location = value
            } else {
                reader.problem(entry, "\"\(value)\" must be 1 to 64 letters, digits, '.', '_' or '-' (it becomes a Prometheus label value)")
            }
        }
        if let entry = top[.peers], let list = reader.sequence(entry) {
            if list.count > 64 { reader.problem(entry, "at most 64 peers (\(list.count) listed)") }
            peers = list.prefix(64).enumerated().compactMap { reader.url($0.element, "\(entry.path)[\($0.offset)]") }.map {
                $0.hasSuffix("/") ? String($0.dropLast()) : $0
            }
        }
        if let entry = top[.rdap], let fields = reader.section(entry.value, entry.path, RDAPKey.self) {
            if let value = reader.url(fields[.bootstrapURL]) { rdap.bootstrapURL = value }
            if let entry = fields[.servers], let servers = reader.stringMap(entry) {
                for (tld, url) in servers.sorted(by: { $0.key < $1.key }) {
                    if let problem = ProbeURL.problem(url) {
                        reader.problem(entry.value, "\(entry.path).\(tld)", problem)
                    } else {
                        rdap.servers[tld.lowercased()] = url
                    }
                }
            }
        }
        if let value = reader.url(top[.externalURL]) {
            externalURL = value.hasSuffix("/") ? String(value.dropLast()) : value
        }
        if top.has(.adminTokenFile) || top.has(.adminToken) {
            adminToken = reader.secret(
                inline: top[.adminToken]?.value, file: top[.adminTokenFile]?.value, parent: "", inlineKey: Key.adminToken.rawValue,
                fileKey: Key.adminTokenFile.rawValue)
        }
        reader.read(top[.shard], into: &shard)
        sources = reader.readSources(top[.sources]?.value, defaultsNode: top[.defaults]?.value, root: top.node)
        if let entry = top[.connectivity], let connectivity = reader.section(entry.value, entry.path, ConnectivityKey.self) {
            readCanaries(connectivity[.canaries], &reader)
        }
        if let entry = top[.groups] { readGroups(entry, &reader) }
        readProbeModules(top, &reader)
        if let node = top[.maintenance]?.value { maintenance = reader.readMaintenance(node, sources: sources) }
        reader.read(top[.statusPage], into: &statusPage)
        if statusPage.isPublic, !top.has(.adminTokenFile), !top.has(.adminToken) {
            reader.warning(
                top[.statusPage]?.value, "status_page.public",
                "the full page moves to /oncall, which needs admin_token_file: without one, /oncall answers 403 and only the public page is served")
        }
        if let entry = top[.metrics], let metrics = reader.section(entry.value, entry.path, MetricsKey.self),
            let detail: MetricsDetail = reader.choice(metrics[.detail], "a detail")
        {
            metricsDetail = detail
        }
        if let node = top[.announcements]?.value { announcements = reader.readAnnouncements(node, sources: sources) }
        if let entry = top[.alerts], let alerts = reader.section(entry.value, entry.path, AlertsKey.self) { readAlerts(alerts, &reader) }
    }

    private mutating func readDatabase(_ database: String, _ entry: ConfigEntry, _ reader: inout ConfigReader) {
        self.database = database == ":memory:" ? database : reader.resolvePath(database)
        // SQLite writes its journal beside the file (`/dev/null-journal`), and a directory
        // would only be reported as read-only at start.
        var isDirectory: ObjCBool = false
        guard self.database != ":memory:", FileManager.default.fileExists(atPath: self.database, isDirectory: &isDirectory) else { return }
        let target = URL(fileURLWithPath: self.database).resolvingSymlinksInPath().path
        let kind = (try? FileManager.default.attributesOfItem(atPath: target)[.type] as? FileAttributeType) ?? nil
        if isDirectory.boolValue {
            reader.problem(entry, "\"\(database)\" is a directory; name a file in it (e.g. \(database)/lookout.sqlite)")
        } else if let kind, kind != .typeRegular {
            reader.problem(entry, "\"\(database)\" is not a regular file (a device or socket); name a file for the SQLite database")
        }
    }

    private mutating func readCanaries(_ entry: ConfigEntry?, _ reader: inout ConfigReader) {
        guard let entry, let list = reader.sequence(entry) else { return }
        canaries = list.enumerated().compactMap { reader.url($0.element, "\(entry.path)[\($0.offset)]") }
        // A canary on the same host as sources would excuse them: when that host is down,
        // Lookout calls itself offline and holds back the very alerts that matter.
        for (index, canary) in canaries.enumerated() {
            let host = SourceConfig.hostName(of: canary)
            let sharing = sources.filter { SourceConfig.hostName(of: $0.url) == host }.map(\.name)
            guard !sharing.isEmpty else { continue }
            let names = sharing.prefix(3).joined(separator: ", ") + (sharing.count > 3 ? " and \(sharing.count - 3) more" : "")
            reader.warning(
                index < list.count ? list[index] : entry.value, "\(entry.path)[\(index)]",
                "\(canary) is on the same host as \(names): if that host goes down, Lookout would call itself offline and hold back their alerts; use a canary on another network path"
            )
        }
    }

    /// `probe_modules`, the modules of `probe_modules_file` (with `probe_allow`), and the
    /// sources' `module:` names resolved against both.
    private mutating func readProbeModules(_ top: ConfigSection<Key>, _ reader: inout ConfigReader) {
        if let node = top[.probeModules]?.value { probeModules = reader.readModules(node) }
        if let file = top[.probeModulesFile] {
            var allow: [String]?
            if let entry = top[.probeAllow], let patterns = reader.sequence(entry) {
                allow = patterns.enumerated().compactMap { index, item in reader.pattern(item, "\(entry.path)[\(index)]") }
            }
            for (name, module) in reader.readBlackboxFile(file.value, allow: allow).sorted(by: { $0.key < $1.key }) {
                if probeModules[name] != nil {
                    reader.problem(file, "module \"\(name)\" is defined both in probe_modules and in \(module.origin); rename one")
                } else {
                    probeModules[name] = module
                }
            }
        } else if let entry = top[.probeAllow] {
            reader.problem(entry, "only applies to the modules of probe_modules_file")
        }
        for reference in reader.moduleReferences where sources.indices.contains(reference.source) {
            if let module = probeModules[reference.name] {
                // A dns source takes what a dns module says passes (valid_rcodes, the record
                // checks); the question is still its URL's.
                if sources[reference.source].kind == .dns, module.dns == nil {
                    reader.problem(
                        reference.node, "sources[\(reference.source)].module",
                        "\"\(reference.name)\" is a \(module.kind) module; a dns source takes a dns module (prober: dns)")
                } else {
                    sources[reference.source].module = module
                }
            } else {
                let known = probeModules.keys.sorted().joined(separator: ", ")
                reader.problem(
                    reference.node, "sources[\(reference.source)].module",
                    "no probe module is named \"\(reference.name)\" (\(known.isEmpty ? "none is configured" : "configured: \(known)"))")
            }
        }
    }

    private mutating func readAlerts(_ alerts: ConfigSection<AlertsKey>, _ reader: inout ConfigReader) {
        if let value = reader.duration(alerts[.evaluationInterval]) { alertEvaluationInterval = value }
        if let rules = alerts[.rules]?.value { alertRules = reader.readRules(rules) }
        if let node = alerts[.defaults]?.value { reader.readDefaultRules(node, into: &self) }
        if let node = alerts[.hooks]?.value { hooks = reader.readHooks(node) }
        // Notifications carry incident details and, for chat webhooks, a secret URL: with
        // require_https, a hook that would send them in the clear is a config error.
        if let flag = alerts[.requireHTTPS], reader.bool(flag) == true, let list = reader.sequence(alerts[.hooks]) {
            for hook in hooks where !hook.url.lowercased().hasPrefix("https://") {
                let found = list.enumerated().first { $0.element.mapping?["name"]?.string == hook.name }
                let node = found?.element.mapping?["url"] ?? found?.element ?? flag.value
                reader.problem(
                    node, "\(alerts.path(.hooks))[\(found?.offset ?? 0)].url",
                    "must be https:// (alerts.require_https is set): notifications would travel in the clear")
            }
        }
    }
}

/// `rollup_retention: {minute, hour, day}`: each tier outlives the finer one.
extension RollupRetention: ConfigReadable {
    enum Key: String, ConfigKey { case minute, hour, day }

    mutating func read(_ tiers: ConfigSection<Key>, _ reader: inout ConfigReader) {
        var retention = self
        if let value = reader.duration(tiers[.minute]) { retention.minute = value }
        if let value = reader.duration(tiers[.hour]) { retention.hour = value }
        if let value = reader.duration(tiers[.day]) { retention.day = value }
        // The last day's response-time chart reads minute rows.
        if retention.minute < .seconds(25 * 3600) {
            reader.problem(
                tiers[.minute]?.value ?? tiers.node, tiers.path(.minute),
                "must be at least 25h: the status page's 24-hour response-time chart reads minute rows")
        } else if retention.hour < retention.minute {
            reader.problem(
                tiers[.hour]?.value ?? tiers.node, tiers.path(.hour), "must be at least \(tiers.path(.minute)) (\(ConfigValues.format(retention.minute)))")
        } else if retention.day < retention.hour {
            reader.problem(tiers[.day]?.value ?? tiers.node, tiers.path(.day), "must be at least \(tiers.path(.hour)) (\(ConfigValues.format(retention.hour)))")
        } else {
            self = retention
        }
    }
}

/// `shard: {index, count}`.
extension Shard: ConfigReadable {
    enum Key: String, ConfigKey { case index, count }

    mutating func read(_ shard: ConfigSection<Key>, _ reader: inout ConfigReader) {
        let count = reader.int(shard[.count], range: 1...10_000) ?? 1
        let index = reader.int(shard[.index]) ?? 0
        if index >= count, let entry = shard[.index] {
            reader.problem(entry, "must be below \(shard.path(.count)) (\(count))")
        } else {
            self = Shard(index: index, count: count)
        }
    }
}

extension LookoutConfig {
    /// `groups: {NAME: {vendor_status: …}}`: what every source of a group shares unless it says
    /// otherwise. A group no source names is a problem with a did-you-mean (a typo would
    /// otherwise do nothing).
    fileprivate mutating func readGroups(_ entry: ConfigEntry, _ reader: inout ConfigReader) {
        let named = Set(sources.compactMap(\.group))
        guard let groups = reader.mapping(entry.value, entry.path, known: named.sorted()) else { return }
        for (name, group) in groups.sorted(by: { $0.key < $1.key }) {
            guard let fields = reader.section(group.value, "\(entry.path).\(name)", GroupKey.self) else { continue }
            // Members without an `sla` of their own share the defaults': read over them once.
            let members = sources.indices.filter { sources[$0].group == name && !sources[$0].ownsSLA }
            if let slaEntry = fields[.sla], let first = members.first {
                var sla = sources[first].sla
                reader.readSLA(slaEntry, into: &sla)
                for index in members { sources[index].sla = sla }
            }
            guard let vendorEntry = fields[.vendorStatus], let vendor = reader.vendorStatus(vendorEntry) else { continue }
            for index in sources.indices where sources[index].group == name && sources[index].vendorStatus == nil {
                sources[index].vendorStatus = vendor
            }
        }
    }
}
