import Foundation
import LookoutCore
import ResilientHTTP
import TestSupport
import Testing

/// The `lookout` binary over real time, beside a vendor page that confirms our outage more than
/// a minute after we saw it (lookout-sim's `/vendor/ID`): the firing notification says the vendor
/// reports nothing yet, the API says when it confirmed, and the resolved notification says how
/// late it was.
@Suite("a vendor that confirms late, in real time")
struct VendorRealTimeEndToEndTests {
    let http = CurlTransport()

    func vendorWords(_ simBase: String, status: String) async throws -> [String] {
        try await simulatorWebhookLog(simBase).compactMap { entry in
            guard let payload = entry["payload"] as? [String: Any], payload["status"] as? String == status,
                let alerts = payload["alerts"] as? [[String: Any]]
            else { return nil }
            return alerts.compactMap { ($0["annotations"] as? [String: String])?["vendor"] }.first
        }
    }

    func source(_ base: String) async throws -> [String: Any] {
        let result = await http.perform(TransferRequest(url: "\(base)/api/v1/sources/pay", timeout: .seconds(5)))
        let document = try #require(try JSONSerialization.jsonObject(with: Data(result.body)) as? [String: Any])
        return try #require(document["source"] as? [String: Any])
    }

    @Test func theVendorConfirmsMoreThanAMinuteAfterUs() async throws {
        let directory = try makeTemporaryDirectory("vendor-real-time")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (sim, simBase) = try await startSimulator()
        defer { sim.send(SIGKILL) }
        let run = UUID().uuidString.prefix(8)
        _ = await http.perform(TransferRequest(url: "\(simBase)/switch/pay-\(run)/on", method: "POST", timeout: .patient))
        let config = try writeLookoutConfig(
            in: directory,
            """
            defaults: {interval: 5s, timeout: 2s}
            sources:
              - name: pay
                url: "\(simBase)/switch/pay-\(run)?code=503"
                vendor_status: {url: "\(simBase)/vendor/\(run)", components: [API], interval: 1m}
            alerts:
              hooks: [{name: chat, type: webhook, url: "\(simBase)/webhook", send_resolved: true}]
            """)
        let (lookout, base) = try await startLookout(config: config)
        defer { lookout.send(SIGKILL) }

        // Told within a minute; the vendor's page is all operational then.
        let firing = try await eventually(deadline: .seconds(90), "the firing notification") {
            try await vendorWords(simBase, status: "firing").first
        }
        #expect(firing.contains("reports nothing yet (all operational)"), "\(firing)")

        // The vendor confirms 65 s after our outage began (the simulator turns its page then).
        let downSince = try #require(Timestamp.parseRFC3339(try await source(base)["down_since"] as? String ?? ""))
        _ = await http.perform(TransferRequest(url: "\(simBase)/switch/vendor-\(run)/on?at=\(downSince + 65_000)", method: "POST", timeout: .patient))

        // The first read of the page after that (at most its 1-minute interval later) ties it to
        // our outage.
        let says = try await eventually(deadline: .seconds(160), "the vendor's confirmation read") { () -> String? in
            let vendor = try await source(base)["vendor"] as? [String: Any]
            guard let text = vendor?["says"] as? String, text.contains("reports it") else { return nil }
            return text
        }
        #expect(says.contains("‘API down’") && says.contains("1m after we saw it"), "\(says)")

        // Mended: the resolved notification says how late the vendor was.
        _ = await http.perform(TransferRequest(url: "\(simBase)/switch/pay-\(run)/off", method: "POST", timeout: .patient))
        let resolved = try await eventually(deadline: .seconds(60), "the resolved notification") {
            try await vendorWords(simBase, status: "resolved").first
        }
        #expect(resolved.contains("reported it 1m after we saw it (‘API down’)"), "\(resolved)")
        // Counted for the vendor at the vendor watch's next turn (every 5 s).
        _ = try await eventually(deadline: .seconds(30), "the acknowledgement counted") { () -> Bool? in
            let metrics = await http.perform(TransferRequest(url: "\(base)/metrics", timeout: .seconds(5))).bodyText
            return metrics.contains(#"lookout_vendor_outages_acknowledged_total{vendor="127.0.0.1"} 1"#) ? true : nil
        }
        #expect(try await lookout.terminate() == 0)
    }
}
