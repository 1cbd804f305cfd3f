import TestSupport
import Testing

@testable import MicroHTTPServer

/// A body delimited two ways, or in a way this server cannot follow, is refused before it is
/// read (RFC 9112 sections 6.1 and 6.3): a proxy in front that believed another length would
/// take the rest for a request of its own.
@Suite("request framing")
struct RequestFramingTests {
    /// What a fresh server answers `raw`, read until it closes the connection.
    func exchange(_ raw: String) async throws -> (text: String, closed: Bool) {
        let server = try makeServer()
        let socket = try RawSocket(port: server.port)
        socket.send(raw)
        let answer = await socket.readUntilClosed(deadline: .now + .seconds(30))
        await server.stop()
        return answer
    }

    @Test(arguments: [
        ("Content-Length: 2\r\nContent-Length: 5000\r\n", 400),
        ("Content-Length: 4\r\nTransfer-Encoding: chunked\r\n", 400),
        ("Transfer-Encoding: chunked\r\ncontent-length: 4\r\n", 400),
        ("Transfer-Encoding: chunked, identity\r\n", 400),
        ("Transfer-Encoding: gzip, chunked\r\n", 501),
    ])
    func aBodyDelimitedTwoWaysIsRefusedAndTheConnectionClosed(fields: String, status: Int) async throws {
        // A second request follows in the same bytes: it must never be answered.
        let answer = try await exchange("POST /echo HTTP/1.1\r\nHost: x\r\n\(fields)\r\nok\r\n\r\nGET /ok HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(answer.closed)
        #expect(answer.text.hasPrefix("HTTP/1.1 \(status) "), "\(answer.text)")
        #expect(!answer.text.contains("ok\n") && !answer.text.contains("got "), "\(answer.text)")
    }

    @Test func oneLengthRepeatedIsOneLength() async throws {
        let answer = try await exchange("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\ncontent-length: 02\r\nConnection: close\r\n\r\nok")
        #expect(answer.text.hasPrefix("HTTP/1.1 200 "), "\(answer.text)")
        #expect(answer.text.hasSuffix("got 2 bytes: ok"), "\(answer.text)")
    }

    /// A length past what an Int holds is past any limit: answered 413 at the headers, not
    /// drained until the deadline.
    @Test func aLengthPastAnyNumberIsTooLarge() async throws {
        let answer = try await exchange("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 18446744073709551614\r\n\r\n")
        #expect(answer.text.hasPrefix("HTTP/1.1 413 "), "\(answer.text)")
    }

    @Test(
        arguments: [
            ([("Content-Length", "12")], nil),
            ([("Transfer-Encoding", "chunked")], nil),
            ([("Transfer-Encoding", " Chunked ")], nil),
            ([("Content-Length", " 7 "), ("content-length", "007")], nil),
            ([("Content-Length", "7"), ("Content-Length", "8")], "400 the request's Content-Length fields disagree"),
            ([("Content-Length", "7, 8")], "400 the request's Content-Length fields disagree"),
            ([("Content-Length", "+7")], "400 Content-Length is not a number"),
            ([("Content-Length", "")], "400 Content-Length is not a number"),
            ([("Content-Length", "1"), ("Transfer-Encoding", "chunked")], "400 a request with both Content-Length and Transfer-Encoding is refused"),
            ([("Transfer-Encoding", "chunked"), ("Transfer-Encoding", "chunked")], "501 Transfer-Encoding chunked, chunked: only chunked is understood"),
            ([("Transfer-Encoding", "gzip, chunked")], "501 Transfer-Encoding gzip, chunked: only chunked is understood"),
            ([("Transfer-Encoding", "chunked, gzip")], "400 Transfer-Encoding chunked, gzip does not end in chunked, so the body's length is unknown"),
            ([("Transfer-Encoding", "identity")], "400 Transfer-Encoding identity does not end in chunked, so the body's length is unknown"),
            ([("Transfer-Encoding", "chun\u{212A}ed")], "400 Transfer-Encoding chun\u{212A}ed does not end in chunked, so the body's length is unknown"),
            ([("Transfer-Encoding", "chunked,")], "400 Transfer-Encoding chunked, does not end in chunked, so the body's length is unknown"),
        ] as [([(String, String)], String?)])
    func framingProblems(fields: [(String, String)], problem: String?) {
        var headers = HTTPHeaders()
        for (name, value) in fields { headers.add(name, value) }
        let shown: String? =
            switch headers.bodyFraming {
            case .failure(let refused): "\(refused.status) \(refused.message)"
            case .success: nil
            }
        #expect(shown == problem)
    }

    @Test(
        arguments: [
            ([("Content-Length", "12")], 12), ([("Content-Length", " 007 ")], 7), ([("Content-Length", "18446744073709551614")], Int.max),
            ([("content-length", "3"), ("CONTENT-LENGTH", "03")], 3), ([("Transfer-Encoding", "Chunked")], nil), ([("Host", "x")], nil),
        ] as [([(String, String)], Int?)])
    func theAnnouncedLength(fields: [(String, String)], length: Int?) {
        var headers = HTTPHeaders()
        for (name, value) in fields { headers.add(name, value) }
        #expect(headers.bodyFraming == .success(length))
    }
}
