import Foundation
import Logging
import LookoutCore
import ResilientHTTP
import Testing

/// `probe_modules_file`: blackbox_exporter's own config, read as it is; what Lookout cannot
/// honour is an error with its place in that file, never ignored.
@Suite("blackbox_exporter config file")
struct BlackboxFileTests {
    func load(_ blackbox: String, _ lookout: String = "") throws -> LookoutConfig {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bb-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try blackbox.write(to: directory.appendingPathComponent("blackbox.yml"), atomically: true, encoding: .utf8)
        return try ConfigLoader.parse(
            "probe_modules_file: blackbox.yml\n\(lookout)sources:\n  - {name: a, url: \"http://127.0.0.1/\"}\n", file: "t.yml", directory: directory.path)
    }

    func problems(_ blackbox: String, _ lookout: String = "") -> [String] {
        do {
            _ = try load(blackbox, lookout)
            return []
        } catch let error as ConfigError {
            // The temporary directory differs per call: keep the file's name.
            return error.problems.map { $0.description.replacingOccurrences(of: #"/[^ ]*/blackbox\.yml"#, with: "blackbox.yml", options: .regularExpression) }
        } catch {
            return ["\(error)"]
        }
    }

    @Test func readsHTTPModulesAndWarnsThatTheyProbeAnyTarget() throws {
        let config = try load(
            """
            modules:
              http_2xx: {prober: http, timeout: 3s}
              post:
                prober: http
                http:
                  method: post
                  body: '{}'
                  valid_status_codes: [200, 201]
                  basic_auth: {username: u, password: p}
                  fail_if_body_not_matches_regexp: ["ok"]
              ssh: {prober: tcp, tcp: {preferred_ip_protocol: ip4}}
              resolver: {prober: dns, dns: {query_name: example.com}}
              pinger: {prober: icmp, icmp: {preferred_ip_protocol: ip4, payload_size: 100, ttl: 8}}
              caller: {prober: grpc, grpc: {service: payments, tls: true}}
            """)
        #expect(Set(config.probeModules.keys) == ["http_2xx", "post", "ssh", "resolver", "pinger", "caller"])
        #expect(
            config.probeModules["caller"]?.grpc
                == {
                    var grpc = GRPCModuleSettings()
                    grpc.service = "payments"
                    grpc.tls = true
                    return grpc
                }())
        #expect(config.probeModules["pinger"]?.icmp?.preferIPv6 == false && config.probeModules["pinger"]?.icmp?.payloadSize == 100)
        #expect(config.probeModules["ssh"]?.kind == .tcp)
        let post = try #require(config.probeModules["post"])
        #expect(post.method == "POST" && post.body == "{}" && post.validStatusCodes == [200, 201])
        #expect(post.headers.contains { $0.name == "Authorization" && $0.value == "Basic dTpw" })
        #expect(post.allows("http://anything.example/"))
        #expect(config.probeModules["http_2xx"]?.timeout == .seconds(3))
        #expect(config.warnings.contains { $0.message.contains("probe any target") })
        // probe_allow narrows them.
        let narrowed = try load("modules: {m: {prober: http}}\n", "probe_allow: [\"http://127\\\\.0\\\\.0\\\\.1/.*\"]\n")
        #expect(narrowed.probeModules["m"]?.allows("http://127.0.0.1/x") == true)
        #expect(narrowed.probeModules["m"]?.allows("http://anything.example/") == false)
        #expect(!narrowed.warnings.contains { $0.message.contains("probe any target") })
    }

    @Test func whatCannotBeHonouredIsAnErrorInThatFile() throws {
        #expect(
            problems("modules:\n  m:\n    prober: http\n    http: {http_headers: {Authorization: {values: [b]}}}\n") == [
                "blackbox.yml:4:27: modules.m.http.http_headers.Authorization: setting header \"Authorization\" is not allowed (as in blackbox_exporter)"
            ])
        #expect(
            problems("modules:\n  m: {prober: http, http: {proxy_url: \"http://127.0.0.1:1/\", proxy_from_environment: true}}\n").first?.contains(
                "proxy_from_environment: cannot be used with proxy_url") == true)
        #expect(problems("modules:\n  m: {prober: http, http: {nonsense: 1}}\n").first?.contains("modules.m.http.nonsense: unknown key") == true)
        #expect(
            problems("modules:\n  m: {prober: http, http: {fail_if_body_matches_regexp: [\"(\"]}}\n").first?.contains("is not a regular expression") == true)
        #expect(
            problems("modules:\n  m: {prober: http, http: {body: x, body_file: blackbox.yml}}\n").first?.contains("body and body_file are both set") == true)
        #expect(problems("modules:\n  m: {prober: http, http: {body_file: /nonexistent/body}}\n").first?.contains("cannot read /nonexistent/body") == true)
        #expect(problems("modules:\n  m: {prober: smtp}\n").first?.contains("\"smtp\" is not a prober") == true)
        // query_response is honoured (expect and send); STARTTLS in it, TLS with it and a pattern
        // that is no regular expression are not.
        #expect(problems("modules:\n  m: {prober: tcp, tcp: {query_response: [{expect: x, send: y}]}}\n").isEmpty)
        #expect(problems("modules:\n  m: {prober: tcp, tcp: {source_ip_address: \"::1\"}}\n").isEmpty)
        #expect(
            problems("modules:\n  m: {prober: tcp, tcp: {source_ip_address: eth0}}\n").first?.contains(
                "modules.m.tcp.source_ip_address: \"eth0\" is not an IP address") == true)
        // DNS over TLS needs tcp, as blackbox does (which fails every probe without it).
        let dot = try load(
            "modules:\n  m: {prober: dns, dns: {query_name: a.test, transport_protocol: tcp, dns_over_tls: true, tls_config: {insecure_skip_verify: true}}}\n")
        #expect(dot.probeModules["m"]?.dns?.overTLS == true && dot.probeModules["m"]?.insecureSkipVerify == true)
        #expect(
            problems("modules:\n  m: {prober: dns, dns: {query_name: a.test, dns_over_tls: true}}\n").first?.contains(
                "modules.m.dns.dns_over_tls: needs transport_protocol: tcp") == true)
        // dns and icmp go from it too.
        let dns = try load("modules:\n  m: {prober: dns, dns: {query_name: a.test, source_ip_address: 127.0.0.2}}\n")
        #expect(dns.probeModules["m"]?.sourceAddress == "127.0.0.2")
        let icmp = try load("modules:\n  m: {prober: icmp, icmp: {source_ip_address: \"::1\"}}\n")
        #expect(icmp.probeModules["m"]?.sourceAddress == "::1")
        #expect(
            problems("modules:\n  m: {prober: icmp, icmp: {source_ip_address: 300.1.1.1}}\n").first?.contains(
                "modules.m.icmp.source_ip_address: \"300.1.1.1\" is not an IP address") == true)
        // STARTTLS and a conversation in TLS from the start are served; a starttls that is no
        // boolean is not.
        let starttls = try #require(
            try load("modules:\n  m: {prober: tcp, tcp: {query_response: [{expect: x, send: STARTTLS}, {starttls: true}]}}\n").probeModules["m"])
        #expect(starttls.tcpQueryResponse.map(\.startTLS) == [false, true])
        #expect(problems("modules:\n  m: {prober: tcp, tcp: {tls: true, query_response: [{expect: x}]}}\n").isEmpty)
        #expect(
            problems("modules:\n  m: {prober: tcp, tcp: {query_response: [{starttls: maybe}]}}\n").first?.contains(
                "modules.m.tcp.query_response[0].starttls") == true)
        #expect(
            problems("modules:\n  m: {prober: tcp, tcp: {query_response: [{expect: \"(\"}]}}\n").first?.contains(
                "modules.m.tcp.query_response[0].expect: \"(\" is not a regular expression") == true)
        // `tls: true` is honoured (a handshake and the TLS series); a value that is no boolean is not.
        #expect(problems("modules:\n  m: {prober: tcp, tcp: {tls: true}}\n").isEmpty)
        #expect(problems("modules:\n  m: {prober: tcp, tcp: {tls: maybe}}\n").first?.contains("modules.m.tcp.tls") == true)
        #expect(
            problems("modules:\n  m: {prober: http}\n", "probe_modules: {m: {kind: http, allow: [\"x\"]}}\n") == [
                #"t.yml:1:21: probe_modules_file: module "m" is defined both in probe_modules and in blackbox.yml: modules.m; rename one"#
            ])
        #expect(problems("modules: {m: {prober: http}}\n", "probe_allow: [\"(\"]\n").first?.contains("probe_allow[0]") == true)
        #expect(problems(String(repeating: "# padding\n", count: 120_000)).first?.contains("is 1200000 bytes; at most 1048576 are read") == true)
    }

    /// `body_size_limit` as blackbox_exporter writes it (Go's Base2Bytes: KB and KiB both 1,024);
    /// 0 is no limit; anything else, or a size past Int, is an error at its place.
    @Test func headerChecksAndHTTPVersionsAreRead() throws {
        let config = try load(
            """
            modules:
              m:
                prober: http
                http:
                  fail_if_header_matches: [{header: Server, regexp: "nginx/1\\\\.1"}]
                  fail_if_header_not_matches: [{header: Cache-Control, regexp: max-age, allow_missing: true}]
                  valid_http_versions: [HTTP/1.1, HTTP/2.0]
            """)
        let module = try #require(config.probeModules["m"])
        #expect(module.failIfHeaderMatches == [ProbeModule.HeaderRegex(header: "Server", regexp: #"nginx/1\.1"#)])
        #expect(module.failIfHeaderNotMatches == [ProbeModule.HeaderRegex(header: "Cache-Control", regexp: "max-age", allowMissing: true)])
        #expect(module.validHTTPVersions == ["HTTP/1.1", "HTTP/2.0"])
        #expect(
            problems("modules: {m: {prober: http, http: {fail_if_header_matches: [{regexp: x}]}}}\n").first?.contains(
                "fail_if_header_matches[0].header: is missing") == true)
        #expect(
            problems("modules: {m: {prober: http, http: {fail_if_header_matches: [{header: X, regexp: \"(\"}]}}}\n").first?.contains(
                "is not a regular expression") == true)
        #expect(
            problems("modules: {m: {prober: http, http: {valid_http_versions: [HTTP/3]}}}\n").first?.contains(#""HTTP/3" is not a protocol Lookout speaks"#)
                == true)
    }

    /// body_file (blackbox_exporter 0.24 and later) is read with the config.
    @Test func bodyFileIsReadWithTheConfig() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bb-body-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let body = directory.appendingPathComponent("body.json").path
        try #"{"query": "ping"}"#.write(toFile: body, atomically: true, encoding: .utf8)
        let config = try load("modules:\n  m: {prober: http, http: {method: POST, body_file: \"\(body)\"}}\n")
        #expect(config.probeModules["m"]?.body == #"{"query": "ping"}"#)
    }

    /// A device, a FIFO or a directory named as a file is refused when the config is read:
    /// /dev/zero would be read for ever, a FIFO would block the reader (the POST went with an
    /// empty body and no Content-Length), and blackbox refuses such a CA file too.
    @Test func devicesAndFIFOsAreNoFiles() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bb-fifo-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let fifo = directory.appendingPathComponent("body.fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        #expect(
            problems("modules:\n  m: {prober: http, http: {method: POST, body_file: /dev/zero}}\n").first?.contains("/dev/zero is a device, not a regular file")
                == true)
        #expect(
            problems("modules:\n  m: {prober: http, http: {method: POST, body_file: \"\(fifo)\"}}\n").first?.contains("is a FIFO, not a regular file") == true)
        #expect(problems("modules:\n  m: {prober: http, http: {tls_config: {ca_file: /dev/zero}}}\n").first?.contains("/dev/zero is a device") == true)
        #expect(problems("modules:\n  m: {prober: http, http: {bearer_token_file: /dev/zero}}\n").first?.contains("/dev/zero is a device") == true)
        #expect(problems("modules:\n  m: {prober: http, http: {bearer_token_file: /tmp}}\n").first?.contains("/tmp is a directory") == true)
        // The blackbox file itself, as every other file a config names.
        for (file, said) in [
            (fifo, "\(fifo) is a FIFO, not a regular file: name a file"), ("/dev/zero", "/dev/zero is a device, not a regular file: name a file"),
        ] {
            let text = "probe_modules_file: \"\(file)\"\nsources:\n  - {name: a, url: \"http://127.0.0.1:1/\"}\n"
            #expect(throws: ConfigError.self) { try ConfigLoader.parse(text, file: "t.yml", directory: directory.path) }
            do {
                _ = try ConfigLoader.parse(text, file: "t.yml", directory: directory.path)
            } catch let error as ConfigError {
                #expect(error.problems.map(\.message) == [said])
            }
        }
    }

    /// insecure_skip_verify is honoured, as blackbox does, and warned about.
    @Test func insecureSkipVerifyIsHonouredWithAWarning() throws {
        let config = try load("modules:\n  m: {prober: http, http: {tls_config: {insecure_skip_verify: true}}}\n")
        #expect(config.probeModules["m"]?.insecureSkipVerify == true)
        #expect(config.warnings.contains { $0.message.contains("does not verify certificates") })
    }

    @Test func bodySizeLimitReadsBlackboxSizes() throws {
        let sizes = ["512KB": 512 << 10, "10MiB": 10 << 20, "1GB": 1 << 30, "2048": 2048, "1.5KB": 1536, "64B": 64]
        for (text, bytes) in sizes {
            let config = try load("modules: {m: {prober: http, http: {body_size_limit: \(text)}}}\n")
            #expect(config.probeModules["m"]?.bodySizeLimit == bytes, "\(text)")
        }
        #expect(try load("modules: {m: {prober: http, http: {body_size_limit: 0}}}\n").probeModules["m"]?.bodySizeLimit == nil)
        for bad in ["ten", "10XB", "1.2.3MB", "-5MB", "99999999PB", "KB"] {
            #expect(
                problems("modules: {m: {prober: http, http: {body_size_limit: \"\(bad)\"}}}\n").first?.contains(
                    "modules.m.http.body_size_limit: \"\(bad)\" is not a size") == true, "\(bad)")
        }
    }

    @Test func readsDNSModulesAndRefusesWhatItCannotAsk() throws {
        let config = try load(
            """
            modules:
              dns_soa:
                prober: dns
                dns:
                  query_name: example.com
                  query_type: soa
                  transport_protocol: tcp
                  recursion_desired: false
                  valid_rcodes: [NOERROR, NXDOMAIN]
                  validate_answer_rrs: {fail_if_not_matches_regexp: ["SOA"]}
            """)
        let dns = try #require(config.probeModules["dns_soa"]?.dns)
        #expect(config.probeModules["dns_soa"]?.kind == .dns)
        #expect(dns.queryName == "example.com" && dns.queryType == "SOA" && dns.overTCP && !dns.recursionDesired)
        #expect(dns.validRcodes == ["NOERROR", "NXDOMAIN"])
        #expect(dns.answer.failIfNotMatches == ["SOA"])
        #expect(problems("modules: {d: {prober: dns, dns: {query_type: A}}}\n").first?.contains("modules.d.dns.query_name: is missing") == true)
        #expect(problems("modules: {d: {prober: dns}}\n").first?.contains("modules.d.dns.query_name: is missing") == true)
        #expect(problems("modules: {d: {prober: dns, dns: {query_name: x, valid_rcodes: [FINE]}}}\n").first?.contains("\"FINE\" is not an rcode") == true)
        #expect(problems("modules: {d: {prober: dns, dns: {query_name: x, query_type: BOGUS}}}\n").first?.contains("is not a record type") == true)
    }

    @Test func recordChecksReadAsBlackboxExporterReadsThem() {
        var checks = DNSModuleSettings.RecordChecks()
        checks.failIfAllMatch = ["127\\.0\\.0\\.[12]$"]
        // blackbox_exporter fails this check when *not* every record matches.
        #expect(checks.problem(["a. 300 IN A 127.0.0.1", "a. 300 IN A 127.0.0.2"]) == nil)
        #expect(checks.problem(["a. 300 IN A 127.0.0.1", "a. 300 IN A 10.0.0.2"]) != nil)
        checks = DNSModuleSettings.RecordChecks()
        checks.failIfNoneMatches = ["10\\."]
        #expect(checks.problem([]) != nil)
        #expect(checks.problem(["a. 300 IN A 127.0.0.1"]) != nil)
        #expect(checks.problem(["a. 300 IN A 127.0.0.1", "a. 300 IN A 10.0.0.2"]) == nil)
    }

    @Test func readsTLSVersionsClientCertificatesServerNamesAndProxies() throws {
        let directory = FileManager.default.temporaryDirectory
        let pem = directory.appendingPathComponent("client-\(UUID().uuidString).pem")
        try "not checked here".write(to: pem, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: pem) }
        let config = try load(
            """
            modules:
              m:
                prober: http
                http:
                  tls_config: {min_version: TLS12, max_version: TLS13, cert_file: "\(pem.path)", key_file: "\(pem.path)", server_name: api.example.com}
                  proxy_url: "http://127.0.0.1:3128/"
                  no_proxy: "localhost,127.0.0.1"
                  proxy_connect_header: {Proxy-Authorization: ["Basic eDp5"]}
                  enable_http2: false
                  authorization: {type: Token, credentials: s3cret}
            """)
        let module = try #require(config.probeModules["m"])
        #expect(module.tlsMinimumMinor == 2 && module.tlsMaximumMinor == 3)
        #expect(module.clientCertificate == ProbeModule.ClientCertificate(certificate: pem.path, key: pem.path))
        #expect(module.serverName == "api.example.com")
        #expect(module.proxyURL == "http://127.0.0.1:3128/" && module.noProxy == "localhost,127.0.0.1")
        #expect(module.proxyHeaders == [HeaderField("Proxy-Authorization", "Basic eDp5")])
        #expect(module.forbidsHTTP2)
        #expect(module.headers.contains(HeaderField("Authorization", "Token s3cret")))
        #expect(problems("modules: {m: {prober: http, http: {tls_config: {min_version: SSL3}}}}\n").first?.contains("is not a TLS version") == true)
        #expect(problems("modules: {m: {prober: http, http: {tls_config: {cert_file: x}}}}\n").first?.contains("cert_file and key_file go together") == true)
        #expect(problems("modules: {m: {prober: http, http: {enable_http3: true}}}\n").first?.contains("speaks no HTTP/3") == true)
        #expect(problems("modules: {m: {prober: http, http: {no_proxy: x}}}\n").first?.contains("only applies with proxy_url") == true)
        #expect(
            problems("modules: {m: {prober: http, http: {oauth2: {client_id: x}}}}\n") == [
                "blackbox.yml:1:44: modules.m.http.oauth2.token_url: is missing", "blackbox.yml:1:44: modules.m.http.oauth2.client_secret: is missing",
            ])
        let oauth = try load("modules: {m: {prober: http, http: {oauth2: {client_id: c, client_secret: s, token_url: \"http://127.0.0.1:1/t\"}}}}\n")
        var expected = OAuth2ClientCredentials(tokenURL: "http://127.0.0.1:1/t", clientID: "c", clientSecret: "s", scopes: [])
        expected.connection.proxy = ""  // no proxy unless told, as blackbox_exporter
        #expect(oauth.probeModules["m"]?.oauth2 == expected)
        let tokenConnection = try load(
            """
            modules:
              m:
                prober: http
                http:
                  oauth2:
                    {client_id: c, client_secret: s, token_url: "https://127.0.0.1:1/t", proxy_url: "http://127.0.0.1:3128/",
                     tls_config: {ca_file: "\(pem.path)", cert_file: "\(pem.path)", key_file: "\(pem.path)", server_name: auth.test, max_version: TLS12}}
            """
        ).probeModules["m"]?.oauth2?.connection
        #expect(tokenConnection?.caFile == pem.path && tokenConnection?.clientCertificateFile == pem.path && tokenConnection?.clientKeyFile == pem.path)
        #expect(tokenConnection?.serverName == "auth.test" && tokenConnection?.tlsMaximumMinor == 2)
        #expect(tokenConnection?.proxy == "http://127.0.0.1:3128/")
        #expect(
            problems(
                "modules: {m: {prober: http, http: {oauth2: {client_id: c, client_secret: s, token_url: \"http://127.0.0.1:1/t\", proxy_url: \"ftp://x\"}}}}\n"
            )
            .first?.contains("modules.m.http.oauth2.proxy_url") == true)
        #expect(
            problems(
                "modules: {m: {prober: http, http: {oauth2: {client_id: c, client_secret: s, token_url: \"http://127.0.0.1:1/t\", tls_config: {min_version: SSL3}}}}}\n"
            )
            .first?.contains("modules.m.http.oauth2.tls_config.min_version") == true)
        let audience = try load(
            "modules: {m: {prober: http, http: {oauth2: {client_id: c, client_secret: s, token_url: \"http://127.0.0.1:1/t\", endpoint_params: {audience: api}}}}}\n"
        )
        #expect(audience.probeModules["m"]?.oauth2?.endpointParams == ["audience": "api"])
        #expect(
            problems(
                "modules: {m: {prober: http, http: {oauth2: {client_id: c, client_secret: s, token_url: \"http://127.0.0.1:1/t\", endpoint_params: [a]}}}}\n"
            )
            .first?.contains("modules.m.http.oauth2.endpoint_params") == true)
        let v4 = try load("modules: {m: {prober: http, http: {preferred_ip_protocol: ip4, ip_protocol_fallback: false}}}\n")
        #expect(v4.probeModules["m"]?.onlyIPVersion == 4)
    }

    @Test func aBadReloadKeepsTheModulesThatServe() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bb-reload-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let blackbox = directory.appendingPathComponent("blackbox.yml")
        let config = directory.appendingPathComponent("lookout.yml")
        try "modules: {http_2xx: {prober: http, timeout: 3s}}\n".write(to: blackbox, atomically: true, encoding: .utf8)
        try "probe_modules_file: blackbox.yml\nsources: [{name: a, url: \"http://127.0.0.1:1/\"}]\n".write(to: config, atomically: true, encoding: .utf8)
        let monitor = Monitor(config: try ConfigLoader.load(path: config.path, environment: [:]), configPath: config.path, logger: Logger(label: "test"))
        monitor.start()
        // The blackbox file breaks: a bad regex and an unknown key.
        try "modules: {http_2xx: {prober: http, http: {fail_if_body_matches_regexp: [\"(\"], nonsense: 1}}}\n".write(
            to: blackbox, atomically: true, encoding: .utf8)
        guard case .refused(let problems) = monitor.reloadConfig() else {
            Issue.record("a reload with a broken blackbox file was applied")
            return
        }
        #expect(problems.contains { $0.contains("is not a regular expression") })
        #expect(monitor.config.probeModules["http_2xx"]?.timeout == .seconds(3))
    }

    /// blackbox 0.24's `http_headers`: values, secrets and files, each added to every request.
    @Test func readsHTTPHeadersFromValuesSecretsAndFiles() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bb-headers-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("key.txt")
        try "from-file\n".write(to: file, atomically: true, encoding: .utf8)
        let config = try load(
            "modules:\n  m: {prober: http, http: {http_headers: {X-Api-Key: {values: [a, b], secrets: [s], files: [\"\(file.path)\"]}}}}\n")
        let headers = try #require(config.probeModules["m"]?.headers)
        #expect(headers.filter { $0.name == "X-Api-Key" }.map(\.value) == ["a", "b", "s", "from-file"])
        #expect(
            problems("modules:\n  m: {prober: http, http: {http_headers: {X-A: {files: [/nonexistent/x]}}}}\n").first?.contains("cannot read /nonexistent/x")
                == true)
        let proxied = try load("modules:\n  m: {prober: http, http: {proxy_from_environment: true}}\n")
        #expect(proxied.probeModules["m"]?.proxyFromEnvironment == true)
    }

    /// Go's `ProxyFromEnvironment`: the scheme's variable, upper case first; never for loopback
    /// or localhost; `NO_PROXY` names, domains and ports; no HTTP_PROXY under CGI.
    @Test func picksTheProxyAsGoDoes() {
        let environment = [
            "HTTP_PROXY": "proxy.test:3128", "https_proxy": "http://secure-proxy.test:3129", "NO_PROXY": "internal.test, .corp.test, api.test:8443",
        ]
        #expect(EnvironmentProxy.proxy(for: "http://example.com/", environment: environment) == "http://proxy.test:3128")
        #expect(EnvironmentProxy.proxy(for: "https://example.com/", environment: environment) == "http://secure-proxy.test:3129")
        #expect(EnvironmentProxy.proxy(for: "http://127.0.0.1:8080/", environment: environment) == nil)
        #expect(EnvironmentProxy.proxy(for: "http://localhost/", environment: environment) == nil)
        #expect(EnvironmentProxy.proxy(for: "http://[::1]:80/", environment: environment) == nil)
        #expect(EnvironmentProxy.proxy(for: "http://internal.test/", environment: environment) == nil)
        #expect(EnvironmentProxy.proxy(for: "http://a.internal.test/", environment: environment) == nil)
        #expect(EnvironmentProxy.proxy(for: "http://b.corp.test/", environment: environment) == nil)
        #expect(EnvironmentProxy.proxy(for: "http://corp.test/", environment: environment) == "http://proxy.test:3128")
        #expect(EnvironmentProxy.proxy(for: "https://api.test:8443/", environment: environment) == nil)
        #expect(EnvironmentProxy.proxy(for: "https://api.test/", environment: environment) == "http://secure-proxy.test:3129")
        #expect(EnvironmentProxy.proxy(for: "http://example.com/", environment: ["HTTP_PROXY": "p.test:1", "REQUEST_METHOD": "GET"]) == nil)
        #expect(EnvironmentProxy.proxy(for: "http://example.com/", environment: ["http_proxy": "p.test:1", "NO_PROXY": "*"]) == nil)
        #expect(EnvironmentProxy.proxy(for: "http://example.com/", environment: [:]) == nil)
    }

    /// YAML merge keys, which blackbox_exporter's yaml.v2 reads: a module's own keys win over
    /// merged ones, and merges nest.
    @Test func readsMergeKeysAsBlackboxDoes() throws {
        let config = try load(
            """
            modules:
              base: &base
                prober: http
                timeout: 5s
                http: &basehttp {valid_status_codes: [200], method: GET}
              derived:
                <<: *base
                timeout: 3s
              head:
                <<: [*base]
                http:
                  <<: *basehttp
                  method: HEAD
            """)
        #expect(config.probeModules["derived"]?.timeout == .seconds(3))
        #expect(config.probeModules["derived"]?.kind == .http)
        #expect(config.probeModules["head"]?.timeout == .seconds(5))
        #expect(config.probeModules["head"]?.method == "HEAD")
        #expect(config.probeModules["base"]?.method == "GET")
    }

    /// Of two merged mappings the earlier wins, a key unknown both in the mapping and in what it
    /// merges is told once, and a quoted `<<` is a key of that name, not a merge.
    @Test func theEarlierMergeWinsAndAnUnknownKeyIsToldOnce() throws {
        let config = try load(
            """
            modules:
              m: {<<: [{prober: http, timeout: 2s}, {prober: tcp, timeout: 9s, http: {method: HEAD}}]}
            """)
        #expect(config.probeModules["m"]?.kind == .http)
        #expect(config.probeModules["m"]?.timeout == .seconds(2))
        #expect(config.probeModules["m"]?.method == "HEAD")
        let found = problems(
            """
            modules:
              m: {<<: {prober: http, colour: red}, colour: blue}
              q: {prober: http, "<<": {timeout: 1s}}
            """)
        #expect(found.filter { $0.contains("unknown key \"colour\"") }.count == 1, "\(found)")
        #expect(found.contains { $0.contains("unknown key \"<<\"") }, "\(found)")
    }

    @Test func aMergeBombIsCutWithAProblem() {
        var yaml = "l0: &l0 {a: 1, b: 2, c: 3, d: 4, e: 5, f: 6, g: 7, h: 8, i: 9, j: 10}\n"
        for level in 1...8 { yaml += "l\(level): &l\(level) {<<: [" + Array(repeating: "*l\(level - 1)", count: 10).joined(separator: ", ") + "]}\n" }
        yaml += "modules:\n  m: {prober: http, <<: *l8}\n"
        #expect(problems(yaml).contains { $0.contains("merge keys (<<) bring in more than 10000 keys") }, "\(problems(yaml))")
    }

    /// blackbox 0.23's older spelling, and a CA file that is not there yet: both read as
    /// blackbox reads them (Debian's own example file has both).
    @Test func readsOlderSpellingsAndCAFilesMountedLater() throws {
        let config = try load(
            """
            modules:
              m: {prober: http, http: {no_follow_redirects: true, tls_config: {ca_file: /nonexistent/ca.crt}}}
            """)
        #expect(config.probeModules["m"]?.followRedirects == false)
        #expect(config.probeModules["m"]?.caFile == "/nonexistent/ca.crt")
        #expect(config.warnings.contains { $0.path.hasSuffix("no_follow_redirects") && $0.message.contains("write follow_redirects: false") })
        #expect(config.warnings.contains { $0.message.contains("/nonexistent/ca.crt does not exist") })
    }

    /// A pattern repeated by aliases compiles once, and the file's patterns are capped, every
    /// alias counted, with the place the cap was reached.
    @Test func aliasesCannotMakeGigabytesOfPatterns() {
        let pattern = "^" + String(repeating: "a", count: 20_000) + "$"
        let yaml = "modules:\n  m: {prober: http, http: {fail_if_body_matches_regexp: [&p '\(pattern)'" + String(repeating: ", *p", count: 5_000) + "]}}\n"
        let found = problems(yaml)
        #expect(found.count == 1, "\(found.map { $0.prefix(200) })")
        #expect(
            found.first?.contains("modules.m.http.fail_if_body_matches_regexp[52]: the regular expressions of blackbox.yml add up to more than 1 MiB") == true)
    }

    /// What backtracking engines have and Go's syntax has not is refused with where and why.
    @Test func refusesBackreferencesWithTheirPlace() {
        #expect(
            problems(#"modules: {m: {prober: http, http: {fail_if_body_matches_regexp: ['^(a)\1$']}}}"#).first?.contains(
                #"modules.m.http.fail_if_body_matches_regexp[0]: "^(a)\1$" is not a regular expression in Go's syntax (RE2): invalid escape sequence \1 at offset 4 (backreferences"#
            )
                == true)
    }
}
