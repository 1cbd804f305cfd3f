import Foundation
import Logging
import ResilientHTTP

/// Writes log lines to stderr as logfmt (`ts=… level=info msg="…" key=value`) or as JSON lines.
package struct LogfmtLogHandler: LogHandler {
    package enum Format: String, Sendable {
        case logfmt, json
    }

    package var metadata: Logger.Metadata = [:]
    package var logLevel: Logger.Level = .info
    package var metadataProvider: Logger.MetadataProvider?
    let label: String
    let format: Format

    package init(label: String, format: Format) {
        self.label = label
        self.format = format
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    package func log(event: LogEvent) {
        var fields: [(String, String)] = [
            ("ts", Date().formatted(.iso8601)), ("level", event.level.rawValue), ("msg", event.message.description),
        ]
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { $1 } }
        if let extra = event.metadata { merged.merge(extra) { $1 } }
        for key in merged.keys.sorted() { fields.append((key, "\(merged[key]!)")) }
        // Whatever a value carries (an upstream's text, a path), no control character reaches the log.
        for index in fields.indices { fields[index].1 = PrintableText.escape(fields[index].1) }
        let line: String
        switch format {
        case .logfmt:
            line = fields.map { "\($0.0)=\(LogfmtLogHandler.logfmtValue($0.1))" }.joined(separator: " ")
        case .json:
            line = "{" + fields.map { "\(LogfmtLogHandler.jsonString($0.0)):\(LogfmtLogHandler.jsonString($0.1))" }.joined(separator: ",") + "}"
        }
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }

    /// A logfmt value: as is when plain, else a quoted JSON string with control characters escaped.
    package static func logfmtValue(_ value: String) -> String {
        // Quoted (and so escaped) also for any control character, so that no byte in a log value
        // can move a terminal's cursor or colour what follows.
        let needsQuotes = value.isEmpty || value.unicodeScalars.contains {
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
