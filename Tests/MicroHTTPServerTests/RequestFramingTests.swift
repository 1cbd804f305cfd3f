import TestSupport
import Testing

@testable import MicroHTTPServer

/// A body delimited two ways is refused before it is read (RFC 9112 sections 6.1 and 6.3): a
/// proxy in front that believed the other length would take the rest for a request of its own.
@Suite("request framing")
struct RequestFramingTests {
    @Test(arguments: [
        ("Content-Length: 2\r\nContent-Length: 5000\r\n", "the request's Content-Length fields disagree"),
        ("Content-Length: 4\r\nTransfer-Encoding: chunked\r\n", "a request with both Content-Length and Transfer-Encoding is refused"),
        ("Transfer-Encoding: chunked\r\ncontent-length: 4\r\n", "a request with both Content-Length and Transfer-Encoding is refused"),
    ])
    func aBodyDelimitedTwoWaysIsRefusedAndTheConnectionClosed(fields: String, message: String) async throws {
        let server = try makeServer()
        let socket = try RawSocket(port: server.port)
        // A second request follows in the same bytes: it must never be answered.
        socket.send("POST /echo HTTP/1.1\r\nHost: x\r\n\(fields)\r\nok\r\n\r\nGET /ok HTTP/1.1\r\nHost: x\r\n\r\n")
        let answer = await socket.readUntilClosed(deadline: .now + .seconds(30))
        #expect(answer.closed)
        #expect(answer.text.hasPrefix("HTTP/1.1 400 "), "\(answer.text)")
        #expect(answer.text.hasSuffix("\r\n\r\n\(message)\n"), "\(answer.text)")
        #expect(!answer.text.contains("ok\n"), "\(answer.text)")
        await server.stop()
    }

    @Test func oneLengthRepeatedIsOneLength() async throws {
        let server = try makeServer()
        let socket = try RawSocket(port: server.port)
        socket.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\ncontent-length: 02\r\nConnection: close\r\n\r\nok")
        let answer = await socket.readUntilClosed(deadline: .now + .seconds(30))
        #expect(answer.text.hasPrefix("HTTP/1.1 200 "), "\(answer.text)")
        #expect(answer.text.hasSuffix("got 2 bytes: ok"), "\(answer.text)")
        await server.stop()
    }

    @Test(
        arguments: [
            ([("Content-Length", "12")], nil),
            ([("Transfer-Encoding", "chunked")], nil),
            ([("Content-Length", " 7 "), ("content-length", "007")], nil),
            ([("Content-Length", "7"), ("Content-Length", "8")], "the request's Content-Length fields disagree"),
            ([("Content-Length", "7, 8")], "the request's Content-Length fields disagree"),
            ([("Content-Length", "+7")], "Content-Length is not a number"),
            ([("Content-Length", "")], "Content-Length is not a number"),
            ([("Content-Length", "1"), ("Transfer-Encoding", "gzip, chunked")], "a request with both Content-Length and Transfer-Encoding is refused"),
        ] as [([(String, String)], String?)])
    func framingProblems(fields: [(String, String)], problem: String?) {
        var headers = HTTPHeaders()
        for (name, value) in fields { headers.add(name, value) }
        #expect(headers.framingProblem == problem)
    }
}
