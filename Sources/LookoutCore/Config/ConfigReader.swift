import Foundation
import Yams

/// Walks the YAML node tree, noting each problem with its line, column and path. The typed
/// readers return nil after noting a problem, so one pass finds everything wrong.
struct ConfigReader {
    let file: String
    let directory: String
    let environment: [String: String]
    var problems: [ConfigProblem] = []
    var warnings: [ConfigProblem] = []
    /// Sources' `module:` names, resolved once the modules are read: (source index, name, node).
    var moduleReferences: [(source: Int, name: String, node: Node)] = []
    /// The hook types a hook may name, with the keys each reads (the notification providers).
    let hookKinds: [any HookKind.Type]
    /// The bytes of regular expressions read so far from this file, aliases expanded.
    private var patternBytes = 0

    init(file: String, directory: String, environment: [String: String], hookKinds: [any HookKind.Type] = []) {
        self.file = file
        self.directory = directory
        self.environment = environment
        self.hookKinds = hookKinds
    }

    /// The whole file: `LookoutConfig` reads its keys over its defaults.
    mutating func readConfig(_ root: Node) -> LookoutConfig {
        var config = LookoutConfig()
        if let top = section(root, "", LookoutConfig.Key.self) { config.read(top, &self) }
        return config
    }

    /// The most bytes of regular expressions one file may hold, every alias counted again: more
    /// than the file itself can hold without YAML aliases (`[&p …, *p, *p]`), which would otherwise
    /// make a kilobyte file into gigabytes of patterns, each checked on every probe.
    static let maxPatternBytes = 1 << 20

    /// The regular expression at `node`, in Go's syntax, or nil with a problem: not a string,
    /// not a pattern RE2 compiles, or past the file's `maxPatternBytes`.
    mutating func pattern(_ node: Node, _ path: String) -> String? {
        guard let pattern = string(node, path) else { return nil }
        let before = patternBytes
        patternBytes += pattern.utf8.count
        guard patternBytes <= ConfigReader.maxPatternBytes else {
            if before <= ConfigReader.maxPatternBytes {
                problem(
                    node, path,
                    "the regular expressions of \((file as NSString).lastPathComponent) add up to more than \(ConfigReader.maxPatternBytes >> 20) MiB here, YAML aliases counted each time they are used; list fewer or shorter patterns"
                )
            }
            return nil
        }
        if let why = RegexCache.problem(pattern) {
            problem(node, path, why)
            return nil
        }
        return pattern
    }

    mutating func problem(_ node: Node?, _ path: String, _ message: String) {
        let mark = node?.mark
        problems.append(ConfigProblem(file: file, line: mark?.line ?? 1, column: mark?.column ?? 1, path: path, message: message))
    }

    mutating func warning(_ node: Node?, _ path: String, _ message: String) {
        let mark = node?.mark
        warnings.append(ConfigProblem(file: file, line: mark?.line ?? 1, column: mark?.column ?? 1, path: path, message: message))
    }

    /// A mapping with string keys, checked against `known`; unknown keys are reported with a
    /// suggestion when one is close.
    mutating func mapping(_ node: Node, _ path: String, known: [String]) -> [String: (key: Node, value: Node)]? {
        var entries: [String: (key: Node, value: Node)] = [:]
        let read = eachEntry(node, path, known: known) { name, key, value in
            guard known.contains(name) else { return false }
            entries[name] = (key, value)
            return true
        }
        return read ? entries : nil
    }

