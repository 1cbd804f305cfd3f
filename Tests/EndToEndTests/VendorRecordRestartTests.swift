import Foundation
import GRDB
import LookoutCore
import LookoutStore
import ResilientHTTP
import TestSupport
import Testing

/// The vendors' records and the outages followed against their pages outlive a restart: what
/// one run saved, the next shows and goes on counting from.
@Suite("vendor records across a restart")
struct VendorRecordRestartTests {
    @Test func aRestartKeepsTheVendorsRecordAndTheOutagesFollowed() async throws {
        let directory = try makeTemporaryDirectory("vendor-restart")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("lookout.sqlite").path
        // What an earlier run saved: three outages acknowledged, one not.
        var record = VendorWatch.Record()
        record.acknowledged = 3
        record.unacknowledged = 1
        record.lagSecondsSum = 180
        try VendorStore(database: try LookoutDatabase(path: path)).save(VendorWatch.Saved(records: ["127.0.0.1": record]))

        let lookout = try await InProcessLookout.start(
            """
            database: "\(path)"
            defaults: {interval: 1s, timeout: 1s, outage: {failure_threshold: 1}}
            sources: [{name: pay, url: "http://127.0.0.1:\(closedPort())/", vendor_status: {url: "http://127.0.0.1:\(closedPort())", components: [API]}}]
            """)
        let http = CurlTransport()
        let metrics = await http.perform(TransferRequest(url: lookout.base + "/metrics", timeout: .patient)).bodyText
        #expect(metrics.contains(#"lookout_vendor_outages_acknowledged_total{vendor="127.0.0.1"} 3"#), "\(metrics)")
        #expect(metrics.contains(#"lookout_vendor_outages_unacknowledged_total{vendor="127.0.0.1"} 1"#))
        #expect(metrics.contains(#"lookout_vendor_acknowledgement_delay_seconds_sum{vendor="127.0.0.1"} 180"#))
        // The source goes down: its outage is followed, and saved for the next run.
        let reader = try DatabaseQueue(path: path)
        let followed = try await eventually("the outage saved as followed") {
            try await reader.read { db in try String.fetchOne(db, sql: "SELECT source FROM vendor_outages") }
        }
        #expect(followed == "pay")
        try await lookout.stop()
        let saved = try VendorStore(database: try LookoutDatabase(path: path)).load()
        #expect(saved.records["127.0.0.1"] == record)
        #expect(saved.followed["pay"]?.vendor == "127.0.0.1")
    }
}
