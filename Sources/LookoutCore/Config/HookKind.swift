import Yams

/// A hook's `type:` as written in the config (`slack`, `email`, ...). Open: the types are the
/// notification providers the caller of `ConfigLoader` hands in, not a list kept here.
package struct HookType: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    package let rawValue: String

    package init(rawValue: String) { self.rawValue = rawValue }
    package init(stringLiteral value: String) { self.rawValue = value }

    package var description: String { rawValue }

    /// A hook without `type:`.
    package static let webhook: HookType = "webhook"
}

/// One hook type's part of the config: the keys it reads besides the shared ones of
/// `HookConfig`, and how. The notification providers (LookoutAlerting) conform; the config
/// reader is handed their list (`ConfigLoader.load(path:hooks:)`), so a new provider is its own
/// file and a line in that list, with nothing to add here.
package protocol HookKind: SendableMetatype {
    /// The `type:` a hook names it by.
    static var type: HookType { get }
    /// Its own keys, spelled as in the file; a hook of another type may not use them.
    static var ownKeys: [String] { get }
    /// Where a hook of this type sends without `url` (PagerDuty's Events API); nil: `url` is required.
    static var defaultURL: String? { get }
    /// What its `url` must be, for problems ("http(s)", "SMTP").
    static var urlDescription: String { get }
    /// What is wrong with `url`, or nil.
    static func urlProblem(_ url: String) -> String?
    /// Reads its own keys into `hook.settings`; problems go to `keys`.
    static func read(_ keys: inout HookKeys, into hook: inout HookConfig)
}

extension HookKind {
    package static var ownKeys: [String] { [] }
    package static var defaultURL: String? { nil }
    package static var urlDescription: String { "http(s)" }
    package static func urlProblem(_ url: String) -> String? { ProbeURL.problem(url) }
    package static func read(_ keys: inout HookKeys, into hook: inout HookConfig) {}
}

/// A hook's own keys, for its `HookKind` to read: the typed readers of the config, each noting
/// its problem with the key's line and path.
package struct HookKeys {
    var reader: ConfigReader
    let node: Node
    let path: String
    let entries: [String: (key: Node, value: Node)]

    private func entry(_ key: String) -> ConfigEntry? {
        entries[key].map { ConfigEntry(key: $0.key, value: $0.value, path: "\(path).\(key)") }
    }

    package func has(_ key: String) -> Bool { entries[key] != nil }

    package mutating func string(_ key: String) -> String? { reader.string(entry(key)) }
    package mutating func strings(_ key: String) -> [String]? { reader.strings(entry(key)) }
    package mutating func stringMap(_ key: String) -> [String: String]? { reader.stringMap(entry(key)) }
    package mutating func bool(_ key: String) -> Bool? { reader.bool(entry(key)) }

    /// A secret given inline (a `${ENV}` reference) under `inline`, or in the file `file` names.
    package mutating func secret(inline: String, file: String) -> String? {
        reader.secret(inline: entries[inline]?.value, file: entries[file]?.value, parent: path, inlineKey: inline, fileKey: file)
    }

    /// A secret the hook cannot go without: given inline (`${ENV}`) under `inline` or in the file
    /// `file` names; "`file`: is missing: `hint`" when neither key is there.
    package mutating func requiredSecret(inline: String, file: String, _ hint: String) -> String? {
        guard has(file) || has(inline) else {
            require(file, hint)
            return nil
        }
        return secret(inline: inline, file: file)
    }

    /// A file the key names, relative to the config's folder, made absolute (not read).
    package mutating func filePath(_ key: String) -> String? { string(key).map(reader.resolvePath) }

    /// "is missing: `hint`" when the hook lacks `key`.
    package mutating func require(_ key: String, _ hint: String) {
        guard !has(key) else { return }
        reader.problem(node, "\(path).\(key)", "is missing: \(hint)")
    }

    /// A problem with `key`'s value, or with one entry of it (`headers.X-Key`).
    package mutating func problem(_ key: String, _ message: String, entry: String? = nil) {
        let at = entries[key]?.value ?? node
        reader.problem(at, "\(path).\(key)" + (entry.map { ".\($0)" } ?? ""), message)
    }
}

/// A provider's own settings, kept in `HookConfig.settings`.
package protocol ProviderSettings: Sendable, Equatable {}

/// What a hook's provider read of its own keys; nothing for a provider without any.
package struct HookSettings: Sendable, Equatable {
    private let value: (any ProviderSettings)?

    package init() { value = nil }
    package init(_ value: some ProviderSettings) { self.value = value }

    /// The settings, when they are of `type`.
    package func get<Settings: ProviderSettings>(_ type: Settings.Type) -> Settings? { value as? Settings }

    package static func == (lhs: HookSettings, rhs: HookSettings) -> Bool {
        switch (lhs.value, rhs.value) {
        case (nil, nil): true
        case (let left?, let right?): left.isEqual(right)
        default: false
        }
    }
}

extension ProviderSettings {
    fileprivate func isEqual(_ other: any ProviderSettings) -> Bool { (other as? Self) == self }
}
