import Foundation
import ResilientHTTP
import TestSupport
import Testing

/// Answers that break HTTP are the server's fault and are not retried (issue "Nothing told is
/// lost…", row 15): an oversized header was "connection failed (curl 27)" and retried, `HTTP/1.1
/// abc` a `bad_url` (our URL), bad chunking a `recv_error` (the network).
@Suite("malformed answers")
struct MalformedAnswerTests {
    let transport = CurlTransport()

    @Test(arguments: [
        ("HTTP/1.1 200 OK\r\nX-Big: \(String(repeating: "a", count: 300_000))\r\nContent-Length: 2\r\n\r\nok", "headers_too_large"),
        ("HTTP/1.1 abc\r\nContent-Length: 2\r\n\r\nok", "malformed_http"),
        ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n", "malformed_http"),
        ("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 9\r\n\r\nnot gzip!", "bad_content_encoding"),
    ])
    func isAnUnexpectedResponseNotRetried(answer: String, reason: String) async throws {
        let server = CannedServer(answer: Array(answer.utf8))
        defer { server.stop() }
        let result = await transport.perform(TransferRequest(url: "http://127.0.0.1:\(server.port)/", timeout: .seconds(60)))
        let failure = try #require(FailureClassifier.classify(result))
        #expect(failure.reason == reason, "curl \(result.curlCode): \(result.curlMessage)")
        #expect(failure.category == .invalidResponse)
        #expect(!failure.category.isRetryable)
    }
}
