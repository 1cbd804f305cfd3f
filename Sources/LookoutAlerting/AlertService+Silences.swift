import Foundation
import Logging
import LookoutCore
import LookoutStore
import Synchronization

/// Silences: added and ended through the store, kept in memory for the evaluation, and checked
/// against the labels alerts can carry before one is added.
extension AlertService {
    @discardableResult
    package func addSilence(_ silence: Silence) throws -> Int64 {
        let id = try store.add(silence)
        var saved = silence
        saved.id = id
        silences.withLock { $0.append(saved) }
        return id
    }

    /// Ends silence `id` now; false when there is no such silence in force.
    package func expireSilence(_ id: Int64, nowMs: Int64 = Timestamp.nowMs()) throws -> Bool {
        guard try store.expireSilence(id, nowMs: nowMs) else { return false }
        silences.withLock { $0.removeAll { $0.id == id } }
        return true
    }

    /// The label names a silence may match: those every alert carries, and the rules' own.
    package var knownLabelNames: Set<String> {
        Set(["alertname", "severity", "source"]).union(rules.flatMap(\.labels.keys))
    }

    /// Why `matchers` cannot match any alert (a misspelled label name, a rule or source that
    /// does not exist), naming the key; nil when they are fine.
    package func problem(matchers: [String: String]) -> String? {
        let known = knownLabelNames
        for key in matchers.keys.sorted() where !known.contains(key) {
            return "matchers: no alert has a label \"\(key)\" (known: \(known.sorted().joined(separator: ", ")))"
        }
        if let rule = matchers["alertname"], !rules.contains(where: { $0.name == rule }) {
            return "matchers.alertname: no rule is named \"\(rule)\" (rules: \(rules.map(\.name).joined(separator: ", ")))"
        }
        if let severity = matchers["severity"], !["critical", "warning", "info"].contains(severity) {
            return "matchers.severity: \"\(severity)\" is not critical, warning or info"
        }
        if let source = matchers["source"], !monitor.config.sources.contains(where: { $0.name == source }) {
            return "matchers.source: no source is named \"\(source)\""
        }
        return nil
    }

    /// How many silences are kept in memory, ended ones not yet let go included (for tests).
    package var keptSilences: Int { silences.withLock(\.count) }

    package func activeSilences(nowMs: Int64 = Timestamp.nowMs()) -> [Silence] {
        silences.withLock { $0.filter { $0.endsAtMs > nowMs } }
    }
}
