import GRDB
import LookoutCore
import LookoutStore
import Testing

/// What the vendor watch keeps across a restart: each vendor's record of our outages, and the
/// outages being followed with what their vendors said so far.
@Suite("vendor records")
struct VendorStoreTests {
    @Test func aSaveIsReadBackWhole() throws {
        let store = VendorStore(database: try LookoutDatabase(path: ":memory:"))
        var record = VendorWatch.Record()
        record.acknowledged = 3
        record.unacknowledged = 1
        record.lagSecondsSum = 540
        let saved = VendorWatch.Saved(
            records: ["status.example.com": record],
            followed: [
                "pay": VendorWatch.Followed(vendor: "status.example.com", downSinceMs: 1_000, acknowledgedAtMs: 61_000, incident: "API down"),
                "feed": VendorWatch.Followed(vendor: "status.other.com", downSinceMs: 2_000),
            ])
        try store.save(saved)
        #expect(try store.load() == saved)
        // A later save replaces it: an outage no longer followed is gone.
        try store.save(VendorWatch.Saved(records: saved.records))
        #expect(try store.load() == VendorWatch.Saved(records: saved.records))
    }

    @Test func damagedRowsAreLeftOutOrBounded() throws {
        let database = try LookoutDatabase(path: ":memory:")
        try database.writer.write { db in
            try db.execute(sql: "INSERT INTO vendor_records VALUES ('huge', \(Int64.max), -5, 1e308)")
            try db.execute(sql: "INSERT INTO vendor_records VALUES ('words', 'many', 0, 0)")
            try db.execute(sql: "INSERT INTO vendor_records VALUES ('nan', 1, 0, 'x')")
            try db.execute(sql: "INSERT INTO vendor_outages VALUES ('late', 'v', \(Int64.max), NULL, NULL)")
            try db.execute(sql: "INSERT INTO vendor_outages VALUES ('ok', 'v', 5, \(Int64.min), 42)")
        }
        let saved = try VendorStore(database: database).load()
        #expect(Set(saved.records.keys) == ["huge"])
        let huge = try #require(saved.records["huge"])
        #expect(huge.acknowledged == 1_000_000_000 && huge.unacknowledged == 0)
        #expect(huge.lagSecondsSum.isFinite && huge.lagSecondsSum <= Double(huge.acknowledged) * 366 * 86_400)
        #expect(Set(saved.followed.keys) == ["ok"])
        // A time outside years 0–9999 is dropped; the number stored as an incident is text by the
        // column's affinity.
        #expect(saved.followed["ok"]?.acknowledgedAtMs == nil && saved.followed["ok"]?.incident == "42")
    }

    /// A restored outage that the vendor acknowledged before the restart counts as
    /// acknowledged when it ends after it; only what changed asks to be saved again.
    @Test func aRestoredOutageEndsAsItWouldHave() throws {
        let watch = VendorWatch()
        watch.configure([(source: "pay", config: VendorStatusConfig(url: "http://127.0.0.1:1", components: ["API"]))])
        watch.restore(
            VendorWatch.Saved(followed: ["pay": VendorWatch.Followed(vendor: "127.0.0.1", downSinceMs: 1_000, acknowledgedAtMs: 121_000, incident: "API down")])
        )
        #expect(watch.unsaved() == nil)
        let calendar = MaintenanceCalendar()
        watch.observe(down: ["pay": 1_000], maintenance: calendar, nowMs: 200_000)
        #expect(watch.unsaved() == nil)  // nothing new
        watch.observe(down: [:], maintenance: calendar, nowMs: 260_000)
        let record = try #require(watch.records["127.0.0.1"])
        #expect(record.acknowledged == 1 && record.lagSecondsSum == 120)
        let changed = try #require(watch.unsaved())
        #expect(changed.followed.isEmpty && changed.records["127.0.0.1"] == record)
        #expect(watch.unsaved() == nil)
        watch.saveFailed()
        #expect(watch.unsaved() == changed)
    }
}
