import GRDB
import LookoutCore

/// Pages through a source's error records, newest first.
package struct ErrorRecordStore: Sendable {
    let database: LookoutDatabase

    package init(database: LookoutDatabase) {
        self.database = database
    }

    /// Records of `source` at or after `sinceMs`, with ids below `beforeID` (for the next page).
    package func page(source: String, sinceMs: Int64, beforeID: Int64?, limit: Int) throws -> [(id: Int64, record: ErrorRecord)] {
        try database.writer.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT * FROM error_records WHERE source = ? AND ts_ms >= ? AND id < ?
                    ORDER BY id DESC LIMIT ?
                    """,
                arguments: [source, sinceMs, beforeID ?? Int64.max, limit]
            ).compactMap { row in
                // Read as a damaged file may hold it: a row with a value of the wrong type is
                // left out, and a number out of range is dropped.
                guard let id = row.integer("id"), let tsMs = row.integer("ts_ms"), let source = row.text("source"), let category = row.text("category"),
                    let reason = row.text("reason"), let message = row.text("message")
                else { return nil }
                return (
                    id,
                    ErrorRecord(
                        tsMs: min(max(tsMs, Timestamp.writable.lowerBound), Timestamp.writable.upperBound), source: source, category: category,
                        reason: reason, httpStatus: row.integer("http_status").flatMap { (100...999).contains($0) ? Int($0) : nil },
                        curlCode: row.integer("curl_code").flatMap { Int32(exactly: $0) }, message: message, serverMessage: row.text("server_message"),
                        attempt: Int(min(max(row.integer("attempt") ?? 1, 0), 1_000_000)), wasRetried: (row.integer("was_retried") ?? 0) != 0,
                        retrySucceeded: (row.integer("retry_succeeded") ?? 0) != 0)
                )
            }
        }
    }
}