    /// Hands `take` each key of the mapping at `node` with its key and value nodes, once: its
    /// own keys, then those its merge keys bring in that it lacks. `take` keeps what it knows
    /// and returns false for an unknown key, which is reported with a did-you-mean from `known`
    /// (built only then). False when `node` is not a mapping.
    mutating func eachEntry(
        _ node: Node, _ path: String, known: @autoclosure () -> [String], _ take: (String, Node, Node) -> Bool
    ) -> Bool {
        guard let mapping = node.mapping else {
            problem(node, path.isEmpty ? "(top level)" : path, "must be a mapping of keys to values")
            return false
        }
        func visit(_ key: Node, _ value: Node) {
            guard let name = key.scalar?.string else {
                problem(key, path, "keys must be plain names")
                return
            }
            guard take(name, key, value) else {
                var message = "unknown key \"\(name)\""
                if let suggestion = ConfigReader.suggestion(for: name, among: known()) { message += "; did you mean \"\(suggestion)\"?" }
                problem(key, path.isEmpty ? name : "\(path).\(name)", message)
                return
            }
        }
        // The mapping's own pairs as they come (most mappings merge nothing), then what its
        // merge keys bring in that it lacks: its own key wins over a merged one, and an earlier
        // merge over a later (YAML forbids a key twice among a mapping's own).
        var merges = false
        for (key, value) in mapping {
            if ConfigReader.isMergeKey(key) {
                merges = true
            } else {
                visit(key, value)
            }
        }
        guard merges else { return true }
        var budget = ConfigReader.maxMergedPairs
        let (own, merged) = ConfigReader.mergingKeys(mapping, budget: &budget)
        if budget < 0 {
            problem(
                node, path.isEmpty ? "(top level)" : path, "its merge keys (<<) bring in more than \(ConfigReader.maxMergedPairs) keys; merge fewer mappings")
        }
        var names = Set(own.compactMap { $0.0.scalar?.string })
        for (key, value) in merged {
            if let name = key.scalar?.string, !names.insert(name).inserted { continue }
            visit(key, value)
        }
        return true
    }

    /// `<<`, written plain: a merge key (quoted, it is a key named `<<`).
    static func isMergeKey(_ key: Node) -> Bool {
        guard case .scalar(let scalar) = key else { return false }
        return scalar.style == .plain && scalar.string == "<<"
    }

    /// The most keys merge keys may bring into one mapping, each alias counted every time.
    static let maxMergedPairs = 10_000

    /// A mapping's own pairs, and apart the pairs its YAML merge keys bring in (`<<: *base`,
    /// `<<: [*a, *b]`, nested merges too), in the order YAML 1.1 and Go's yaml.v2 (which
    /// blackbox_exporter reads with) give them precedence. `budget` goes below 0 when the merges
    /// bring in more than it allows (an alias bomb through merge keys); what is past it is left out.
    static func mergingKeys(_ mapping: Node.Mapping, budget: inout Int, depth: Int = 0) -> (own: [(Node, Node)], merged: [(Node, Node)]) {
        var own: [(Node, Node)] = []
        var merged: [(Node, Node)] = []
        for (key, value) in mapping {
            guard isMergeKey(key), depth < 32 else {
                own.append((key, value))
                continue
            }
            for source in value.sequence.map(Array.init) ?? [value] {
                guard let inner = source.mapping, budget >= 0 else { continue }
                let (innerOwn, innerMerged) = mergingKeys(inner, budget: &budget, depth: depth + 1)
                budget -= innerOwn.count + innerMerged.count
                if budget >= 0 { merged += innerOwn + innerMerged }
            }
        }
        return (own, merged)
    }

