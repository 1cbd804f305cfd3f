import Foundation
import ResilientHTTP
import TestSupport
import Testing

/// `/probe` beside Debian's blackbox_exporter on the same targets and modules (issue "A real
/// blackbox_exporter drop-in"): every series blackbox emits is in Lookout's answer, and the
/// values that are not timings are the same.
@Suite("blackbox differential", .serialized)
struct BlackboxDifferentialTests {
    let http = CurlTransport()

    /// Series whose values must match exactly; the rest are timings.
    static let exact: Set<String> = [
        "probe_success", "probe_http_status_code", "probe_http_redirects", "probe_http_ssl", "probe_http_content_length",
        "probe_http_uncompressed_body_length", "probe_http_version", "probe_ip_addr_hash", "probe_ip_protocol",
        "probe_failed_due_to_regex", "probe_http_last_modified_timestamp_seconds", "probe_ssl_earliest_cert_expiry",
        "probe_ssl_last_chain_expiry_timestamp_seconds", "probe_dns_answer_rrs", "probe_dns_authority_rrs", "probe_dns_additional_rrs",
        "probe_dns_query_succeeded", "probe_dns_serial", "probe_icmp_reply_hop_limit",
        "probe_grpc_status_code", "probe_grpc_ssl", "probe_grpc_healthcheck_response{serving_status=\"SERVING\"}",
        "probe_grpc_healthcheck_response{serving_status=\"NOT_SERVING\"}", "probe_grpc_healthcheck_response{serving_status=\"UNKNOWN\"}",
        "probe_grpc_healthcheck_response{serving_status=\"SERVICE_UNKNOWN\"}",
    ]

    /// `name{labels} value` samples of an exposition.
    func samples(_ text: String) -> [String: Double] {
        var samples: [String: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
            samples[String(line[..<space])] = value
        }
        return samples
    }

    /// The example files of Debian's own package, which blackbox_exporter 0.23 takes, pass
    /// `check-config` as `probe_modules_file` (an older spelling and a CA file that is not there
    /// are warnings, as blackbox logs them).
    @Test(arguments: ["example.yml", "blackbox.yml"])
    func debiansExampleFilesAreTakenAsTheyAre(_ name: String) async throws {
        let example = "/usr/share/doc/prometheus-blackbox-exporter/examples/\(name)"
        let theirs = try await runTool("/usr/bin/prometheus-blackbox-exporter", ["--config.file=\(example)", "--config.check"])
        #expect(theirs.status == 0, "\(theirs.output)")
        let directory = try makeTemporaryDirectory("blackbox-examples")
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = try writeLookoutConfig(
            in: directory,
            "probe_modules_file: \(example)\nprobe_allow: [\"http://127\\\\.0\\\\.0\\\\.1/.*\"]\nsources:\n  - {name: a, url: \"http://127.0.0.1:1/\"}\n")
        let ours = try await runTool(ChildProcess.binDirectory.appendingPathComponent("lookout").path, ["check-config", "--config", config.path])
        #expect(ours.status == 0, "\(ours.output)")
    }

