// LookoutCore: config, sources, probing, scheduling and health bookkeeping — plain Swift,
// no C and no SQL.

import Foundation

/// Parsers for the config's durations (`500ms`, `30s`, `5m`, `1h`, `7d`, `1h30m`).
public enum ConfigValues {
    /// Parses a duration; nil when the text is not one.
    public static func duration(_ text: String) -> Duration? {
        let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600), ("d", 86400), ("w", 604_800)]
        var rest = Substring(text.trimmingCharacters(in: .whitespaces))
        guard !rest.isEmpty else { return nil }
        var seconds = 0.0
        while !rest.isEmpty {
            let number = rest.prefix { $0.isNumber || $0 == "." }
            guard !number.isEmpty, let value = Double(number) else { return nil }
            rest = rest.dropFirst(number.count)
            guard let unit = units.first(where: { rest.hasPrefix($0.0) && !(rest.hasPrefix("ms") && $0.0 == "m") }) else {
                return nil
            }
            seconds += value * unit.1
            rest = rest.dropFirst(unit.0.count)
        }
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }

    /// A duration the way a config would write it: `500ms`, `30s`, `5m`, `1h30m`.
    public static func format(_ duration: Duration) -> String {
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
    /// Parses a size: `512`, `512KiB`, `8GiB`, `10MB`, `1.5GB`.
    public static func size(_ text: String) -> Int64? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let units: [(String, Double)] = [
            ("KiB", 1024), ("MiB", 1_048_576), ("GiB", 1_073_741_824), ("TiB", 1_099_511_627_776),
            ("KB", 1e3), ("MB", 1e6), ("GB", 1e9), ("TB", 1e12), ("B", 1), ("", 1),
        ]
        for (unit, factor) in units where trimmed.hasSuffix(unit) {
            guard let value = Double(trimmed.dropLast(unit.count).trimmingCharacters(in: .whitespaces)), value >= 0 else { continue }
            return Int64(value * factor)
        }
        return nil
    }

    /// Parses a rate into events a second: `5/s`, `300/m`, `10/h`.
    public static func rate(_ text: String) -> Double? {
        let parts = text.trimmingCharacters(in: .whitespaces).split(separator: "/")
        guard parts.count == 2, let count = Double(parts[0]), count > 0 else { return nil }
        switch parts[1] {
        case "s": return count
        case "m": return count / 60
        case "h": return count / 3600
        default: return nil
        }
    }
}
