import Foundation
import ResilientHTTP
import TestSupport
import Testing

/// Email through a real SMTP server on loopback (aiosmtpd, Debian's python3-aiosmtpd): STARTTLS
/// with a test certificate, AUTH, two recipients; a plain-text and an HTML part, a subject that
/// fits a phone's notification, one mail when the incident fires and one when it resolves.
@Suite("email end to end")
struct EmailEndToEndTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test func anIncidentIsMailedWhenItFiresAndWhenItResolves() async throws {
        let directory = try makeTemporaryDirectory("email")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (cert, key) = try makeSelfSignedCertificate(in: directory)
        let mail = directory.appendingPathComponent("mail")
        try FileManager.default.createDirectory(at: mail, withIntermediateDirectories: true)
        let port = closedPort()
        let smtp = try ChildProcess(
            "/usr/bin/python3",
            [
                Self.root.appendingPathComponent("Tests/Support/Scripts/smtp-server.py").path, "--port", "\(port)", "--cert", cert, "--key", key,
                "--dir", mail.path, "--user", "lookout", "--password", "mail-s3cret",
            ])
        _ = try await smtp.waitFor(#"listening (\d+)"#)
        defer { smtp.send(SIGKILL) }

        let (sim, base) = try await startSimulator()
        try "mail-s3cret\n".write(to: directory.appendingPathComponent("smtp.password"), atomically: true, encoding: .utf8)
        let config = directory.appendingPathComponent("lookout.yml")
        try """
        listen: 127.0.0.1:0
        database: \(directory.path)/lookout.sqlite
        external_url: https://status.example.test
        defaults: {interval: 200ms, timeout: 2s, retry: {server_error: {max_attempts: 1}}, circuit_breaker: {failure_threshold: 1000}}
        sources:
          - {name: billing, url: "\(base)/flaky/mail-\(UUID().uuidString.prefix(8))?fail=15&code=503"}
        alerts:
          evaluation_interval: 200ms
          rules:
            - {name: SourceDown, severity: critical, expr: up == 0}
          hooks:
            - name: oncall-mail
              type: email
              url: smtp://127.0.0.1:\(port)
              from: lookout@example.test
              to: [oncall@example.test, lead@example.test]
              username: lookout
              password_file: smtp.password
              ca_file: \(cert)
              group_wait: 0s
        """.write(to: config, atomically: true, encoding: .utf8)
        let (lookout, _) = try await startLookout(config: config)
        let files = try await eventually(deadline: .seconds(60), "two mails") { () -> [URL]? in
            let files = try FileManager.default.contentsOfDirectory(at: mail, includingPropertiesForKeys: nil).filter { $0.pathExtension == "eml" }
            return files.count >= 2 ? files.sorted { $0.lastPathComponent < $1.lastPathComponent } : nil
        }
        #expect(files.count == 2)
        for (index, file) in files.enumerated() {
            let raw = try String(contentsOf: file, encoding: .utf8)
            let envelope =
                try JSONSerialization.jsonObject(with: Data(contentsOf: file.deletingPathExtension().appendingPathExtension("json"))) as? [String: Any]
            #expect(envelope?["tls"] as? Bool == true)
            #expect(envelope?["authenticated"] as? Bool == true)
            #expect(envelope?["to"] as? [String] == ["oncall@example.test", "lead@example.test"])
            #expect(raw.contains("multipart/alternative"))
            #expect(raw.contains("text/plain"))
            #expect(raw.contains("text/html"))
            let header = try #require(raw.split(separator: "\r\n").first { $0.hasPrefix("Subject: ") }.map { String($0.dropFirst(9)) })
            // An RFC 2047 encoded word when it is not plain ASCII (the "…" of a cut subject).
            var subject = header
            if header.hasPrefix("=?UTF-8?B?"), header.hasSuffix("?="), let data = Data(base64Encoded: String(header.dropFirst(10).dropLast(2))) {
                subject = String(decoding: data, as: UTF8.self)
            }
            #expect(subject.count <= 78)
            #expect(subject.hasPrefix(index == 0 ? "DOWN billing: the server answered 503" : "RESOLVED billing recovered"), "\(subject)")
        }
        #expect(!(try String(contentsOf: directory.appendingPathComponent("lookout.sqlite"), encoding: .isoLatin1)).contains("mail-s3cret"))
        #expect(try await lookout.terminate() == 0)

        // `lookout hooks test` sends through the provider's own delivery: a third mail.
        let binary = ChildProcess.binDirectory.appendingPathComponent("lookout").path
        let tested = try await runTool(binary, ["hooks", "test", "oncall-mail", "--config", config.path])
        #expect(tested.status == 0, "\(tested.output)")
        #expect(tested.output.contains("hook oncall-mail (email): answered"), "\(tested.output)")
        #expect(tested.output.contains("SMTP 250"), "\(tested.output)")
        let all = try FileManager.default.contentsOfDirectory(at: mail, includingPropertiesForKeys: nil).filter { $0.pathExtension == "eml" }
        #expect(all.count == 3)
        #expect(try await sim.terminate() == 0)
        smtp.send(SIGKILL)
    }
}
