import Foundation
import Synchronization

/// Regular expressions compiled once per pattern: a module's patterns are checked on every
/// probe of every target, and compiling one costs more than matching it. Patterns come from the
/// config, so the cache stays small; past `limit` (a config reloaded with new patterns many
/// times) it starts over.
package enum RegexCache {
    private static let compiled = Mutex<[String: Entry]>([:])
    private static let limit = 1024

    /// An `NSRegularExpression` is immutable and safe to match from any thread.
    private struct Entry: @unchecked Sendable {
        let regex: NSRegularExpression?
    }

    /// The compiled `pattern`, or nil if it is not a regular expression.
    package static func regex(_ pattern: String) -> NSRegularExpression? {
        if let entry = compiled.withLock({ $0[pattern] }) { return entry.regex }
        let entry = Entry(regex: try? NSRegularExpression(pattern: pattern))
        compiled.withLock { cache in
            if cache.count >= limit { cache.removeAll(keepingCapacity: true) }
            cache[pattern] = entry
        }
        return entry.regex
    }

    /// Whether `pattern` matches somewhere in `text`; false if it is not a regular expression.
    package static func matches(_ pattern: String, _ text: String) -> Bool {
        regex(pattern)?.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
    }
}
