import Foundation
import ResilientHTTP
import TestSupport
import Testing

/// `kind: tcp` and `kind: tls` against real listeners on loopback: a port that accepts is up, a
/// closed one is refused, and a TLS endpoint is up only with a certificate the source trusts,
/// each failure with the reason an HTTP source would give.
@Suite("tcp and tls sources")
struct EndpointKindsEndToEndTests {
    @Test func connectsShakesHandsAndNamesWhatFails() async throws {
        let directory = try makeTemporaryDirectory("endpoint-kinds")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (cert, key) = try makeSelfSignedCertificate(in: directory)
        let (plain, plainBase) = try await startSimulator()
        let (secure, secureBase) = try await startSimulator(["--listen", "127.0.0.1:0", "--tls-cert", cert, "--tls-key", key])
        let plainPort = URLComponents(string: plainBase)!.port!
        let securePort = URLComponents(string: secureBase)!.port!
        let closed = closedPort()
        let lookout = try await InProcessLookout.start(
            """
            defaults: {interval: 1s, timeout: 2s, require_https: true}
            sources:
              - {name: port-open, kind: tcp, url: "tcp://127.0.0.1:\(plainPort)"}
              - {name: port-closed, kind: tcp, url: "tcp://127.0.0.1:\(closed)"}
              - {name: tls-trusted, kind: tls, url: "tls://127.0.0.1:\(securePort)", ca_file: "\(cert)"}
              - {name: tls-untrusted, kind: tls, url: "tls://127.0.0.1:\(securePort)"}
              - {name: tls-on-plain, kind: tls, url: "tls://127.0.0.1:\(plainPort)"}
            """)
        let metrics = try await lookout.metricsOnceProbed(["port-open", "port-closed", "tls-trusted", "tls-untrusted", "tls-on-plain"])
        #expect(metrics.contains(#"lookout_probe_success{source="port-open"} 1"#))
        #expect(metrics.contains(#"lookout_probe_success{source="tls-trusted"} 1"#))
        #expect(metrics.contains(#"lookout_tls_cert_expiry_timestamp_seconds{source="tls-trusted"}"#))
        #expect(metrics.contains(#"lookout_errors_total{source="port-closed",category="transient",reason="connection_refused"}"#))
        #expect(metrics.contains(#"lookout_errors_total{source="tls-untrusted",category="tls_error",reason="cert_invalid"}"#))
        #expect(metrics.contains(#"lookout_errors_total{source="tls-on-plain",category="tls_error",reason="tls_handshake"}"#))
        // Nothing is sent in the clear by a connect-only probe: require_https does not refuse it.
        #expect(!metrics.contains("insecure_blocked"))
        try await lookout.stop()
        #expect(try await plain.terminate() == 0)
        #expect(try await secure.terminate() == 0)
    }