    /// The closest known name within two edits, or one that starts the same way.
    static func suggestion(for name: String, among known: [String]) -> String? {
        let ranked = known.map { ($0, editDistance(name.lowercased(), $0.lowercased())) }.sorted { $0.1 < $1.1 }
        if let best = ranked.first, best.1 <= max(2, name.count / 3) { return best.0 }
        return known.first { $0.hasPrefix(name) || name.hasPrefix($0) }
    }

    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }

    mutating func sequence(_ node: Node, _ path: String) -> Node.Sequence? {
        guard let sequence = node.sequence else {
            problem(node, path, "must be a list")
            return nil
        }
        return sequence
    }

    mutating func string(_ node: Node, _ path: String) -> String? {
        guard let scalar = node.scalar else {
            problem(node, path, "must be a single value, not a list or mapping")
            return nil
        }
        return scalar.string
    }

    mutating func strings(_ node: Node, _ path: String) -> [String]? {
        guard let list = sequence(node, path) else { return nil }
        var values: [String] = []
        for (index, item) in list.enumerated() {
            if let value = string(item, "\(path)[\(index)]") { values.append(value) }
        }
        return values
    }

    mutating func stringMap(_ node: Node, _ path: String) -> [String: String]? {
        guard let mapping = node.mapping else {
            problem(node, path, "must be a mapping of names to values")
            return nil
        }
        var values: [String: String] = [:]
        for (key, value) in mapping {
            guard let name = key.scalar?.string else {
                problem(key, path, "keys must be plain names")
                continue
            }
            if let text = string(value, "\(path).\(name)") { values[name] = text }
        }
        return values
    }

    /// A positive duration, or (with `zeroAllowed`) zero, as for "send at once".
    mutating func duration(_ node: Node, _ path: String, zeroAllowed: Bool = false) -> Duration? {
        guard let text = string(node, path) else { return nil }
        do throws(ConfigValues.Problem) {
            let duration = try ConfigValues.parseDuration(text)
            guard duration > .zero || (zeroAllowed && duration == .zero) else { throw .notPositive }
            return duration
        } catch {
            problem(node, path, ConfigReader.explain(error, text, kind: "a duration", examples: "500ms, 30s, 5m, 1h"))
            return nil
        }
    }

    /// `"5x" is not a duration (use …)`, `"0s" must be above zero`, `"…" is too large (at most …)`.
    static func explain(_ problem: ConfigValues.Problem, _ text: String, kind: String, examples: String) -> String {
        switch problem {
        case .malformed: return "\"\(text)\" is not \(kind) (use \(examples))"
        case .notPositive: return "\"\(text)\" must be above zero"
        case .tooLarge(let limit): return "\"\(text)\" is too large (at most \(limit))"
        }
    }

    mutating func int(_ node: Node, _ path: String, range: ClosedRange<Int> = 0...Int.max) -> Int? {
        guard let text = string(node, path) else { return nil }
        guard let value = Int(text), range.contains(value) else {
            let bounds = range.upperBound == Int.max ? "at least \(range.lowerBound)" : "from \(range.lowerBound) to \(range.upperBound)"
            problem(node, path, "\"\(text)\" must be a whole number \(bounds)")
            return nil
        }
        return value
    }

    mutating func double(_ node: Node, _ path: String, range: ClosedRange<Double> = -Double.greatestFiniteMagnitude...Double.greatestFiniteMagnitude) -> Double?
    {
        guard let text = string(node, path) else { return nil }
        guard let value = Double(text), range.contains(value) else {
            problem(node, path, "\"\(text)\" must be a number from \(ConfigReader.trim(range.lowerBound)) to \(ConfigReader.trim(range.upperBound))")
            return nil
        }
        return value
    }

    static func trim(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e12 ? String(Int64(value)) : "\(value)"
    }

    mutating func bool(_ node: Node, _ path: String) -> Bool? {
        guard let text = string(node, path) else { return nil }
        switch text.lowercased() {
        case "true", "yes", "on": return true
        case "false", "no", "off": return false
        default:
            problem(node, path, "\"\(text)\" must be true or false")
            return nil
        }
    }

    mutating func size(_ node: Node, _ path: String) -> Int64? {
        guard let text = string(node, path) else { return nil }
        do throws(ConfigValues.Problem) {
            let value = try ConfigValues.parseSize(text)
            guard value > 0 else { throw .notPositive }
            return value
        } catch {
            problem(node, path, ConfigReader.explain(error, text, kind: "a size", examples: "512KiB, 100MiB, 8GiB"))
            return nil
        }
    }

    mutating func rate(_ node: Node, _ path: String) -> Double? {
        guard let text = string(node, path) else { return nil }
        do throws(ConfigValues.Problem) {
            return try ConfigValues.parseRate(text)
        } catch {
            problem(node, path, ConfigReader.explain(error, text, kind: "a rate", examples: "5/s, 300/m, 10/h"))
            return nil
        }
    }

    mutating func url(_ node: Node, _ path: String, kind: SourceKind = .http) -> String? {
        guard let text = string(node, path) else { return nil }
        if let message = Probers.prober(for: kind).urlProblem(text) {
            problem(node, path, message)
            return nil
        }
        return text
    }

    /// `${NAME}` references replaced from the environment.
    mutating func expandingEnvironment(_ text: String, _ node: Node, _ path: String) -> String? {
        guard text.utf8.contains(UInt8(ascii: "$")) else { return text }
        var result = ""
        var rest = Substring(text)
        while let start = rest.range(of: "${") {
            result += rest[..<start.lowerBound]
            guard let end = rest[start.upperBound...].firstIndex(of: "}") else {
                problem(node, path, "\"${\" is not closed by \"}\"")
                return nil
            }
            let name = String(rest[start.upperBound..<end])
            guard let value = environment[name] else {
                problem(node, path, "the environment variable \(name) is not set")
                return nil
            }
            result += value
            rest = rest[rest.index(after: end)...]
        }
        return result + rest
    }

    /// A secret given inline (only as a `${ENV}` reference) or as a file to read; `parent` is
    /// the path of the mapping that holds `inlineKey` or `fileKey`.
    mutating func secret(inline: Node?, file: Node?, parent: String, inlineKey: String, fileKey: String) -> String? {
        if let file {
            let path = parent.isEmpty ? fileKey : "\(parent).\(fileKey)"
            guard let name = string(file, path) else { return nil }
            let resolved = resolvePath(name)
            if let reason = ConfigReader.notARegularFile(resolved, limit: 1 << 20) {
                problem(file, path, reason)
                return nil
            }
            guard let data = FileManager.default.contents(atPath: resolved) else {
                problem(file, path, "cannot read \(resolved)")
                return nil
            }
            let value = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            guard !value.isEmpty else {
                problem(file, path, "\(resolved) is empty")
                return nil
            }
            return value
        }
        let path = parent.isEmpty ? inlineKey : "\(parent).\(inlineKey)"
        guard let inline, let text = string(inline, path) else { return nil }
        guard text.contains("${") else {
            problem(inline, path, "write secrets as a ${ENV} reference or in \(fileKey), not in the config")
            return nil
        }
        guard let value = expandingEnvironment(text, inline, path) else { return nil }
        // A variable set but empty (a compose variable left unset) would be a secret anyone
        // knows: an admin token that opens the admin API to every request.
        guard !value.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            problem(inline, path, "\(text) is empty: set the environment variable to the secret, or leave \(inlineKey) out")
            return nil
        }
        return value
    }

    /// A path relative to the config's directory, made absolute.
    /// A file `node` names (relative to the config's folder), or nil and a problem when it
    /// cannot be read: what it holds is not read here, nor ever shown.
    mutating func readableFile(_ node: Node, _ path: String) -> String? {
        guard let name = string(node, path) else { return nil }
        let resolved = resolvePath(name)
        guard FileManager.default.isReadableFile(atPath: resolved) else {
            problem(node, path, "cannot read \(resolved)")
            return nil
        }
        if let reason = ConfigReader.notARegularFile(resolved, limit: nil) {
            problem(node, path, reason)
            return nil
        }
        return resolved
    }

    /// Why `path` (symbolic links followed) cannot be read as a file named in a config, or nil:
    /// a device such as /dev/zero reads for ever, a FIFO blocks the reader until someone writes,
    /// a directory is no file; past `limit` bytes it is not what the key takes.
    static func notARegularFile(_ path: String, limit: Int64?) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }  // missing or unreadable: said by the caller
        let kind = info.st_mode & S_IFMT
        guard kind == S_IFREG else {
            let what = kind == S_IFDIR ? "a directory" : kind == S_IFIFO ? "a FIFO" : kind == S_IFSOCK ? "a socket" : "a device"
            return "\(path) is \(what), not a regular file: name a file"
        }
        if let limit, Int64(info.st_size) > limit { return "\(path) is \(info.st_size) bytes; at most \(limit) are read" }
        return nil
    }

    func resolvePath(_ name: String) -> String {
        name.hasPrefix("/") ? name : (directory as NSString).appendingPathComponent(name)
    }
}

extension ConfigReader {
    /// `[A-Za-z0-9._-]{1,64}`, checked byte by byte (a regular expression per source was a third
    /// of the time to read a 1,000-source config).
    static func isSourceName(_ text: String) -> Bool {
        (1...64).contains(text.utf8.count)
            && text.utf8.allSatisfy { $0.isLetterOrDigit || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") }
    }
}

extension UInt8 {
    /// An ASCII letter or digit.
    var isLetterOrDigit: Bool {
        (0x30...0x39).contains(self) || (0x41...0x5A).contains(self) || (0x61...0x7A).contains(self)
    }

    /// An ASCII hex digit.
    package var isHexDigit: Bool {
        (0x30...0x39).contains(self) || (0x41...0x46).contains(self) || (0x61...0x66).contains(self)
    }
}

extension [String] {
    /// "a, b or c", for messages that name every choice.
    var listedWithOr: String {
        count < 2 ? joined() : dropLast().joined(separator: ", ") + " or " + last!
    }
}