    @Test func probeAnswersAsBlackboxExporterDoes() async throws {
        let directory = try makeTemporaryDirectory("blackbox-diff")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (sim, simBase) = try await startSimulator(["--listen", "127.0.0.1:0", "--dns-listen", "127.0.0.1:0"])
        let simHost = String(simBase.dropFirst("http://".count))
        let simPort = URLComponents(string: simBase)!.port!
        let (proxy, proxyPort) = try await startHTTPProxy()
        defer { proxy.send(SIGKILL) }
        let (grpcServer, grpcPort) = try await startGRPCHealthServer()
        defer { grpcServer.send(SIGKILL) }
        let grpcTarget = "127.0.0.1:\(grpcPort)"
        let (bannerServer, bannerPort) = try await startBannerServer()
        defer { bannerServer.send(SIGKILL) }
        let bannerTarget = "127.0.0.1:\(bannerPort)"
        let dnsServer = "127.0.0.1:" + (try await sim.waitFor(#"DNS for lookout\.test\. on 127\.0\.0\.1:(\d+)"#))
        let blackboxPort = closedPort()
        let refusedPort = closedPort()
        // A TLS upstream whose certificate has a subject to escape and DNS names to list.
        let (cert, key) = try makeSelfSignedCertificate(
            in: directory, subject: "/C=DE/O=Lookout Test, Inc./OU=probes/CN=127.0.0.1",
            alternativeNames: "IP:127.0.0.1,DNS:localhost,DNS:probe.test")
        let (tlsSim, tlsBase) = try await startSimulator(["--listen", "127.0.0.1:0", "--tls-cert", cert, "--tls-key", key])
        // Certificates from a CA of the test's own: valid, expired, not yet valid, about to
        // expire, and for another host; one simulator serves each.
        let caDirectory = directory.appendingPathComponent("ca")
        try FileManager.default.createDirectory(at: caDirectory, withIntermediateDirectories: true)
        let ca = try TestCA(in: caDirectory)
        let day: TimeInterval = 86_400
        let now = Date()
        var caSims: [ChildProcess] = []
        var banners: [ChildProcess] = []
        defer { for banner in banners { banner.send(SIGKILL) } }
        var caBases: [String: String] = [:]
        for (name, from, until, names) in [
            ("valid", now - day, now + 30 * day, "IP:127.0.0.1"), ("expired", now - 10 * day, now - day, "IP:127.0.0.1"),
            ("not-yet", now + day, now + 30 * day, "IP:127.0.0.1"), ("near-expiry", now - day, now + 2 * day, "IP:127.0.0.1"),
            ("other-host", now - day, now + 30 * day, "DNS:elsewhere.test"),
        ] {
            let issued = try ca.issue(name, notBefore: from, notAfter: until, alternativeNames: names)
            let (process, base) = try await startSimulator(["--listen", "127.0.0.1:0", "--tls-cert", issued.cert, "--tls-key", issued.key])
            caSims.append(process)
            caBases[name] = base
            // A conversation (STARTTLS on one port, TLS from the start on the other) with the
            // same certificate.
            if ["valid", "expired", "other-host"].contains(name) {
                let (banner, plain, tls) = try await startBannerServer(cert: issued.cert, key: issued.key)
                banners.append(banner)
                caBases["banner-" + name] = "127.0.0.1:\(plain)"
                caBases["banner-tls-" + name] = "127.0.0.1:\(tls)"
                // DNS over TLS in front of the simulator's DNS server, with the same certificate.
                let (relay, relayPort) = try await startDNSOverTLSRelay(cert: issued.cert, key: issued.key, upstream: dnsServer)
                banners.append(relay)
                caBases["dot-" + name] = "127.0.0.1:\(relayPort)"
                if name == "valid" {
                    for mode in ["garbage", "short"] {
                        let (odd, oddPort) = try await startDNSOverTLSRelay(cert: issued.cert, key: issued.key, upstream: dnsServer, mode: mode)
                        banners.append(odd)
                        caBases["dot-" + mode] = "127.0.0.1:\(oddPort)"
                    }
                }
            }
        }
        // A resolver from Debian, beside the simulator's zone.
        let dnsmasq = try await Dnsmasq.start(in: directory)
        defer { dnsmasq.stop() }
        let resolver = dnsmasq.address
        // One file for both: Lookout reads blackbox_exporter's own config as it is.
        try """
        modules:
          http_2xx: {prober: http, timeout: 5s}
          nofollow: {prober: http, timeout: 5s, http: {follow_redirects: false}}
          nofollow_302: {prober: http, timeout: 5s, http: {follow_redirects: false, valid_status_codes: [302]}}
          want_404: {prober: http, timeout: 5s, http: {valid_status_codes: [404]}}
          post: {prober: http, timeout: 5s, http: {method: POST, body: '{"a": 1}', headers: {Content-Type: application/json}}}
          body_ok: {prober: http, timeout: 5s, http: {fail_if_body_not_matches_regexp: ['"ok": ?true']}}
          body_bad: {prober: http, timeout: 5s, http: {fail_if_body_matches_regexp: ['ok']}}
          must_tls: {prober: http, timeout: 5s, http: {fail_if_not_ssl: true}}
          no_tls: {prober: http, timeout: 5s, http: {fail_if_ssl: true, preferred_ip_protocol: ip4}}
          basic: {prober: http, timeout: 5s, http: {basic_auth: {username: lookout, password: secret}, headers: {X-Probe: "1"}}}
          gzip: {prober: http, timeout: 5s, http: {compression: gzip}}
          small: {prober: http, timeout: 5s, http: {body_size_limit: 1KB}}
          small_regex: {prober: http, timeout: 5s, http: {body_size_limit: 1KiB, fail_if_body_matches_regexp: ['nothing']}}
          tls_ca: {prober: http, timeout: 5s, http: {tls_config: {ca_file: "\(cert)"}}}
          tls_test_ca: {prober: http, timeout: 5s, http: {tls_config: {ca_file: "\(ca.certificate)"}}}
          tls_named: {prober: http, timeout: 5s, http: {tls_config: {ca_file: "\(cert)", server_name: probe.test}}}
          tls_misnamed: {prober: http, timeout: 5s, http: {tls_config: {ca_file: "\(cert)", server_name: wrong.test}}}
          tls_max12: {prober: http, timeout: 5s, http: {tls_config: {ca_file: "\(cert)", max_version: TLS12}}}
          tls_min13: {prober: http, timeout: 5s, http: {tls_config: {ca_file: "\(cert)", min_version: TLS13}}}
          tls_client_cert: {prober: http, timeout: 5s, http: {tls_config: {ca_file: "\(cert)", cert_file: "\(cert)", key_file: "\(key)"}}}
          oauth: {prober: http, timeout: 5s, http: {oauth2: {client_id: lookout, client_secret: s3cret, token_url: "\(simBase)/oauth/token", scopes: [read]}}}
          oauth_audience: {prober: http, timeout: 5s, http: {oauth2: {client_id: lookout, client_secret: s3cret, token_url: "\(simBase)/oauth/token", endpoint_params: {audience: lookout}}}}
          oauth_other_audience: {prober: http, timeout: 5s, http: {oauth2: {client_id: lookout, client_secret: s3cret, token_url: "\(simBase)/oauth/token", endpoint_params: {audience: elsewhere}}}}
          oauth_token_tls: {prober: http, timeout: 5s, http: {tls_config: {ca_file: "\(cert)"}, oauth2: {client_id: lookout, client_secret: s3cret, token_url: "\(tlsBase)/oauth/token", tls_config: {ca_file: "\(cert)"}}}}
          oauth_token_untrusted: {prober: http, timeout: 5s, http: {tls_config: {ca_file: "\(cert)"}, oauth2: {client_id: lookout, client_secret: s3cret, token_url: "\(tlsBase)/oauth/token"}}}
          oauth_token_proxy: {prober: http, timeout: 5s, http: {oauth2: {client_id: lookout, client_secret: s3cret, token_url: "http://token.lookout.test:\(simPort)/oauth/token", proxy_url: "http://127.0.0.1:\(proxyPort)/"}}}
          oauth_token_proxy_down: {prober: http, timeout: 5s, http: {oauth2: {client_id: lookout, client_secret: s3cret, token_url: "http://token.lookout.test:\(simPort)/oauth/token", proxy_url: "http://127.0.0.1:\(refusedPort)/"}}}
          only_ip4: {prober: http, timeout: 5s, http: {preferred_ip_protocol: ip4, ip_protocol_fallback: false}}
          only_ip6: {prober: http, timeout: 5s, http: {preferred_ip_protocol: ip6, ip_protocol_fallback: false}}
          short: {prober: http, timeout: 2s}
          via_proxy: {prober: http, timeout: 5s, http: {proxy_url: "http://127.0.0.1:\(proxyPort)/", proxy_connect_header: {X-Probe: [blackbox]}}}
          token: {prober: http, timeout: 5s, http: {authorization: {type: Bearer, credentials: t0ken}, enable_http2: false}}
          hdr_match: {prober: http, timeout: 5s, http: {fail_if_header_matches: [{header: Content-Type, regexp: json}]}}
          hdr_not_match: {prober: http, timeout: 5s, http: {fail_if_header_not_matches: [{header: content-type, regexp: "^application/"}]}}
          hdr_missing: {prober: http, timeout: 5s, http: {fail_if_header_not_matches: [{header: X-Missing, regexp: "."}]}}
          hdr_allow_missing: {prober: http, timeout: 5s, http: {fail_if_header_matches: [{header: X-Missing, regexp: ".", allow_missing: true}]}}
          http11: {prober: http, timeout: 5s, http: {valid_http_versions: ["HTTP/1.1"]}}
          http2_only: {prober: http, timeout: 5s, http: {valid_http_versions: ["HTTP/2.0"]}}
          tls_insecure: {prober: http, timeout: 5s, http: {tls_config: {insecure_skip_verify: true}}}
          tcp_connect: {prober: tcp, timeout: 5s}
          tcp_banner: {prober: tcp, timeout: 5s, tcp: {query_response: [{expect: "^220 ([^ ]+) ESMTP", send: "EHLO ${1}"}, {expect: "^250 hello banner"}]}}
          tcp_banner_wrong: {prober: tcp, timeout: 5s, tcp: {query_response: [{expect: "^SSH-2\\\\.0"}]}}
          tcp_banner_rejected: {prober: tcp, timeout: 5s, tcp: {query_response: [{expect: "^220", send: "HELO x"}, {expect: "^250"}]}}
          tcp_from_lo2: {prober: tcp, timeout: 5s, tcp: {source_ip_address: 127.0.0.2}}
          tcp_banner_from_lo2: {prober: tcp, timeout: 5s, tcp: {source_ip_address: 127.0.0.2, query_response: [{expect: "^220"}]}}
          tcp_tls: {prober: tcp, timeout: 5s, tcp: {tls: true, tls_config: {ca_file: "\(cert)"}}}
          tcp_tls_test_ca: {prober: tcp, timeout: 5s, tcp: {tls: true, tls_config: {ca_file: "\(ca.certificate)"}}}
          tcp_starttls:
            prober: tcp
            timeout: 5s
            tcp:
              tls_config: {ca_file: "\(ca.certificate)"}
              query_response: [{expect: "^220 banner", send: STARTTLS}, {expect: "^220 ready", starttls: true}, {send: EHLO lookout}, {expect: "^250 hello lookout"}]
          tcp_starttls_insecure:
            prober: tcp
            timeout: 5s
            tcp:
              tls_config: {insecure_skip_verify: true}
              query_response: [{expect: "^220 banner", send: STARTTLS}, {expect: "^220 ready", starttls: true}, {send: EHLO lookout}, {expect: "^250 hello lookout"}]
          tcp_tls_banner:
            prober: tcp
            timeout: 5s
            tcp:
              tls: true
              tls_config: {ca_file: "\(ca.certificate)"}
              query_response: [{expect: "^220 ([^ ]+) ESMTP", send: "EHLO ${1}"}, {expect: "^250 hello banner"}]
          grpc_server: {prober: grpc, timeout: 5s, grpc: {preferred_ip_protocol: ip4}}
          grpc_ok: {prober: grpc, timeout: 5s, grpc: {service: ok, preferred_ip_protocol: ip4}}
          grpc_down: {prober: grpc, timeout: 5s, grpc: {service: down, preferred_ip_protocol: ip4}}
          grpc_unknown: {prober: grpc, timeout: 5s, grpc: {service: payments, preferred_ip_protocol: ip4}}
          icmp4: {prober: icmp, timeout: 5s, icmp: {preferred_ip_protocol: ip4}}
          icmp_from_lo2: {prober: icmp, timeout: 5s, icmp: {preferred_ip_protocol: ip4, source_ip_address: 127.0.0.2}}
          icmp_from_elsewhere: {prober: icmp, timeout: 2s, icmp: {preferred_ip_protocol: ip4, source_ip_address: 192.0.2.1}}
          dns_tls: {prober: dns, timeout: 2s, dns: {query_name: ok.lookout.test, query_type: A, transport_protocol: tcp, dns_over_tls: true, tls_config: {ca_file: "\(ca.certificate)"}}}
          dns_tls_insecure: {prober: dns, timeout: 5s, dns: {query_name: ok.lookout.test, query_type: A, transport_protocol: tcp, dns_over_tls: true, tls_config: {insecure_skip_verify: true}}}
          dnsmasq_a: {prober: dns, timeout: 5s, dns: {query_name: api.lookout.test, query_type: A, validate_answer_rrs: {fail_if_not_matches_regexp: ["127\\\\.0\\\\.0\\\\.7"]}}}
          dnsmasq_a_wrong: {prober: dns, timeout: 5s, dns: {query_name: api.lookout.test, query_type: A, validate_answer_rrs: {fail_if_not_matches_regexp: ["10\\\\.0\\\\.0\\\\.1"]}}}
          dnsmasq_mx_tcp: {prober: dns, timeout: 5s, dns: {query_name: lookout.test, query_type: MX, transport_protocol: tcp}}
          dnsmasq_nx: {prober: dns, timeout: 5s, dns: {query_name: missing.lookout.test, query_type: A}}
          dnsmasq_refused: {prober: dns, timeout: 5s, dns: {query_name: example.com, query_type: A, valid_rcodes: [REFUSED]}}
          dns_from_lo2: {prober: dns, timeout: 5s, dns: {query_name: ok.lookout.test, query_type: A, preferred_ip_protocol: ip4, source_ip_address: 127.0.0.2}}
          dns_from_elsewhere: {prober: dns, timeout: 2s, dns: {query_name: ok.lookout.test, query_type: A, preferred_ip_protocol: ip4, source_ip_address: 192.0.2.1}}
          icmp_default: {prober: icmp, timeout: 5s}
          icmp_shaped: {prober: icmp, timeout: 5s, icmp: {preferred_ip_protocol: ip4, payload_size: 1200, dont_fragment: true, ttl: 5}}
          dns_a: {prober: dns, timeout: 5s, dns: {query_name: ok.lookout.test, query_type: A, preferred_ip_protocol: ip4}}
          dns_any: {prober: dns, timeout: 5s, dns: {query_name: ok.lookout.test, preferred_ip_protocol: ip4}}
          dns_nx: {prober: dns, timeout: 5s, dns: {query_name: missing.lookout.test, preferred_ip_protocol: ip4}}
          dns_nx_ok: {prober: dns, timeout: 5s, dns: {query_name: missing.lookout.test, valid_rcodes: [NXDOMAIN], recursion_desired: false, preferred_ip_protocol: ip4}}
          dns_servfail: {prober: dns, timeout: 5s, dns: {query_name: servfail.lookout.test, query_type: A, preferred_ip_protocol: ip4}}
          dns_silent: {prober: dns, timeout: 2s, dns: {query_name: drop.lookout.test, query_type: A, preferred_ip_protocol: ip4}}
          dns_soa_tcp:
            prober: dns
            timeout: 5s
            dns:
              query_name: lookout.test
              query_type: SOA
              transport_protocol: tcp
              preferred_ip_protocol: ip4
              validate_answer_rrs: {fail_if_not_matches_regexp: ["lookout\\\\.test\\\\.\t300\tIN\tSOA\tns\\\\.lookout\\\\.test\\\\. "]}
          dns_mx_additional:
            prober: dns
            timeout: 5s
            dns: {query_name: mail.lookout.test, query_type: MX, preferred_ip_protocol: ip4, validate_additional_rrs: {fail_if_none_matches_regexp: ["127\\\\.0\\\\.0\\\\.3$"]}}
          dns_all_match:
            prober: dns
            timeout: 5s
            dns: {query_name: two.lookout.test, query_type: A, preferred_ip_protocol: ip4, validate_answer_rrs: {fail_if_all_match_regexp: ["127\\\\.0\\\\.0\\\\.[12]$"]}}
          dns_one_matches:
            prober: dns
            timeout: 5s
            dns: {query_name: two.lookout.test, query_type: A, preferred_ip_protocol: ip4, validate_answer_rrs: {fail_if_matches_regexp: ["127\\\\.0\\\\.0\\\\.2$"]}}
          dns_nodata_wants:
            prober: dns
            timeout: 5s
            dns: {query_name: nodata.lookout.test, query_type: A, preferred_ip_protocol: ip4, validate_answer_rrs: {fail_if_not_matches_regexp: ["."]}}
        """.write(to: directory.appendingPathComponent("blackbox.yml"), atomically: true, encoding: .utf8)
        let blackbox = try ChildProcess(
            "/usr/bin/prometheus-blackbox-exporter",
            [
                "--config.file=\(directory.path)/blackbox.yml", "--web.listen-address=127.0.0.1:\(blackboxPort)",
            ])
        let config = directory.appendingPathComponent("lookout.yml")
        try """
        listen: 127.0.0.1:0
        database: ":memory:"
        probe_modules_file: blackbox.yml
        probe_allow: ["https?://(127\\\\.0\\\\.0\\\\.1|localhost):[0-9]+/.*", "(tcp|dns|grpc)://127\\\\.0\\\\.0\\\\.1:[0-9]+", "icmp://127\\\\.0\\\\.0\\\\.1"]
        sources:
          - {name: sim, url: "\(simBase)/ok", interval: 1h}
        """.write(to: config, atomically: true, encoding: .utf8)
        let (lookout, base) = try await startLookout(config: config)
        _ = try await eventually("blackbox_exporter") {
            await http.perform(TransferRequest(url: "http://127.0.0.1:\(blackboxPort)/-/healthy", timeout: .patient)).httpStatus == 200 ? true : nil
        }

        let cases: [(target: String, module: String)] = [
            ("\(simHost)/ok", "http_2xx"),
            ("\(simHost)/status/500", "http_2xx"),
            ("\(simHost)/status/404", "http_2xx"),
            ("\(simHost)/redirect?n=3", "http_2xx"),
            ("\(simHost)/redirect?n=20", "http_2xx"),
            ("\(simHost)/redirect?n=2", "nofollow"),
            ("\(simHost)/last-modified", "http_2xx"),
            ("http://\(simHost)/json/valid", "http_2xx"),
            ("127.0.0.1:\(refusedPort)/", "http_2xx"),
            ("\(simHost)/redirect?n=1", "nofollow_302"),
            ("\(simHost)/status/404", "want_404"),
            ("\(simHost)/ok", "post"),
            ("\(simHost)/ok", "body_ok"),
            ("\(simHost)/ok", "body_bad"),
            ("\(simHost)/ok", "must_tls"),
            ("\(simHost)/ok", "no_tls"),
            ("\(simHost)/ok", "basic"),
            ("\(simHost)/json/valid", "gzip"),
            ("\(simHost)/gzip", "gzip"),
            ("\(simHost)/gzip", "http_2xx"),
            ("\(simHost)/ok", "small"),
            ("\(simHost)/json/valid", "hdr_match"),
            ("\(simHost)/json/valid", "hdr_not_match"),
            ("\(simHost)/ok", "hdr_missing"),
            ("\(simHost)/ok", "hdr_allow_missing"),
            ("\(simHost)/ok", "http11"),
            ("\(simHost)/ok", "http2_only"),
            ("\(tlsBase)/ok", "tls_ca"),
            ("\(caBases["valid"]!)/ok", "tls_test_ca"), ("\(caBases["expired"]!)/ok", "tls_test_ca"),
            ("\(caBases["not-yet"]!)/ok", "tls_test_ca"), ("\(caBases["near-expiry"]!)/ok", "tls_test_ca"),
            ("\(caBases["other-host"]!)/ok", "tls_test_ca"),
            ("\(tlsBase)/ok", "tls_named"), ("\(tlsBase)/ok", "tls_misnamed"), ("\(tlsBase)/ok", "tls_max12"), ("\(tlsBase)/ok", "tls_min13"),
            ("\(tlsBase)/ok", "tls_client_cert"), ("\(simHost)/ok", "token"), ("\(simHost)/json/valid", "via_proxy"),
            ("\(simHost)/protected", "oauth"), ("\(simHost)/protected", "http_2xx"),
            ("\(simHost)/protected", "oauth_audience"), ("\(simHost)/protected", "oauth_other_audience"),
            ("\(tlsBase)/protected", "oauth_token_tls"), ("\(tlsBase)/protected", "oauth_token_untrusted"),
            ("\(simHost)/protected", "oauth_token_proxy"), ("\(simHost)/protected", "oauth_token_proxy_down"),
            ("localhost:\(simPort)/ok", "only_ip4"), ("localhost:\(simPort)/ok", "only_ip6"), ("localhost:\(simPort)/ok", "http_2xx"),
            ("\(simHost)/slow?ms=3000", "short"),
            ("\(tlsBase)/ok", "must_tls"),
            ("\(tlsBase)/ok", "tls_insecure"),
            (simHost, "tcp_connect"),
            (bannerTarget, "tcp_banner"), (bannerTarget, "tcp_banner_wrong"), (bannerTarget, "tcp_banner_rejected"),
            ("127.0.0.1:\(refusedPort)", "tcp_banner"),
            (bannerTarget, "tcp_from_lo2"), (bannerTarget, "tcp_banner_from_lo2"),
            (String(tlsBase.dropFirst("https://".count)), "tcp_tls"), (simHost, "tcp_tls"),
            (String(caBases["valid"]!.dropFirst("https://".count)), "tcp_tls_test_ca"),
            (String(caBases["expired"]!.dropFirst("https://".count)), "tcp_tls_test_ca"),
            (String(caBases["other-host"]!.dropFirst("https://".count)), "tcp_tls_test_ca"),
            ("127.0.0.1:\(refusedPort)", "tcp_connect"),
            (caBases["banner-valid"]!, "tcp_starttls"), (caBases["banner-expired"]!, "tcp_starttls"),
            (caBases["banner-other-host"]!, "tcp_starttls"), (caBases["banner-other-host"]!, "tcp_starttls_insecure"),
            (bannerTarget, "tcp_starttls"), (caBases["banner-tls-valid"]!, "tcp_tls_banner"), (caBases["banner-tls-expired"]!, "tcp_tls_banner"),
            (caBases["banner-valid"]!, "tcp_tls_banner"),
            ("\(tlsBase)/ok", "http_2xx"),
            ("\(simHost)/download/4096", "small"),
            ("\(simHost)/download/4096", "small_regex"),
            (dnsServer, "dns_a"), (dnsServer, "dns_any"), (dnsServer, "dns_nx"), (dnsServer, "dns_nx_ok"), (dnsServer, "dns_servfail"),
            (dnsServer, "dns_silent"), (dnsServer, "dns_soa_tcp"), (dnsServer, "dns_mx_additional"), (dnsServer, "dns_all_match"),
            (dnsServer, "dns_one_matches"), (dnsServer, "dns_nodata_wants"),
            (grpcTarget, "grpc_server"), (grpcTarget, "grpc_ok"), (grpcTarget, "grpc_down"), (grpcTarget, "grpc_unknown"),
            ("127.0.0.1:\(refusedPort)", "grpc_server"),
            ("127.0.0.1", "icmp4"), ("127.0.0.1", "icmp_default"), ("127.0.0.1", "icmp_shaped"), ("127.0.0.1", "icmp_from_lo2"),
            ("127.0.0.1", "icmp_from_elsewhere"),
            (dnsServer, "dns_from_lo2"), (dnsServer, "dns_from_elsewhere"),
            (caBases["dot-valid"]!, "dns_tls"), (caBases["dot-expired"]!, "dns_tls"), (caBases["dot-other-host"]!, "dns_tls"),
            (caBases["dot-other-host"]!, "dns_tls_insecure"), (caBases["dot-garbage"]!, "dns_tls"), (caBases["dot-short"]!, "dns_tls"),
            (dnsServer, "dns_tls"),
            (resolver, "dnsmasq_a"), (resolver, "dnsmasq_a_wrong"), (resolver, "dnsmasq_mx_tcp"), (resolver, "dnsmasq_nx"), (resolver, "dnsmasq_refused"),
        ]
        for (target, module) in cases {
            let query = "target=\(target.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)&module=\(module)"
            let theirs = samples(await http.perform(TransferRequest(url: "http://127.0.0.1:\(blackboxPort)/probe?\(query)", timeout: .patient)).bodyText)
            let ours = samples(await http.perform(TransferRequest(url: "\(base)/probe?\(query)", timeout: .patient)).bodyText)
            #expect(
                theirs.count >= (["tcp", "dns", "icmp", "grpc"].contains { module.hasPrefix($0) } ? 6 : 12),
                "\(target): blackbox_exporter answered \(theirs)")
            for (series, value) in theirs {
                #expect(ours[series] != nil, "\(target) \(module): \(series) is missing")
                if BlackboxDifferentialTests.exact.contains(series) {
                    #expect(ours[series] == value, "\(target) \(module): \(series) is \(ours[series] ?? .nan), blackbox_exporter says \(value)")
                }
            }
            let handshook =
                (target == caBases["banner-valid"] && module == "tcp_starttls") || (target == caBases["banner-tls-valid"] && module == "tcp_tls_banner")
            if module == "tls_ca" || (module == "tcp_tls" && target != simHost) || handshook {
                // The TLS series are there to compare: leaf, chain expiry, version.
                for name in ["probe_ssl_last_chain_info{", "probe_tls_version_info{", "probe_ssl_last_chain_expiry_timestamp_seconds"] {
                    #expect(theirs.keys.contains { $0.hasPrefix(name) } && ours.keys.contains { $0.hasPrefix(name) }, "\(target) \(module): \(name)")
                }
                if module == "tls_ca" || module == "tcp_tls" {
                    #expect(ours.keys.contains { $0.contains(#"subjectalternative="localhost,probe.test""#) })
                }
            }
            // One attempt, as blackbox makes.
            #expect(ours["probe_retries"] == 0, "\(target) \(module)")
            // The token request trusts and goes through what oauth2 says, apart from the probe.
            if let succeeds = BlackboxDifferentialTests.tokenConnectionCases[module] {
                #expect(theirs["probe_success"] == (succeeds ? 1 : 0) && ours["probe_success"] == theirs["probe_success"], "\(module)")
            }
        }
        try await sameAlertsFire(cases, blackbox: "127.0.0.1:\(blackboxPort)", lookout: String(base.dropFirst("http://".count)), in: directory)
        // Both connected from the source address asked for, with and without a conversation.
        let fromSource = bannerServer.text.components(separatedBy: "connection from 127.0.0.2").count - 1
        #expect(fromSource >= 4, "\(bannerServer.text)")
        // Both went through the proxy: blackbox_exporter's request, then Lookout's (more
        // followed from Prometheus's scrapes).
        let proxied = proxy.text.components(separatedBy: "proxied GET http://\(simHost)/json/valid").count - 1
        #expect(proxied >= 2, "\(proxy.text)")
        #expect(try await lookout.terminate() == 0)
        _ = try await blackbox.terminate()
        #expect(try await sim.terminate() == 0)
        #expect(try await tlsSim.terminate() == 0)
        for process in caSims { #expect(try await process.terminate() == 0) }
    }

    /// The community's blackbox alert rules (awesome-prometheus-alerts), `for` cut to 0 so a
    /// test need not wait out a minute: the timing rules use the probe's own duration.
    static let communityRules = """
        groups:
          - name: blackbox
            rules:
              - alert: BlackboxProbeFailed
                expr: probe_success == 0
              - alert: BlackboxSlowProbe
                expr: avg_over_time(probe_duration_seconds[1m]) > 1
              - alert: BlackboxProbeHttpFailure
                expr: probe_http_status_code <= 199 OR probe_http_status_code >= 400
              - alert: BlackboxSslCertificateWillExpireSoon
                expr: 3 <= round((last_over_time(probe_ssl_earliest_cert_expiry[10m]) - time()) / 86400, 0.1) < 20
              - alert: BlackboxSslCertificateWillExpireSoonCritical
                expr: 0 <= round((last_over_time(probe_ssl_earliest_cert_expiry[10m]) - time()) / 86400, 0.1) < 3
              - alert: BlackboxSslCertificateExpired
                expr: round((last_over_time(probe_ssl_earliest_cert_expiry[10m]) - time()) / 86400, 0.1) < 0
              - alert: BlackboxProbeSlowHttp
                expr: avg_over_time(probe_http_duration_seconds[1m]) > 1
              - alert: BlackboxProbeSlowPing
                expr: avg_over_time(probe_icmp_duration_seconds[1m]) > 1
        """

    /// Prometheus scrapes both exporters for every case with the standard relabelling (the
    /// target as `__param_target` and `instance`, the exporter as `__address__`) and evaluates
    /// the community rules: the alerts firing for each case are the same for both.
    /// oauth2's own `tls_config` and `proxy_url` cases, and whether each probe succeeds.
    static let tokenConnectionCases = [
        "oauth_token_tls": true, "oauth_token_untrusted": false, "oauth_token_proxy": true, "oauth_token_proxy_down": false,
    ]

    func sameAlertsFire(_ cases: [(target: String, module: String)], blackbox: String, lookout: String, in directory: URL) async throws {
        let prometheusDirectory = directory.appendingPathComponent("prometheus")
        try FileManager.default.createDirectory(at: prometheusDirectory, withIntermediateDirectories: true)
        let rules = prometheusDirectory.appendingPathComponent("blackbox-rules.yml")
        try Self.communityRules.write(to: rules, atomically: true, encoding: .utf8)
        func job(_ name: String, _ exporter: String) -> String {
            let targets = cases.enumerated().map { index, item in
                "      - {targets: [\"\(item.target)\"], labels: {__param_module: \(item.module), case: \"\(index)\"}}"
            }
            return """
                  - job_name: \(name)
                    metrics_path: /probe
                    scrape_interval: 2s
                    scrape_timeout: 1900ms
                    static_configs:
                \(targets.joined(separator: "\n"))
                    relabel_configs:
                      - {source_labels: [__address__], target_label: __param_target}
                      - {source_labels: [__param_target], target_label: instance}
                      - {target_label: __address__, replacement: "\(exporter)"}
                """
        }
        let prometheus = try TestPrometheus(
            configuration: """
                global: {evaluation_interval: 1s}
                rule_files: ["\(rules.path)"]
                scrape_configs:
                \(job("blackbox", blackbox))
                \(job("lookout", lookout))
                """, in: prometheusDirectory)
        defer { prometheus.process.send(SIGKILL) }
        // Every case scraped from both, then the rules evaluated over it.
        _ = try await eventually("every case scraped from both exporters") {
            let up = await prometheus.query("count(up == 1) by (job)") ?? []
            return up.count == 2 && up.allSatisfy { (($0["value"] as? [Any])?.last as? String) == "\(cases.count)" } ? true : nil
        }
        func firing(_ job: String) async -> Set<String>? {
            guard let alerts = await prometheus.query("ALERTS{alertstate=\"firing\",job=\"\(job)\"}") else { return nil }
            return Set(
                alerts.compactMap { alert in
                    guard let labels = alert["metric"] as? [String: String], let name = labels["alertname"], let index = labels["case"] else { return nil }
                    return "\(name) case \(index) (\(cases[Int(index) ?? 0].module) \(cases[Int(index) ?? 0].target))"
                })
        }
        var last: (Set<String>, Set<String>) = ([], [])
        let same: Bool? = try? await eventually(deadline: .seconds(30), "the same alerts from both exporters") { () async -> Bool? in
            guard let theirs = await firing("blackbox"), let ours = await firing("lookout") else { return nil }
            last = (theirs, ours)
            // Every failing case fires something; the slow probe rule needs the 2 s timeout seen.
            return !theirs.isEmpty && theirs == ours && theirs.contains { $0.hasPrefix("BlackboxSlowProbe") } ? true : nil
        }
        #expect(same == true, "blackbox_exporter only: \(last.0.subtracting(last.1).sorted()); Lookout only: \(last.1.subtracting(last.0).sorted())")
        #expect(last.0.contains { $0.hasPrefix("BlackboxSslCertificateWillExpireSoonCritical") }, "\(last.0.sorted())")
        #expect(last.0.contains { $0.hasPrefix("BlackboxSslCertificateExpired") } == last.1.contains { $0.hasPrefix("BlackboxSslCertificateExpired") })
    }
}
