import Yams

/// The keys of one mapping in the config, spelled as in the file. A config type declares its
/// own (`enum Key: String, ConfigKey`), so the known-keys check, the did-you-mean and each
/// problem's path come from one list.
protocol ConfigKey: RawRepresentable<String>, CaseIterable, Hashable {}

/// One key of a mapping, where it is: its value node and its path (`sources[3].retry.base`).
struct ConfigEntry {
    let key: Node
    let value: Node
    let path: String
}

/// A mapping read against `Key`: unknown keys were reported when it was made, and each
/// entry knows its path.
struct ConfigSection<Key: ConfigKey> {
    /// The mapping's own node, for problems about a key that is missing.
    let node: Node
    let path: String
    fileprivate let entries: [Key: (key: Node, value: Node)]

    fileprivate init(node: Node, path: String, entries: [Key: (key: Node, value: Node)]) {
        self.node = node
        self.path = path
        self.entries = entries
    }

    /// The entries of a mapping already checked (by `mapping(_:_:known:)`) that are `Key`s.
    init(node: Node, path: String, checked: [String: (key: Node, value: Node)]) {
        var entries: [Key: (key: Node, value: Node)] = [:]
        for (name, entry) in checked {
            if let key = Key(rawValue: name) { entries[key] = entry }
        }
        self.init(node: node, path: path, entries: entries)
    }

    subscript(_ key: Key) -> ConfigEntry? {
        entries[key].map { ConfigEntry(key: $0.key, value: $0.value, path: path(key)) }
    }

    func path(_ key: Key) -> String {
        path.isEmpty ? key.rawValue : "\(path).\(key.rawValue)"
    }

    func has(_ key: Key) -> Bool { entries[key] != nil }

    /// The entry a key spelled out names (as probers list their own keys), if `Key` has it.
    func entry(named name: String) -> ConfigEntry? {
        Key(rawValue: name).flatMap { self[$0] }
    }
}

/// A config type that reads its own keys over the values it already holds: its defaults, or
/// what a parent (`defaults:` for a source) gave it. A new key is a case of `Key` and a line
/// in `read`.
protocol ConfigReadable {
    associatedtype Key: ConfigKey
    mutating func read(_ section: ConfigSection<Key>, _ reader: inout ConfigReader)
}

extension ConfigReader {
    /// `node` as a mapping of `Key`s, reporting unknown keys with a suggestion.
    mutating func section<Key: ConfigKey>(_ node: Node, _ path: String, _: Key.Type = Key.self) -> ConfigSection<Key>? {
        guard let found = mapping(node, path, isKnown: { Key(rawValue: $0) != nil }, known: Key.allCases.map(\.rawValue)) else { return nil }
        return ConfigSection(node: node, path: path, checked: found)
    }

    /// `node` as a mapping of two types' keys (a source's own and those it shares with
    /// `defaults`), reporting keys that are neither.
    mutating func sections<First: ConfigKey, Second: ConfigKey>(
        _ node: Node, _ path: String, _: First.Type, _: Second.Type
    ) -> (ConfigSection<First>, ConfigSection<Second>)? {
        guard
            let found = mapping(
                node, path, isKnown: { First(rawValue: $0) != nil || Second(rawValue: $0) != nil },
                known: First.allCases.map(\.rawValue) + Second.allCases.map(\.rawValue))
        else { return nil }
        var first: [First: (key: Node, value: Node)] = [:]
        var second: [Second: (key: Node, value: Node)] = [:]
        for (name, entry) in found {
            if let key = First(rawValue: name) { first[key] = entry } else if let key = Second(rawValue: name) { second[key] = entry }
        }
        return (ConfigSection(node: node, path: path, entries: first), ConfigSection(node: node, path: path, entries: second))
    }

    /// `value` with the mapping at `entry` read over it; unchanged when there is none.
    mutating func read<Value: ConfigReadable>(_ entry: ConfigEntry?, into value: inout Value) {
        guard let entry, let section = section(entry.value, entry.path, Value.Key.self) else { return }
        value.read(section, &self)
    }

    mutating func problem(_ entry: ConfigEntry, _ message: String) {
        problem(entry.value, entry.path, message)
    }

    mutating func warning(_ entry: ConfigEntry, _ message: String) {
        warning(entry.value, entry.path, message)
    }

    /// "is missing" (with `hint` after a colon) when `section` lacks `key`; true when present.
    @discardableResult
    mutating func require<Key: ConfigKey>(_ section: ConfigSection<Key>, _ key: Key, _ hint: String? = nil) -> Bool {
        guard !section.has(key) else { return true }
        problem(section.node, section.path(key), hint.map { "is missing: \($0)" } ?? "is missing")
        return false
    }

    // The typed readers, by entry: nil when the key is absent or its value is wrong (noted).

    mutating func string(_ entry: ConfigEntry?) -> String? {
        entry.flatMap { string($0.value, $0.path) }
    }

    mutating func strings(_ entry: ConfigEntry?) -> [String]? {
        entry.flatMap { strings($0.value, $0.path) }
    }

    mutating func stringMap(_ entry: ConfigEntry?) -> [String: String]? {
        entry.flatMap { stringMap($0.value, $0.path) }
    }

    mutating func sequence(_ entry: ConfigEntry?) -> Node.Sequence? {
        entry.flatMap { sequence($0.value, $0.path) }
    }

    mutating func duration(_ entry: ConfigEntry?, zeroAllowed: Bool = false) -> Duration? {
        entry.flatMap { duration($0.value, $0.path, zeroAllowed: zeroAllowed) }
    }

    mutating func int(_ entry: ConfigEntry?, range: ClosedRange<Int> = 0...Int.max) -> Int? {
        entry.flatMap { int($0.value, $0.path, range: range) }
    }

    mutating func double(_ entry: ConfigEntry?, range: ClosedRange<Double>) -> Double? {
        entry.flatMap { double($0.value, $0.path, range: range) }
    }

    mutating func bool(_ entry: ConfigEntry?) -> Bool? {
        entry.flatMap { bool($0.value, $0.path) }
    }

    mutating func size(_ entry: ConfigEntry?) -> Int64? {
        entry.flatMap { size($0.value, $0.path) }
    }

    mutating func rate(_ entry: ConfigEntry?) -> Double? {
        entry.flatMap { rate($0.value, $0.path) }
    }

    mutating func url(_ entry: ConfigEntry?, kind: SourceKind = .http) -> String? {
        entry.flatMap { url($0.value, $0.path, kind: kind) }
    }

    mutating func timestamp(_ entry: ConfigEntry?) -> Int64? {
        entry.flatMap { timestamp($0.value, $0.path) }
    }

    /// One of `Value`'s raw values, or a problem naming them all (`"x" is not a detail (use
    /// default or full)`).
    mutating func choice<Value: RawRepresentable<String> & CaseIterable>(_ entry: ConfigEntry?, _ what: String) -> Value? {
        guard let entry, let text = string(entry) else { return nil }
        if let value = Value(rawValue: text) { return value }
        problem(entry, "\"\(text)\" is not \(what) (use \(Value.allCases.map(\.rawValue).listedWithOr))")
        return nil
    }
}
