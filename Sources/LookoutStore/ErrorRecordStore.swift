import GRDB

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
            ).map { row in
                (row["id"], ErrorRecord(
                    tsMs: row["ts_ms"], source: row["source"], category: row["category"], reason: row["reason"],
                    httpStatus: row["http_status"], curlCode: (row["curl_code"] as Int?).map { Int32($0) }, message: row["message"],
                    serverMessage: row["server_message"], attempt: row["attempt"], wasRetried: row["was_retried"],
                    retrySucceeded: row["retry_succeeded"]))
            }
        }
    }
}
