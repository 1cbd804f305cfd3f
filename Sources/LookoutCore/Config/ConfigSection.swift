import Yams

/// The keys of one mapping in the config, spelled as in the file. A config type declares its
/// own (`enum Key: String, ConfigKey`), so the known-keys check, the did-you-mean and each
/// problem's path come from one list.
protocol ConfigKey: RawRepresentable<String>, CaseIterable, Hashable {}

/// One key of a mapping, where it is: its value node and its path (`sources[3].retry.base`).
/// The path is spelled out only when asked for (a problem, a nested section): most entries
/// of a large config are read without one.
struct ConfigEntry {
    let key: Node
    let value: Node
    /// The mapping's path and the key's name; `name` is empty when `parent` is the whole path.
    private let parent: String
    private let name: String

    init(key: Node, value: Node, path: String) {
        self.init(key: key, value: value, parent: path, name: "")
    }

    fileprivate init(key: Node, value: Node, parent: String, name: String) {
        self.key = key
        self.value = value
        self.parent = parent
        self.name = name
    }

    var path: String {
        if name.isEmpty { return parent }
        return parent.isEmpty ? name : "\(parent).\(name)"
    }
}

/// A mapping read against `Key`: unknown keys were reported when it was made, and each
/// entry knows its path.
struct ConfigSection<Key: ConfigKey> {
    /// The mapping's own node, for problems about a key that is missing.
    let node: Node
    let path: String
    /// In the file's order, the names apart from their nodes: a mapping holds a few of its
    /// type's keys (a source's policy is most often none), so a scan of the names finds one
    /// sooner than hashing it would, and copies no node until one is found.
    fileprivate let names: [Key]
    fileprivate let nodes: [(key: Node, value: Node)]

    fileprivate init(node: Node, path: String, names: [Key], nodes: [(key: Node, value: Node)]) {
        self.node = node
        self.path = path
        self.names = names
        self.nodes = nodes
    }

    /// The entries of a mapping already checked (by `mapping(_:_:known:)`) that are `Key`s.
    init(node: Node, path: String, checked: [String: (key: Node, value: Node)]) {
        var names: [Key] = []
        var nodes: [(key: Node, value: Node)] = []
        for (name, entry) in checked {
            guard let key = Key(rawValue: name) else { continue }
            names.append(key)
            nodes.append(entry)
        }
        self.init(node: node, path: path, names: names, nodes: nodes)
    }

    subscript(_ key: Key) -> ConfigEntry? {
        guard let index = names.firstIndex(of: key) else { return nil }
        return ConfigEntry(key: nodes[index].key, value: nodes[index].value, parent: path, name: key.rawValue)
    }

    func path(_ key: Key) -> String {
        path.isEmpty ? key.rawValue : "\(path).\(key.rawValue)"
    }

    func has(_ key: Key) -> Bool { names.contains(key) }

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
        var names: [Key] = []
        var nodes: [(key: Node, value: Node)] = []
        let read = eachEntry(node, path, known: Key.allCases.map(\.rawValue)) { name, key, value in
            guard let known = Key(rawValue: name) else { return false }
            names.append(known)
            nodes.append((key, value))
            return true
        }
        return read ? ConfigSection(node: node, path: path, names: names, nodes: nodes) : nil
    }

    /// `node` as a mapping of two types' keys (a source's own and those it shares with
    /// `defaults`), reporting keys that are neither.
    mutating func sections<First: ConfigKey, Second: ConfigKey>(
        _ node: Node, _ path: String, _: First.Type, _: Second.Type
    ) -> (ConfigSection<First>, ConfigSection<Second>)? {
        var first: (names: [First], nodes: [(key: Node, value: Node)]) = ([], [])
        var second: (names: [Second], nodes: [(key: Node, value: Node)]) = ([], [])
        let read = eachEntry(node, path, known: First.allCases.map(\.rawValue) + Second.allCases.map(\.rawValue)) { name, key, value in
            if let known = First(rawValue: name) {
                first.names.append(known)
                first.nodes.append((key, value))
            } else if let known = Second(rawValue: name) {
                second.names.append(known)
                second.nodes.append((key, value))
            } else {
                return false
            }
            return true
        }
        guard read else { return nil }
        return (
            ConfigSection(node: node, path: path, names: first.names, nodes: first.nodes),
            ConfigSection(node: node, path: path, names: second.names, nodes: second.nodes)
        )
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
