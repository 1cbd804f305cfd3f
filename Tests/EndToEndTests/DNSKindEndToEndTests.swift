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
        // A dns source takes a dns module: what passes (NXDOMAIN expected; records held to a pattern).
        let modules = FileManager.default.temporaryDirectory.appendingPathComponent("dns-modules-\(UUID().uuidString).yml")
        try """
        modules:
          nx: {prober: dns, dns: {query_name: x, valid_rcodes: [NXDOMAIN]}}
          ten: {prober: dns, dns: {query_name: x, validate_answer_rrs: {fail_if_none_matches_regexp: ["10\\\\.9\\\\.9\\\\.9"]}}}
        """.write(to: modules, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: modules) }
        let lookout = try await InProcessLookout.start(
            """
            probe_modules_file: \(modules.path)
            defaults: {interval: 1s, timeout: 1s}
            sources:
              - {name: dns-nx-expected, kind: dns, url: "\(server)/missing.lookout.test", module: nx}
              - {name: dns-ok-not-nx, kind: dns, url: "\(server)/ok.lookout.test", module: nx}
              - {name: dns-ok-not-ten, kind: dns, url: "\(server)/ok.lookout.test", module: ten}
              - {name: dns-ok, kind: dns, url: "\(server)/ok.lookout.test"}
              - {name: dns-tcp, kind: dns, url: "\(server)/two.lookout.test?transport=tcp"}
              - {name: dns-mx, kind: dns, url: "\(server)/mail.lookout.test?type=MX"}
              - {name: dns-nx, kind: dns, url: "\(server)/missing.lookout.test"}
              - {name: dns-servfail, kind: dns, url: "\(server)/servfail.lookout.test"}
              - {name: dns-nodata, kind: dns, url: "\(server)/nodata.lookout.test"}
              - {name: dns-silent, kind: dns, url: "\(server)/drop.lookout.test"}
            """)
        let http = CurlTransport()
        let names = [
            "dns-ok", "dns-tcp", "dns-mx", "dns-nx", "dns-servfail", "dns-nodata", "dns-silent", "dns-nx-expected", "dns-ok-not-nx", "dns-ok-not-ten",
        ]
        let metrics = try await lookout.metricsOnceProbed(names)
        #expect(metrics.contains(#"lookout_probe_success{source="dns-nx-expected"} 1"#))
        #expect(metrics.contains(#"lookout_errors_total{source="dns-ok-not-nx",category="invalid_response",reason="dns_rcode"}"#))
        #expect(metrics.contains(#"lookout_errors_total{source="dns-ok-not-ten",category="invalid_response",reason="dns_record_mismatch"}"#))
        for name in ["dns-ok", "dns-tcp", "dns-mx"] { #expect(metrics.contains("lookout_probe_success{source=\"\(name)\"} 1"), "\(name)") }
        for (name, category, reason) in [
            ("dns-nx", "invalid_response", "dns_nxdomain"), ("dns-servfail", "server_error", "dns_servfail"),
            ("dns-nodata", "invalid_response", "dns_no_answer"), ("dns-silent", "timeout", "dns_timeout"),
        ] {
            #expect(metrics.contains("lookout_errors_total{source=\"\(name)\",category=\"\(category)\",reason=\"\(reason)\"}"), "\(name)")
        }
        // The answer's time is the latency shown; a query nobody answered has none.
        #expect(metrics.contains(#"lookout_probe_latency_seconds_count{source="dns-ok"}"#))
        let source = await http.perform(TransferRequest(url: lookout.base + "/api/v1/sources/dns-nx", timeout: .patient)).bodyText
        #expect(source.contains("missing.lookout.test does not exist (NXDOMAIN)"))
        try await lookout.stop()
        #expect(try await sim.terminate() == 0)
    }

    /// Row 2 of the third attack: an answer to another ID is forged or stray and never taken
    /// (as blackbox_exporter's client refuses it), over UDP and over TCP; a TCP stream of zeros is
    /// no answer; a truncated answer over UDP is asked again over TCP, and named when that fails.
    @Test(arguments: [
        ("forged.test", "", "invalid_response", "dns_malformed"), ("forged.test", "?transport=tcp", "invalid_response", "dns_malformed"),
        ("zeros.test", "?transport=tcp", "invalid_response", "dns_malformed"), ("zeros.test", "", "invalid_response", "dns_malformed"),
        ("truncated-only.test", "", "invalid_response", "dns_truncated"), ("truncated.test", "", "", ""), ("other.test", "", "", ""),
    ])
    func refusesForgedAndBrokenAnswers(_ name: String, _ options: String, _ category: String, _ reason: String) async throws {
        let (server, port) = try await startHostileDNSServer()
        defer { server.send(SIGKILL) }
        let binary = ChildProcess.binDirectory.appendingPathComponent("lookout").path
        let probed = try await runTool(binary, ["probe", "dns://127.0.0.1:\(port)/\(name)\(options)", "--kind", "dns", "--json", "--timeout", "5s"])
        let json = try #require(try JSONSerialization.jsonObject(with: Data(probed.output.utf8)) as? [String: Any], "\(probed.output)")
        if reason.isEmpty {
            #expect(probed.status == 0, "\(probed.output)")
            #expect(json["ok"] as? Bool == true, "\(probed.output)")
        } else {
            #expect(probed.status == 1, "\(probed.output)")
            #expect(json["category"] as? String == category && json["reason"] as? String == reason, "\(probed.output)")
        }
    }

    /// DNS over TLS in front of the simulator, with a trusted and an untrusted certificate; and
    /// servers that answer badly: TLS that sends bytes that are no DNS message, one that promises
    /// more than it sends, and a UDP server that answers garbage. Each is a failure with its
    /// reason, and nothing crashes.
    @Test func asksOverTLSAndSurvivesServersThatAnswerBadly() async throws {
        let directory = try makeTemporaryDirectory("dns-tls")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (cert, key) = try makeSelfSignedCertificate(in: directory)
        let (sim, _) = try await startSimulator(["--listen", "127.0.0.1:0", "--dns-listen", "127.0.0.1:0"])
        let upstream = "127.0.0.1:" + (try await sim.waitFor(#"DNS for lookout\.test\. on 127\.0\.0\.1:(\d+)"#))
        var relays: [ChildProcess] = []
        defer { for relay in relays { relay.send(SIGKILL) } }
        var ports: [String: Int] = [:]
        for mode in ["relay", "garbage", "short"] {
            let (relay, port) = try await startDNSOverTLSRelay(cert: cert, key: key, upstream: upstream, mode: mode)
            relays.append(relay)
            ports[mode] = port
        }
        // A UDP "DNS server" that answers every question with five bytes of 0xff.
        let (garbage, address) = boundLoopbackSocket(type: Int32(SOCK_DGRAM.rawValue))
        defer { close(garbage) }
        let garbagePort = UInt16(bigEndian: address.sin_port)
        Thread.detachNewThread {
            var buffer = [UInt8](repeating: 0, count: 512)
            var peer = sockaddr_storage()
            var peerLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
            while true {
                let count = withUnsafeMutablePointer(to: &peer) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { recvfrom(garbage, &buffer, buffer.count, 0, $0, &peerLength) }
                }
                guard count > 0 else { return }
                let junk = [UInt8](repeating: 0xFF, count: 5)
                _ = withUnsafePointer(to: &peer) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(garbage, junk, junk.count, 0, $0, peerLength) }
                }
            }
        }
        let lookout = try await InProcessLookout.start(
            """
            defaults: {interval: 1s, timeout: 2s}
            sources:
              - {name: dot-ok, kind: dns, url: "dns://127.0.0.1:\(ports["relay"]!)/ok.lookout.test?transport=tls", ca_file: "\(cert)"}
              - {name: dot-untrusted, kind: dns, url: "dns://127.0.0.1:\(ports["relay"]!)/ok.lookout.test?transport=tls"}
              - {name: dot-garbage, kind: dns, url: "dns://127.0.0.1:\(ports["garbage"]!)/ok.lookout.test?transport=tls", ca_file: "\(cert)"}
              - {name: dot-short, kind: dns, url: "dns://127.0.0.1:\(ports["short"]!)/ok.lookout.test?transport=tls", ca_file: "\(cert)"}
              - {name: udp-garbage, kind: dns, url: "dns://127.0.0.1:\(garbagePort)/ok.lookout.test"}
            """)
        let http = CurlTransport()
        let names = ["dot-ok", "dot-untrusted", "dot-garbage", "dot-short", "udp-garbage"]
        let metrics = try await lookout.metricsOnceProbed(names)
        #expect(metrics.contains(#"lookout_probe_success{source="dot-ok"} 1"#))
        #expect(metrics.contains(#"lookout_errors_total{source="dot-untrusted",category="tls_error",reason="cert_invalid"}"#))
        for name in ["dot-garbage", "dot-short", "udp-garbage"] {
            #expect(metrics.contains("lookout_probe_success{source=\"\(name)\"} 0"), "\(name)")
            #expect(metrics.contains("lookout_errors_total{source=\"\(name)\",category=\"invalid_response\",reason=\"dns_malformed\"}"), "\(name)")
        }
        let short = await http.perform(TransferRequest(url: lookout.base + "/api/v1/sources/dot-short", timeout: .patient)).bodyText
        #expect(short.contains("closed the connection before a whole answer"), "\(short)")
        let junk = await http.perform(TransferRequest(url: lookout.base + "/api/v1/sources/dot-garbage", timeout: .patient)).bodyText
        #expect(junk.contains("is not a DNS message"), "\(junk)")
        try await lookout.stop()
        #expect(try await sim.terminate() == 0)
    }

    /// A resolver people run, Debian's dnsmasq: answers over UDP and TCP are up, its NXDOMAIN and
    /// REFUSED are named as such.
    @Test func asksADebianResolver() async throws {
        let directory = try makeTemporaryDirectory("dnsmasq")
        defer { try? FileManager.default.removeItem(at: directory) }
        // An upstream that takes questions and never answers: dnsmasq forwards slow.test to it.
        let silent = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(silent) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(silent, $0, length) == 0 && getsockname(silent, $0, &length) == 0 }
        }
        #expect(bound)
        let dnsmasq = try await Dnsmasq.start(in: directory, silentUpstream: UInt16(bigEndian: address.sin_port))
        defer { dnsmasq.stop() }
        let resolver = dnsmasq.address
        let authority = try await Dnsmasq.start(in: directory, authoritative: true)
        defer { authority.stop() }
        let modules = directory.appendingPathComponent("modules.yml")
        try "modules:\n  soa: {prober: dns, dns: {query_name: lookout.test, query_type: SOA}}\n".write(to: modules, atomically: true, encoding: .utf8)
        let lookout = try await InProcessLookout.start(
            """
            probe_modules_file: \(modules.path)
            defaults: {interval: 1s, timeout: 2s}
            sources:
              - {name: resolver-a, kind: dns, url: "dns://\(resolver)/api.lookout.test"}
              - {name: resolver-soa, kind: dns, url: "dns://\(authority.address)/lookout.test?type=SOA"}
              - {name: resolver-mx, kind: dns, url: "dns://\(resolver)/lookout.test?type=MX&transport=tcp"}
              - {name: resolver-nx, kind: dns, url: "dns://\(resolver)/missing.lookout.test"}
              - {name: resolver-refused, kind: dns, url: "dns://\(resolver)/example.com"}
              - {name: resolver-aaaa, kind: dns, url: "dns://\(resolver)/api.lookout.test?type=AAAA"}
              - {name: resolver-timeout, kind: dns, url: "dns://\(resolver)/x.slow.test"}
            """)
        let names = ["resolver-a", "resolver-soa", "resolver-mx", "resolver-nx", "resolver-refused", "resolver-aaaa", "resolver-timeout"]
        let metrics = try await lookout.metricsOnceProbed(names)
        #expect(metrics.contains(#"lookout_probe_success{source="resolver-a"} 1"#))
        #expect(metrics.contains(#"lookout_probe_success{source="resolver-mx"} 1"#))
        #expect(metrics.contains(#"lookout_errors_total{source="resolver-nx",category="invalid_response",reason="dns_nxdomain"}"#))
        #expect(metrics.contains(#"lookout_errors_total{source="resolver-refused",category="#), "\(metrics)")
        #expect(metrics.contains(#"reason="dns_refused"}"#))
        #expect(metrics.contains(#"lookout_probe_success{source="resolver-aaaa"} 1"#))
        #expect(metrics.contains(#"lookout_errors_total{source="resolver-timeout",category="timeout",reason="dns_timeout"}"#), "\(metrics)")
        #expect(metrics.contains(#"lookout_probe_success{source="resolver-soa"} 1"#))
        // /probe reads the zone's serial as blackbox_exporter does.
        let probe = await CurlTransport().perform(TransferRequest(url: lookout.base + "/probe?target=\(authority.address)&module=soa", timeout: .patient))
            .bodyText
        #expect(probe.contains("probe_dns_serial \(Dnsmasq.serial)"), "\(probe)")
        try await lookout.stop()
    }
}
