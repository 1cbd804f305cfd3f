import Foundation
import ResilientHTTP
import TestSupport
import Testing

/// Two locations probe one source, each over its own network path: an upstream host in a network
/// namespace, reached from each location through its own veth pair. Prometheus evaluates the
/// deploy kit's location rules (their `for:` shortened to a second): one location losing the
/// source raises only the info alert, both losing it raise one page.
@Suite("locations end to end")
struct LocationsEndToEndTests {
    let http = CurlTransport()

    @Test func oneLocationLosingASourcePagesNobodyAndBothPageOnce() async throws {
        let directory = try makeTemporaryDirectory("locations")
        defer { try? FileManager.default.removeItem(at: directory) }
        let tag = getpid() % 100_000
        let namespace = "lookout-up-\(tag)"
        try await ip(["netns", "add", namespace])
        defer { _ = try? runToolBlocking("/usr/sbin/ip", ["netns", "delete", namespace]) }  // takes the veth pairs with it
        try await ip(["-n", namespace, "link", "set", "lo", "up"])
        // With a location's link down, its probes must fail here, not follow the default route
        // off the machine: the /30s below are more specific while their links are up.
        try await ip(["route", "replace", "unreachable", "10.231.0.0/16"])
        defer { _ = try? runToolBlocking("/usr/sbin/ip", ["route", "delete", "unreachable", "10.231.0.0/16"]) }
        // One /30 per location: 10.231.1.1 ↔ 10.231.1.2 (eu), 10.231.2.1 ↔ 10.231.2.2 (us).
        let links = ["eu": "lke\(tag)", "us": "lku\(tag)"]
        for (index, location) in ["eu", "us"].enumerated() {
            let link = links[location]!
            try await ip(["link", "add", link, "type", "veth", "peer", "name", link + "p"])
            try await ip(["link", "set", link + "p", "netns", namespace])
            try await ip(["addr", "add", "10.231.\(index + 1).1/30", "dev", link])
            try await ip(["link", "set", link, "up"])
            try await ip(["-n", namespace, "addr", "add", "10.231.\(index + 1).2/30", "dev", link + "p"])
            try await ip(["-n", namespace, "link", "set", link + "p", "up"])
        }
        let upstream = try ChildProcess(
            "/usr/sbin/ip",
            [
                "netns", "exec", namespace, ChildProcess.binDirectory.appendingPathComponent("lookout-sim").path, "--listen", "0.0.0.0:0",
            ])
        let port = try await upstream.waitFor(#"listening on http://[0-9.]+:(\d+)/"#)

        var lookouts: [ChildProcess] = []
        var targets: [String] = []
        for (index, location) in ["eu", "us"].enumerated() {
            let config = directory.appendingPathComponent("\(location).yml")
            try """
            listen: 127.0.0.1:0
            database: ":memory:"
            location: \(location)
            defaults: {interval: 1s, timeout: 1s, retry: {network_unreachable: {max_attempts: 1}, timeout: {max_attempts: 1}}}
            sources:
              - {name: checkout, url: "http://10.231.\(index + 1).2:\(port)/ok"}
            """.write(to: config, atomically: true, encoding: .utf8)
            let (lookout, base) = try await startLookout(config: config)
            lookouts.append(lookout)
            targets.append(String(base.dropFirst("http://".count)))
        }
        // The kit's rules as shipped, but for `for:`: a second instead of minutes.
        let shipped = try String(contentsOf: OperationsKitTests.root.appendingPathComponent("deploy/lookout-location-rules.yml"), encoding: .utf8)
        let rules = directory.appendingPathComponent("rules.yml")
        try shipped.replacingOccurrences(of: #"for: \d+m"#, with: "for: 1s", options: .regularExpression).write(to: rules, atomically: true, encoding: .utf8)
        let prometheus = try TestPrometheus(scraping: targets, in: directory, rules: [rules])
        func firing(_ alert: String) async -> [String] {
            let found = await prometheus.query(#"ALERTS{alertname="\#(alert)", alertstate="firing"}"#) ?? []
            return found.compactMap { ($0["metric"] as? [String: String])?["source"] }
        }
        // Both locations see the source up.
        _ = try await eventually("both locations' error rates in Prometheus") { () -> Bool? in
            let rates = await prometheus.query(#"lookout_error_ratio{source="checkout", window="5m"} == 0"#) ?? []
            return rates.count == 2 ? true : nil
        }

        // eu loses its path: the info alert, no page.
        try await ip(["link", "set", links["eu"]!, "down"])
        _ = try await eventually(deadline: .seconds(120), "the one-location alert") { () -> Bool? in
            await firing("SourceDownFromOneLocation") == ["checkout"] ? true : nil
        }
        #expect(await firing("SourceDownFromLocations").isEmpty)
        let usRate = await prometheus.query(#"lookout_error_ratio{source="checkout", window="5m", location="us"}"#)
        #expect((usRate?.first?["value"] as? [Any])?.last as? String == "0", "us still sees it up")

        // us loses it too: one page, and the one-location alert is gone.
        try await ip(["link", "set", links["us"]!, "down"])
        let paged = try await eventually(deadline: .seconds(120), "the page") { () -> [String]? in
            let sources = await firing("SourceDownFromLocations")
            return sources.isEmpty ? nil : sources
        }
        #expect(paged == ["checkout"])
        _ = try await eventually("the one-location alert to resolve") { () -> Bool? in
            await firing("SourceDownFromOneLocation").isEmpty ? true : nil
        }

        _ = try await prometheus.process.terminate()
        for lookout in lookouts { #expect(try await lookout.terminate() == 0) }
        _ = try await upstream.terminate()
    }
}
