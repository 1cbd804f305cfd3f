import GRDB
import LookoutCore

/// The `vendor_records` and `vendor_outages` tables: what `VendorWatch` must not lose across a
/// restart. Small (a row per vendor and per source followed), so each save replaces them.
package struct VendorStore: Sendable {
    let database: LookoutDatabase

    package init(database: LookoutDatabase) {
        self.database = database
    }

    package func save(_ saved: VendorWatch.Saved) throws {
        try database.writer.write { db in
            try db.execute(sql: "DELETE FROM vendor_records")
            for (vendor, record) in saved.records {
                try db.execute(
                    sql: "INSERT INTO vendor_records (vendor, acknowledged, unacknowledged, lag_seconds_sum) VALUES (?, ?, ?, ?)",
                    arguments: [vendor, record.acknowledged, record.unacknowledged, record.lagSecondsSum])
            }
            try db.execute(sql: "DELETE FROM vendor_outages")
            for (source, followed) in saved.followed {
                try db.execute(
                    sql: "INSERT INTO vendor_outages (source, vendor, down_since_ms, acknowledged_at_ms, incident) VALUES (?, ?, ?, ?, ?)",
                    arguments: [source, followed.vendor, followed.downSinceMs, followed.acknowledgedAtMs, followed.incident])
                // The SLA evidence keeps the vendor's word on the outage.
                if let acknowledged = followed.acknowledgedAtMs {
                    try SLAStore.acknowledge(source: source, downSinceMs: followed.downSinceMs, atMs: acknowledged, incident: followed.incident, db)
                }
            }
        }
    }

    /// What was saved. Rows are read as a damaged file may hold them: one with a value of the
    /// wrong type is left out, counts are kept within a billion and a lag within their worth
    /// of years, so no sum on them can overflow or turn infinite.
    package func load() throws -> VendorWatch.Saved {
        try database.writer.read { db in
            var saved = VendorWatch.Saved()
            for row in try Row.fetchAll(db, sql: "SELECT * FROM vendor_records") {
                guard let vendor = row.text("vendor"), let acknowledged = row.boundedCount("acknowledged"),
                    let unacknowledged = row.boundedCount("unacknowledged"), let lag = row.real("lag_seconds_sum")
                else { continue }
                var record = VendorWatch.Record()
                record.acknowledged = acknowledged
                record.unacknowledged = unacknowledged
                record.lagSecondsSum = min(max(lag, 0), Double(acknowledged) * 366 * 86_400)
                saved.records[vendor] = record
            }
            for row in try Row.fetchAll(db, sql: "SELECT * FROM vendor_outages") {
                guard let source = row.text("source"), let vendor = row.text("vendor"), let since = row.integer("down_since_ms"),
                    Timestamp.writable.contains(since)
                else { continue }
                saved.followed[source] = VendorWatch.Followed(
                    vendor: vendor, downSinceMs: since,
                    acknowledgedAtMs: row.integer("acknowledged_at_ms").flatMap { Timestamp.writable.contains($0) ? $0 : nil },
                    incident: row.text("incident"))
            }
            return saved
        }
    }
}
