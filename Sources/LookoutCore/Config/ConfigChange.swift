/// What a reload changed, for the log line an operator reads afterwards and the answer of
/// `POST /-/reload`: sources and hooks added, removed or changed by name, and the keys that
/// take effect only at the next start.
///
/// ```swift
/// let change = ConfigChange(from: running, to: loaded)
/// logger.info("config reloaded", metadata: change.metadata)
/// ```
package struct ConfigChange: Sendable, Equatable {
    package var sourcesAdded: [String] = []
    package var sourcesRemoved: [String] = []
    package var sourcesChanged: [String] = []
    package var hooksAdded: [String] = []
    package var hooksRemoved: [String] = []
    package var hooksChanged: [String] = []
    /// Keys read only at start whose value differs, each with what it is and what it will be:
    /// `listen: 127.0.0.1:9464 → 0.0.0.0:9464`.
    package var needsRestart: [String] = []

    package init(from old: LookoutConfig, to new: LookoutConfig) {
        (sourcesAdded, sourcesRemoved, sourcesChanged) = ConfigChange.compare(old.sources, new.sources, name: \.name)
        (hooksAdded, hooksRemoved, hooksChanged) = ConfigChange.compare(old.hooks, new.hooks, name: \.name)
        func restart(_ key: String, _ before: String, _ after: String) {
            if before != after { needsRestart.append("\(key): \(before) → \(after)") }
        }
        restart("listen", old.listen, new.listen)
        restart("database", old.database, new.database)
        restart("retention", ConfigValues.format(old.retention), ConfigValues.format(new.retention))
        restart("raw_retention", ConfigValues.format(old.rawRetention), ConfigValues.format(new.rawRetention))
        func tiers(_ retention: RollupRetention) -> String {
            [retention.minute, retention.hour, retention.day].map(ConfigValues.format).joined(separator: "/")
        }
        restart("rollup_retention", tiers(old.rollupRetention), tiers(new.rollupRetention))
    }

    /// The log line's fields; empty lists are left out.
    package var metadata: [String: String] {
        var fields: [String: String] = [:]
        for (key, names) in [
            ("sources_added", sourcesAdded), ("sources_removed", sourcesRemoved), ("sources_changed", sourcesChanged),
            ("hooks_added", hooksAdded), ("hooks_removed", hooksRemoved), ("hooks_changed", hooksChanged),
        ] where !names.isEmpty {
            fields[key] = names.joined(separator: ",")
        }
        return fields
    }

    private static func compare<T: Equatable>(_ old: [T], _ new: [T], name: (T) -> String) -> (added: [String], removed: [String], changed: [String]) {
        let before = Dictionary(old.map { (name($0), $0) }) { first, _ in first }
        let after = Dictionary(new.map { (name($0), $0) }) { first, _ in first }
        let added = after.keys.filter { before[$0] == nil }.sorted()
        let removed = before.keys.filter { after[$0] == nil }.sorted()
        let changed = after.keys.filter { key in before[key].map { $0 != after[key]! } ?? false }.sorted()
        return (added, removed, changed)
    }
}
