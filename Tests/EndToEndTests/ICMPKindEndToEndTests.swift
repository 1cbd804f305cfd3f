import Foundation
import ResilientHTTP
import TestSupport
import Testing

/// `kind: icmp`: an echo reply is up, a host that does not answer is a timeout, and a host
/// without a route says so. The silent and the unroutable hosts are made in network namespaces
/// of the test's own (nothing leaves them), and removed after.
@Suite("icmp sources")
struct ICMPKindEndToEndTests {
    @Test func aLoopbackHostAnswers() async throws {
        let lookout = try await InProcessLookout.start(
            """
            defaults: {interval: 1s, timeout: 2s}
            sources:
              - {name: ping-v4, kind: icmp, url: "icmp://127.0.0.1"}
              - {name: ping-name, kind: icmp, url: "icmp://localhost"}
            """)
        let metrics = try await lookout.metricsOnceProbed(["ping-v4", "ping-name"])
        #expect(metrics.contains(#"lookout_probe_success{source="ping-v4"} 1"#))
        #expect(metrics.contains(#"lookout_probe_success{source="ping-name"} 1"#))
        #expect(metrics.contains(#"lookout_probe_latency_seconds_count{source="ping-v4"}"#))
        try await lookout.stop()
    }

    @Test func aSilentHostTimesOutAndAnUnroutableOneSaysSo() async throws {
        let tag = getpid() % 100_000
        let near = "lookout-icmp-near-\(tag)"
        let far = "lookout-icmp-far-\(tag)"
        let link = "lki\(tag)"
        for namespace in [near, far] {
            try await ip(["netns", "add", namespace])
            try await ip(["-n", namespace, "link", "set", "lo", "up"])
        }
        defer { for namespace in [near, far] { _ = try? runToolBlocking("/usr/sbin/ip", ["netns", "delete", namespace]) } }
        try await ip(["link", "add", link, "netns", near, "type", "veth", "peer", "name", link + "p", "netns", far])
        try await ip(["-n", near, "addr", "add", "10.233.0.1/24", "dev", link])
        try await ip(["-n", near, "link", "set", link, "up"])
        try await ip(["-n", far, "addr", "add", "10.233.0.2/24", "dev", link + "p"])
        try await ip(["-n", far, "link", "set", link + "p", "up"])
        let lookout = ChildProcess.binDirectory.appendingPathComponent("lookout").path

        func probe(_ url: String) async throws -> String {
            try await runTool("/usr/sbin/ip", ["netns", "exec", near, lookout, "probe", "--kind", "icmp", url, "--timeout", "1s"]).output
        }
        #expect(try await probe("icmp://10.233.0.2").hasPrefix("OK  icmp://10.233.0.2  answered"))
        // The far host stops answering echo requests.
        _ = try await runTool("/usr/sbin/ip", ["netns", "exec", far, "sysctl", "-w", "net.ipv4.icmp_echo_ignore_all=1"])
        let silent = try await probe("icmp://10.233.0.2")
        #expect(silent.hasPrefix("FAIL") && silent.contains("icmp_timeout"), "\(silent)")
        // No route at all: neither namespace has a default one.
        let unroutable = try await probe("icmp://10.99.0.1")
        #expect(unroutable.hasPrefix("FAIL") && unroutable.contains("network_unreachable"), "\(unroutable)")
    }
}
