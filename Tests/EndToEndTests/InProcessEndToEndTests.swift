import Foundation
import ResilientHTTP
import TestSupport
import Testing

/// The service built by `LookoutApp.build` in this process behaves as `lookout serve` does: it
/// probes, serves its endpoints and stops cleanly.
@Suite("in-process Lookout")
struct InProcessEndToEndTests {
    @Test func probesServesAndStops() async throws {
        let port = closedPort()
        let lookout = try await InProcessLookout.start("sources: [{name: dead, url: \"http://127.0.0.1:\(port)/\", interval: 1s}]\n")
        let http = CurlTransport()
        let metrics = try await eventually("the first probe of dead") {
            let text = await http.perform(TransferRequest(url: lookout.base + "/metrics", timeout: .patient)).bodyText
            return text.contains(#"lookout_probe_success{source="dead"} 0"#) ? text : nil
        }
        #expect(metrics.contains(#"lookout_errors_total{source="dead",category="transient",reason="connection_refused"}"#))
        #expect(await http.perform(TransferRequest(url: lookout.base + "/-/healthy", timeout: .patient)).httpStatus == 200)
        #expect(await http.perform(TransferRequest(url: lookout.base + "/api/v1/status", timeout: .patient)).bodyText.contains(#""dead""#))
        try await lookout.stop()
        #expect(await http.perform(TransferRequest(url: lookout.base + "/-/healthy", timeout: .patient)).httpStatus == nil)
    }
}
