// LookoutCore: config, sources, probing, scheduling and health bookkeeping — plain Swift,
// no C and no SQL.

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

extension Duration {
    /// The whole milliseconds in this duration.
    public var totalMilliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }

    /// The duration in seconds, as a Double.
    public var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
