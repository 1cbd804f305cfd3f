import Foundation
import ResilientHTTP
import TestSupport
import Testing

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// Rows 3 and 4 of the third attack: what people write for the page and the feeds (an
/// announcement, a maintenance note, the page's title) with control characters, a NUL or a
/// bidirectional override is refused whole, never stored cut or shown raw, and the feeds stay
/// well-formed XML.
@Suite("admin text end to end", .serialized)
struct AdminTextEndToEndTests {
    let http = CurlTransport()

    func post(_ url: String, _ json: String) async -> TransferResult {
        await http.perform(
            TransferRequest(
                url: url, method: "POST", headers: [("Authorization", "Bearer admin-token-0123456789"), ("Content-Type", "application/json")],
                body: Array(json.utf8), timeout: .patient))
    }

    @Test func controlCharactersNULsAndOverridesAreRefusedWhole() async throws {
        let directory = try makeTemporaryDirectory("admin-text")
        defer { try? FileManager.default.removeItem(at: directory) }
        try "admin-token-0123456789\n".write(to: directory.appendingPathComponent("admin.token"), atomically: true, encoding: .utf8)
        let (sim, simBase) = try await startSimulator()
        let config = try writeLookoutConfig(
            in: directory, "admin_token_file: admin.token\nsources:\n  - {name: api, url: \"\(simBase)/ok\", interval: 1h}\n")
        let (lookout, base) = try await startLookout(config: config)
        for (json, message) in [
            (#"{"title": "Deploy\u001b[31m", "message": "m", "state": "investigating"}"#, "title: must not hold control characters (found U+001B)"),
            (#"{"title": "Deploy", "message": "bell\u0007", "state": "investigating"}"#, "message: must not hold control characters (found U+0007)"),
            (#"{"title": "Deploy", "message": "cut\u0000here", "state": "investigating"}"#, "message: must not hold control characters (found U+0000)"),
            (#"{"title": "Deploy \u202Egnp.exe", "message": "m", "state": "investigating"}"#, "title: must not hold bidirectional controls (found U+202E)"),
        ] {
            let answer = await post("\(base)/api/v1/announcements", json)
            #expect(answer.httpStatus == 400 && answer.bodyText.contains(message), "\(json): \(answer.bodyText)")
        }
        let note = await post(
            "\(base)/api/v1/maintenance",
            #"{"sources": ["api"], "starts_at": "2030-01-01T00:00:00Z", "ends_at": "2030-01-01T01:00:00Z", "note": "db\u0000 move"}"#)
        #expect(note.httpStatus == 400 && note.bodyText.contains("note: must not hold control characters (found U+0000)"), "\(note.bodyText)")
        // Several lines are fine where several lines are allowed, and the feeds stay XML.
        let fine = await post("\(base)/api/v1/announcements", #"{"title": "Deploy", "message": "line one\nline two\tend", "state": "investigating"}"#)
        #expect(fine.httpStatus == 201, "\(fine.bodyText)")
        for feed in ["/history.atom", "/history.rss"] {
            let body = await http.perform(TransferRequest(url: base + feed, timeout: .patient)).body
            let parser = XMLParser(data: Data(body))
            #expect(parser.parse(), "\(feed): \(parser.parserError.map { "\($0)" } ?? "")")
            #expect(String(decoding: body, as: UTF8.self).contains("line one"))
        }
        #expect(try await lookout.terminate() == 0)
        // The page's title, in the config: refused with its place.
        let bad = try writeLookoutConfig(
            in: directory, "status_page: {title: \"Status\\x01\\x1b\"}\nsources:\n  - {name: api, url: \"\(simBase)/ok\"}\n")
        let checked = try await runTool(ChildProcess.binDirectory.appendingPathComponent("lookout").path, ["check-config", "--config", bad.path])
        #expect(checked.status == 1 && checked.output.contains("status_page.title: must not hold control characters (found U+0001)"), "\(checked.output)")
        #expect(try await sim.terminate() == 0)
    }
}
