import Foundation
import Logging
import ResilientHTTP

/// Formats log lines as logfmt (`ts=… level=info msg="…" key=value`) or as JSON lines, for a
/// `LogWriter` to write to stderr.
package struct LogfmtLogHandler: LogHandler {
    package enum Format: String, Sendable {
        case logfmt, json
    }

    package var metadata: Logger.Metadata = [:]
    package var logLevel: Logger.Level = .info
    package var metadataProvider: Logger.MetadataProvider?
    let label: String
    let writer: LogWriter

    package init(label: String, writer: LogWriter) {
        self.label = label
        self.writer = writer
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    package func log(event: LogEvent) {
        var fields: [(String, String)] = [
            ("ts", LogfmtLogHandler.timestamp()), ("level", event.level.rawValue), ("msg", event.message.description),
        ]
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { $1 } }
        if let extra = event.metadata { merged.merge(extra) { $1 } }
        for key in merged.keys.sorted() { fields.append((key, "\(merged[key]!)")) }
        writer.write(LogfmtLogHandler.line(fields, format: writer.format))
    }

    /// Now, as log lines give it: `2026-11-25T02:27:26Z` (Foundation's ISO 8601 style reaches
    /// ICU's time zones and calendars for the first line).
    package static func timestamp() -> String {
        Timestamp.rfc3339Seconds(Timestamp.nowMs())
    }

    /// One line (without its newline) of `fields` in their order.
    package static func line(_ fields: [(String, String)], format: Format) -> String {
        // Whatever a value carries (an upstream's text, a path), no control character reaches the log.
        let fields = fields.map { ($0.0, PrintableText.escape($0.1)) }
        switch format {
        case .logfmt:
            return fields.map { "\($0.0)=\(LogfmtLogHandler.logfmtValue($0.1))" }.joined(separator: " ")
        case .json:
            return "{" + fields.map { "\(LogfmtLogHandler.jsonString($0.0)):\(LogfmtLogHandler.jsonString($0.1))" }.joined(separator: ",") + "}"
        }
    }

    /// A logfmt value: as is when plain, else a quoted JSON string with control characters escaped.
    package static func logfmtValue(_ value: String) -> String {
        // Quoted (and so escaped) also for any control character, so that no byte in a log value
        // can move a terminal's cursor or colour what follows.
        let needsQuotes =
            value.isEmpty
            || value.unicodeScalars.contains {
                $0 == " " || $0 == "=" || $0 == "\"" || $0 == "\\" || $0.value < 0x20 || $0.value == 0x7F
            }
        guard needsQuotes else { return value }
        return jsonString(value)
    }

    /// A JSON string literal with quotes, backslashes and control characters escaped.
    package static func jsonString(_ value: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(value.utf8.count + 2)
        JSONText.writeString(value, to: &out)
        return String(decoding: out, as: UTF8.self)
    }
}
