import Foundation
import TestSupport
import Testing

/// `localhost` with one IP version and no fallback, beside blackbox_exporter, on a host whose
/// `/etc/hosts` lists `localhost` for IPv4 only (as this machine's does).
///
/// Everything runs in a network namespace of the test's own: `ip netns exec` bind-mounts
/// `/etc/netns/NAME/hosts` and `resolv.conf` over the system's, so the names are the test's and
/// a question Go's resolver would ask a nameserver goes to 127.0.0.1, where nothing answers —
/// nothing leaves the namespace. The target answers on 127.0.0.1 and ::1 alike (a dual-stack
/// Python server), so only how `localhost` is resolved can tell the two exporters apart.
@Suite("localhost differential")
struct LocalhostDifferentialTests {
    @Test func localhostResolvesAsTheHostsFileSays() async throws {
        let directory = try makeTemporaryDirectory("localhost-diff")
        defer { try? FileManager.default.removeItem(at: directory) }
        let namespace = "lookout-localhost-\(getpid() % 100_000)"
        let etc = URL(fileURLWithPath: "/etc/netns/\(namespace)")
        try FileManager.default.createDirectory(at: etc, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: etc) }
        try "127.0.0.1 localhost\n".write(to: etc.appendingPathComponent("hosts"), atomically: true, encoding: .utf8)
        try "nameserver 127.0.0.1\n".write(to: etc.appendingPathComponent("resolv.conf"), atomically: true, encoding: .utf8)
        try await ip(["netns", "add", namespace])
        defer { _ = try? runToolBlocking("/usr/sbin/ip", ["netns", "delete", namespace]) }
        try await ip(["-n", namespace, "link", "set", "lo", "up"])
        func inside(_ command: String, _ arguments: [String]) throws -> ChildProcess {
            try ChildProcess("/usr/sbin/ip", ["netns", "exec", namespace, command] + arguments)
        }

        // Ports of a namespace nothing else runs in are all free.
        let target = try inside("/usr/bin/python3", ["-m", "http.server", "--bind", "::", "--directory", directory.path, "18080"])
        defer { target.send(SIGKILL) }
        try """
        modules:
          ip6_only: {prober: http, timeout: 3s, http: {preferred_ip_protocol: ip6, ip_protocol_fallback: false}}
          ip4_only: {prober: http, timeout: 3s, http: {preferred_ip_protocol: ip4, ip_protocol_fallback: false}}
          ip6_preferred: {prober: http, timeout: 3s, http: {preferred_ip_protocol: ip6}}
          defaults: {prober: http, timeout: 3s}
        """.write(to: directory.appendingPathComponent("blackbox.yml"), atomically: true, encoding: .utf8)
        let blackbox = try inside(
            "/usr/bin/prometheus-blackbox-exporter", ["--config.file=\(directory.path)/blackbox.yml", "--web.listen-address=127.0.0.1:19115"])
        defer { blackbox.send(SIGKILL) }
        let config = directory.appendingPathComponent("lookout.yml")
        try """
        listen: 127.0.0.1:19116
        database: ":memory:"
        probe_modules_file: blackbox.yml
        probe_allow: ["http://localhost:18080/.*"]
        sources:
          - {name: a, url: "http://127.0.0.1:18080/", interval: 1h}
        """.write(to: config, atomically: true, encoding: .utf8)
        let lookout = try inside(ChildProcess.binDirectory.appendingPathComponent("lookout").path, ["serve", "--config", config.path])
        defer { lookout.send(SIGKILL) }

        /// `/probe` of an exporter, asked from inside the namespace.
        func probe(_ port: Int, _ module: String) async throws -> String {
            try await runTool(
                "/usr/sbin/ip", ["netns", "exec", namespace, "curl", "-s", "http://127.0.0.1:\(port)/probe?target=http://localhost:18080/&module=\(module)"]
            ).output
        }
        for port in [19115, 19116] {
            _ = try await eventually("the exporter on \(port)") { try await probe(port, "ip4_only").contains("probe_success 1") ? true : nil }
        }
        for (module, success, version) in [("ip6_only", 0.0, 0.0), ("ip4_only", 1, 4), ("ip6_preferred", 1, 4), ("defaults", 1, 4)] {
            let theirs = try await probe(19115, module)
            let ours = try await probe(19116, module)
            #expect(metricValue(theirs, "probe_success") == success, "\(module): blackbox_exporter answered \(theirs)")
            #expect(metricValue(ours, "probe_success") == success, "\(module): Lookout answered \(ours)")
            #expect(metricValue(ours, "probe_ip_protocol") == metricValue(theirs, "probe_ip_protocol"), "\(module): \(theirs) against \(ours)")
            #expect(metricValue(theirs, "probe_ip_protocol") == version, "\(module): \(theirs)")
        }
    }
}
