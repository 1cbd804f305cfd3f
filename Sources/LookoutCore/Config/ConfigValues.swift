// LookoutCore: config, sources, probing, scheduling and health bookkeeping — plain Swift,
// no C and no SQL.

import Foundation
import ResilientHTTP

/// Parsers for the config's durations (`500ms`, `30s`, `5m`, `1h`, `7d`, `1h30m`), sizes and
/// rates. Every number is hostile until checked: text past the largest allowed value is refused
/// with a reason, never converted with a trap.
package enum ConfigValues {
    /// Why a value was refused, as a phrase for `check-config`.
    package enum Problem: Error, Equatable, Sendable {
        case malformed
        case notPositive
        case tooLarge(limit: String)
    }

    /// The largest size the config may name: 1 EiB, far below Int64's limit of 8 EiB.
    package static let largestSize: Int64 = 1 << 60
    /// The largest rate the config may name, per second.
    package static let largestRate = 1e9

    /// Parses a duration; nil when the text is not one or is longer than `Duration.longest`.
    package static func duration(_ text: String) -> Duration? {
        try? parseDuration(text)
    }

    /// Parses a duration, saying why it cannot be one. Zero parses (callers that need a
    /// positive duration refuse it with `.notPositive`).
    package static func parseDuration(_ text: String) throws(Problem) -> Duration {
        let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600), ("d", 86400), ("w", 604_800)]
        var rest = Substring(text.trimmingCharacters(in: .whitespaces))
        guard !rest.isEmpty else { throw .malformed }
        var seconds = 0.0
        while !rest.isEmpty {
            let number = rest.prefix { ("0"..."9").contains($0) || $0 == "." }
            guard !number.isEmpty, let value = Double(number), value.isFinite else { throw .malformed }
            rest = rest.dropFirst(number.count)
            guard let unit = units.first(where: { rest.hasPrefix($0.0) && !(rest.hasPrefix("ms") && $0.0 == "m") }) else {
                throw .malformed
            }
            seconds += value * unit.1
            rest = rest.dropFirst(unit.0.count)
        }
        guard seconds.isFinite, seconds <= Duration.longest.seconds else { throw .tooLarge(limit: "100 years") }
        return Duration.clamping(seconds: seconds) ?? .zero
    }

    /// A duration the way a config would write it: `500ms`, `30s`, `5m`, `1h30m`.
    package static func format(_ duration: Duration) -> String {
        var milliseconds = duration.totalMilliseconds
        if milliseconds == 0 { return "0s" }
        if milliseconds % 1000 != 0 && milliseconds < 60_000 {
            return milliseconds % 1000 == 0 ? "\(milliseconds / 1000)s" : "\(milliseconds)ms"
        }
        var out = ""
        for (unit, size) in [("d", Int64(86_400_000)), ("h", 3_600_000), ("m", 60_000), ("s", 1000), ("ms", 1)] {
            if milliseconds >= size {
                out += "\(milliseconds / size)\(unit)"
                milliseconds %= size
            }
        }
        return out
    }
}

extension ConfigValues {
    /// Parses a size: `512`, `512KiB`, `8GiB`, `10MB`, `1.5GB`; nil when not one or too large.
    package static func size(_ text: String) -> Int64? {
        try? parseSize(text)
    }

    /// Parses a size, saying why it cannot be one.
    package static func parseSize(_ text: String) throws(Problem) -> Int64 {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let units: [(String, Double)] = [
            ("KiB", 1024), ("MiB", 1_048_576), ("GiB", 1_073_741_824), ("TiB", 1_099_511_627_776),
            ("KB", 1e3), ("MB", 1e6), ("GB", 1e9), ("TB", 1e12), ("B", 1), ("", 1),
        ]
        for (unit, factor) in units where trimmed.hasSuffix(unit) {
            let number = trimmed.dropLast(unit.count).trimmingCharacters(in: .whitespaces)
            guard number.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || $0 == UInt8(ascii: ".") }),
                let value = Double(number), value.isFinite, value >= 0
            else { continue }
            guard value * factor <= Double(largestSize) else { throw .tooLarge(limit: "1EiB") }
            return Int64(clamping: value * factor) ?? 0
        }
        throw .malformed
    }

    /// Parses a rate into events a second: `5/s`, `300/m`, `10/h`; nil when not one or too large.
    package static func rate(_ text: String) -> Double? {
        try? parseRate(text)
    }

    /// Parses a rate, saying why it cannot be one.
    package static func parseRate(_ text: String) throws(Problem) -> Double {
        let parts = text.trimmingCharacters(in: .whitespaces).split(separator: "/")
        guard parts.count == 2, let count = Double(parts[0]), count.isFinite else { throw .malformed }
        guard count > 0 else { throw .notPositive }
        let perSecond: Double
        switch parts[1] {
        case "s": perSecond = count
        case "m": perSecond = count / 60
        case "h": perSecond = count / 3600
        default: throw .malformed
        }
        guard perSecond <= largestRate else { throw .tooLarge(limit: "1000000000/s") }
        return perSecond
    }
}
