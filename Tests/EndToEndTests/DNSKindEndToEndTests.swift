import Foundation
import ResilientHTTP
import TestSupport
import Testing

/// `kind: dns` against lookout-sim's DNS server on loopback (the zone `lookout.test.`): a name
/// with records is up over UDP and TCP, and each way a DNS server can fail is named as the
/// server put it.
@Suite("dns sources")
struct DNSKindEndToEndTests {
    @Test func asksTheServerAndNamesEachFailure() async throws {
        let (sim, _) = try await startSimulator(["--listen", "127.0.0.1:0", "--dns-listen", "127.0.0.1:0"])
        let port = try await sim.waitFor(#"DNS for lookout\.test\. on 127\.0\.0\.1:(\d+)"#)
        let server = "dns://127.0.0.1:\(port)"
        let lookout = try await InProcessLookout.start(
            """
            defaults: {interval: 1s, timeout: 1s}
            sources:
              - {name: dns-ok, kind: dns, url: "\(server)/ok.lookout.test"}
              - {name: dns-tcp, kind: dns, url: "\(server)/two.lookout.test?transport=tcp"}
              - {name: dns-mx, kind: dns, url: "\(server)/mail.lookout.test?type=MX"}
              - {name: dns-nx, kind: dns, url: "\(server)/missing.lookout.test"}
              - {name: dns-servfail, kind: dns, url: "\(server)/servfail.lookout.test"}
              - {name: dns-nodata, kind: dns, url: "\(server)/nodata.lookout.test"}
              - {name: dns-silent, kind: dns, url: "\(server)/drop.lookout.test"}
            """)
        let http = CurlTransport()
        let names = ["dns-ok", "dns-tcp", "dns-mx", "dns-nx", "dns-servfail", "dns-nodata", "dns-silent"]
        let metrics = try await eventually("a probe of every dns source") {
            let text = await http.perform(TransferRequest(url: lookout.base + "/metrics")).bodyText
            return names.allSatisfy { text.contains("lookout_probe_success{source=\"\($0)\"}") } ? text : nil
        }
        for name in ["dns-ok", "dns-tcp", "dns-mx"] { #expect(metrics.contains("lookout_probe_success{source=\"\(name)\"} 1"), "\(name)") }
        for (name, category, reason) in [
            ("dns-nx", "invalid_response", "dns_nxdomain"), ("dns-servfail", "server_error", "dns_servfail"),
            ("dns-nodata", "invalid_response", "dns_no_answer"), ("dns-silent", "timeout", "dns_timeout"),
        ] {
            #expect(metrics.contains("lookout_errors_total{source=\"\(name)\",category=\"\(category)\",reason=\"\(reason)\"}"), "\(name)")
        }
        // The answer's time is the latency shown; a query nobody answered has none.
        #expect(metrics.contains(#"lookout_probe_latency_seconds_count{source="dns-ok"}"#))
        let source = await http.perform(TransferRequest(url: lookout.base + "/api/v1/sources/dns-nx")).bodyText
        #expect(source.contains("missing.lookout.test does not exist (NXDOMAIN)"))
        try await lookout.stop()
        #expect(try await sim.terminate() == 0)
    }
}