    /// A mail server's certificate behind STARTTLS: smtp:// on a real SMTP server (aiosmtpd)
    /// shakes hands after the greeting and EHLO, and a server that offers no STARTTLS fails
    /// rather than being counted up in the clear.
    @Test func watchesAMailServersCertificateThroughSTARTTLS() async throws {
        let directory = try makeTemporaryDirectory("starttls-kinds")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (cert, key) = try makeSelfSignedCertificate(in: directory)
        let port = closedPort()
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let smtp = try ChildProcess(
            "/usr/bin/python3",
            [
                root.appendingPathComponent("Tests/Support/Scripts/smtp-server.py").path, "--port", "\(port)", "--cert", cert, "--key", key,
                "--dir", directory.path, "--user", "u", "--password", "p",
            ])
        defer { smtp.send(SIGKILL) }
        _ = try await smtp.waitFor(#"listening (\d+)"#)
        let (banner, bannerPort) = try await startBannerServer()
        defer { banner.send(SIGKILL) }
        let lookout = try await InProcessLookout.start(
            """
            defaults: {interval: 1s, timeout: 2s}
            sources:
              - {name: mail-trusted, kind: tls, url: "smtp://127.0.0.1:\(port)", ca_file: "\(cert)"}
              - {name: mail-untrusted, kind: tls, url: "smtp://127.0.0.1:\(port)"}
              - {name: mail-no-starttls, kind: tls, url: "smtp://127.0.0.1:\(bannerPort)", ca_file: "\(cert)"}
            """)
        let metrics = try await lookout.metricsOnceProbed(["mail-trusted", "mail-untrusted", "mail-no-starttls"])
        #expect(metrics.contains(#"lookout_probe_success{source="mail-trusted"} 1"#))
        #expect(metrics.contains(#"lookout_tls_cert_expiry_timestamp_seconds{source="mail-trusted"}"#))
        #expect(metrics.contains(#"lookout_errors_total{source="mail-untrusted",category="tls_error",reason="cert_invalid"}"#))
        #expect(metrics.contains(#"lookout_errors_total{source="mail-no-starttls",category="tls_error",reason="starttls_unavailable"}"#))
        // The banner server saw an EHLO and nothing after it.
        #expect(banner.text.contains("connection from 127.0.0.1"))
        try await lookout.stop()
    }

    /// A PostgreSQL server's certificate: postgres:// asks for TLS with SSLRequest and shakes
    /// hands after the server's S; a server answering N fails, never counted up in the clear.
    @Test func watchesAPostgresCertificateThroughSSLRequest() async throws {
        let directory = try makeTemporaryDirectory("postgres-tls")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (cert, key) = try makeSelfSignedCertificate(in: directory)
        let (server, ports) = try await startBannerServerWithPostgres(cert: cert, key: key)
        defer { server.send(SIGKILL) }
        let refused = closedPort()
        let lookout = try await InProcessLookout.start(
            """
            defaults: {interval: 1s, timeout: 2s}
            sources:
              - {name: pg-trusted, kind: tls, url: "postgres://127.0.0.1:\(ports.postgres)", ca_file: "\(cert)"}
              - {name: pg-untrusted, kind: tls, url: "postgres://127.0.0.1:\(ports.postgres)"}
              - {name: pg-no-tls, kind: tls, url: "postgres://127.0.0.1:\(ports.postgresPlain)", ca_file: "\(cert)"}
              - {name: pg-not-postgres, kind: tls, url: "postgres://127.0.0.1:\(ports.plain)", ca_file: "\(cert)"}
              - {name: pg-refused, kind: tls, url: "postgres://127.0.0.1:\(refused)"}
            """)
        let http = CurlTransport()
        let names = ["pg-trusted", "pg-untrusted", "pg-no-tls", "pg-not-postgres", "pg-refused"]
        let metrics = try await lookout.metricsOnceProbed(names)
        #expect(metrics.contains(#"lookout_probe_success{source="pg-trusted"} 1"#))
        #expect(metrics.contains(#"lookout_tls_cert_expiry_timestamp_seconds{source="pg-trusted"}"#))
        #expect(metrics.contains(#"lookout_errors_total{source="pg-untrusted",category="tls_error",reason="cert_invalid"}"#))
        #expect(metrics.contains(#"lookout_errors_total{source="pg-no-tls",category="tls_error",reason="starttls_unavailable"}"#))
        // The banner server greets with a line where PostgreSQL answers S or N.
        #expect(metrics.contains(#"lookout_errors_total{source="pg-not-postgres",category="invalid_response",reason="unexpected_answer"}"#))
        #expect(metrics.contains(#"lookout_errors_total{source="pg-refused",category="transient",reason="connection_refused"}"#))
        let status = await http.perform(TransferRequest(url: lookout.base + "/api/v1/sources/pg-no-tls", timeout: .patient)).bodyText
        #expect(status.contains("offers no TLS"), "\(status)")
        try await lookout.stop()
    }
}
