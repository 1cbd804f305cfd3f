import Foundation
import TestSupport
import Testing

/// `lookout status` against a hostile server (a plain file server on loopback, standing in for
/// one): escape sequences, BEL, NUL and a right-to-left override in its strings are spelled out,
/// never written to the terminal as they are.
@Suite("hostile server text on the terminal")
struct HostileServerTextEndToEndTests {
    @Test func statusSpellsOutControlCharacters() async throws {
        let directory = try makeTemporaryDirectory("hostile-status")
        defer { try? FileManager.default.removeItem(at: directory) }
        let api = directory.appendingPathComponent("api/v1")
        try FileManager.default.createDirectory(at: api, withIntermediateDirectories: true)
        // JSON escapes decode to the raw characters: ESC [2J (clear screen), OSC title, BEL, NUL, RLO.
        let hostile = #"x\u001b[2J\u001b]0;pwned\u0007\u0000\u202Eevil"#
        try """
        {"status": "degraded\(hostile)", "alerts_firing": 1, "sources": [
          {"name": "acme\(hostile)", "state": "down", "incident": {"down_for": "4m", "cause": {"category": "server_error", "reason": "http_503", "message": "said \(hostile)"}}}
        ]}
        """.write(to: api.appendingPathComponent("status"), atomically: true, encoding: .utf8)
        let server = try ChildProcess("/usr/bin/python3", ["-u", "-m", "http.server", "0", "--bind", "127.0.0.1", "--directory", directory.path])
        let port = try await server.waitFor(#"port (\d+)"#)
        let result = try await runTool(ChildProcess.binDirectory.appendingPathComponent("lookout").path, ["status", "--url", "http://127.0.0.1:\(port)"])
        #expect(result.output.contains("acme"), "\(result.output)")
        for raw in ["\u{1B}", "\u{07}", "\u{0}", "\u{202E}"] {
            #expect(!result.output.contains(raw), "a raw \(raw.unicodeScalars.first!.value) reached the terminal")
        }
        #expect(result.output.contains("^[[2J") && result.output.contains("\\u202E"))
        server.send(SIGTERM)
    }
}
