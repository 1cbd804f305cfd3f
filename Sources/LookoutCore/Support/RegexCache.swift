import LinearRegex
import Synchronization

/// Regular expressions compiled once per pattern: a module's patterns are checked on every
/// probe of every target, and compiling one costs more than matching it. Patterns come from the
/// config, so the cache stays small; past `limit` (a config reloaded with new patterns many
/// times) it starts over. Every pattern is Go's syntax, matched by RE2 in linear time
/// (`LinearRegex`), as blackbox_exporter reads it.
package enum RegexCache {
    private static let compiled = Mutex<[String: Result<Regexp, Regexp.SyntaxError>]>([:])
    private static let limit = 1024

    /// The pattern compiled, or why it does not compile; a pattern repeated (by YAML aliases,
    /// say) compiles once.
    private static func compile(_ pattern: String) -> Result<Regexp, Regexp.SyntaxError> {
        if let entry = compiled.withLock({ $0[pattern] }) { return entry }
        let entry = Result { () throws(Regexp.SyntaxError) in try Regexp(pattern) }
        compiled.withLock { cache in
            if cache.count >= limit { cache.removeAll(keepingCapacity: true) }
            cache[pattern] = entry
        }
        return entry
    }

    /// The compiled `pattern`, or nil if it is not a regular expression in Go's syntax.
    package static func regex(_ pattern: String) -> Regexp? {
        try? compile(pattern).get()
    }

    /// Whether `pattern` matches somewhere in `text`; false if it is not a regular expression.
    package static func matches(_ pattern: String, _ text: String) -> Bool {
        regex(pattern)?.matches(text) ?? false
    }

    /// Whether `pattern` matches the whole of `text`; false if it is not a regular expression.
    package static func matchesWhole(_ pattern: String, _ text: String) -> Bool {
        regex(pattern)?.matchesWhole(text) ?? false
    }

    /// Why `pattern` is not a regular expression in Go's syntax, for a config problem: RE2's
    /// words with the position, and that blackbox_exporter refuses it too. Nil for a good one.
    package static func problem(_ pattern: String) -> String? {
        guard case .failure(let error) = compile(pattern) else { return nil }
        if error.isTooLarge {
            let shown = pattern.count > 80 ? pattern.prefix(80) + "…" : Substring(pattern)
            return
                "\"\(shown)\" is too large to match in linear time (RE2's program would take over \(Regexp.defaultMaxMemory >> 20) MiB); split it into smaller patterns"
        }
        return "\"\(pattern)\" is not a regular expression in Go's syntax (RE2): \(error); blackbox_exporter refuses it too"
    }
}
