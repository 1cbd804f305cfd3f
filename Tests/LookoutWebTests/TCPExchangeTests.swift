import ClientSocket
import Foundation
import LinearRegex
import LookoutCore
import ResilientHTTP
import TestSupport
import Testing

@testable import TCPExchange

#if canImport(Glibc)
    import Glibc
#endif

/// The line conversation against hostile peers on loopback: one that never ends its line, one
/// that says nothing, one that closes at once; and the `${1}` expansion blackbox uses.
@Suite("tcp query_response")
struct TCPExchangeTests {
    /// A listening socket on a free loopback port whose one connection gets `behave`, on a
    /// thread of its own.
    func peer(_ behave: @escaping @Sendable (Int32) -> Void) throws -> UInt16 {
        let (fd, address) = boundLoopbackSocket()
        #expect(listen(fd, 4) == 0)
        Thread.detachNewThread {
            let connection = accept(fd, nil, nil)
            behave(connection)
            close(connection)
            close(fd)
        }
        return UInt16(bigEndian: address.sin_port)
    }

    @Test func linesAreCutWhereverTheChunksEnd() {
        var lines = LineBuffer()
        lines.append(ArraySlice("220 a\r".utf8))
        #expect(lines.next() == nil && lines.wantsMore)
        lines.append(ArraySlice("\n250-b\n\n250 c".utf8))
        #expect(lines.next() == "220 a")
        #expect(lines.next() == "250-b")
        #expect(lines.next() == "")
        #expect(lines.next() == nil && lines.wantsMore)
        lines.closed = true
        #expect(lines.next() == "250 c")
        #expect(lines.next() == nil && !lines.wantsMore)
    }

    @Test func aLinePastTheLimitEndsTheReading() {
        var lines = LineBuffer()
        lines.append(ArraySlice(repeating: UInt8(ascii: "x"), count: TCPExchange.maxLine + 1))
        #expect(!lines.wantsMore)
        #expect(lines.next() == nil)
    }

    @Test func anEndlessLineIsCutOffNotHeld() async throws {
        let port = try peer { connection in
            let chunk = [UInt8](repeating: UInt8(ascii: "x"), count: 8192)
            // Far past the line limit; the reader stops at it and the peer's writes then fail.
            for _ in 0..<(TCPExchange.maxRead / chunk.count + 64) where send(connection, chunk, chunk.count, Int32(MSG_NOSIGNAL)) > 0 {}
        }
        let outcome = await TCPExchange.run(host: "127.0.0.1", port: port, steps: [.init(expect: "^220")], timeout: .patient)
        #expect(outcome.reason == "line_too_long", "\(outcome.problem ?? "")")
        #expect(outcome.problem?.contains("a line over 64 KiB") == true)
        #expect(outcome.peer == "127.0.0.1")
    }

    /// Short lines past 1 MiB in all, none matching: named as such, not a timeout.
    @Test func tooMuchWithoutTheLineIsAnAnswerTooLarge() async throws {
        let port = try peer { connection in
            let chunk = Array(String(repeating: "250-nothing to see here\r\n", count: 400).utf8)
            for _ in 0..<(2 * TCPExchange.maxRead / chunk.count) where send(connection, chunk, chunk.count, Int32(MSG_NOSIGNAL)) > 0 {}
            var byte: UInt8 = 0
            _ = recv(connection, &byte, 1, 0)
        }
        let outcome = await TCPExchange.run(host: "127.0.0.1", port: port, steps: [.init(expect: "^220")], timeout: .patient)
        #expect(outcome.reason == "answer_too_large", "\(outcome.problem ?? "")")
        #expect(Failure(outcome)?.reason == "answer_too_large")
    }

    @Test func aPeerThatSaysNothingTimesOutAndIsNoRegexFailure() async throws {
        let port = try peer { connection in
            var byte: UInt8 = 0
            _ = recv(connection, &byte, 1, 0)  // until the client goes
        }
        let outcome = await TCPExchange.run(host: "127.0.0.1", port: port, steps: [.init(expect: "^220")], timeout: .milliseconds(300))
        #expect(outcome.reason == "timeout")
        #expect(!outcome.failedDueToRegex)
    }

    @Test func aPeerThatClosesWithoutTheLineIsARegexFailure() async throws {
        let port = try peer { connection in
            let text = Array("hello\r\nSSH-1.99-old\r\n".utf8)
            _ = send(connection, text, text.count, Int32(MSG_NOSIGNAL))
        }
        let outcome = await TCPExchange.run(host: "127.0.0.1", port: port, steps: [.init(expect: "^SSH-2\\.0")], timeout: .patient)
        #expect(outcome.failedDueToRegex)
        #expect(outcome.reason == "regex")
    }

    @Test func aClosedPortIsRefused() async {
        let (fd, address) = boundLoopbackSocket()
        close(fd)  // bound, never listening: refused
        let outcome = await TCPExchange.run(host: "127.0.0.1", port: UInt16(bigEndian: address.sin_port), steps: [], timeout: .seconds(2))
        #expect(outcome.reason == "refused")
    }

    @Test func aPeerThatAcceptsSTARTTLSAndThenSaysNothingTimesOut() async throws {
        let port = try peer { connection in
            let text = Array("220 ready to start TLS\r\n".utf8)
            _ = send(connection, text, text.count, Int32(MSG_NOSIGNAL))
            var byte: UInt8 = 0
            while recv(connection, &byte, 1, 0) > 0 {}  // reads the ClientHello, never answers
        }
        let outcome = await TCPExchange.run(
            host: "127.0.0.1", port: port, steps: [.init(expect: "^220", startTLS: true)], timeout: .milliseconds(300))
        #expect(outcome.reason == "timeout")
        #expect(outcome.tls == nil)
    }

    @Test func aPeerThatAnswersTheHandshakeWithTextFailsIt() async throws {
        let port = try peer { connection in
            var byte: UInt8 = 0
            _ = recv(connection, &byte, 1, 0)
            let text = Array("500 what is this\r\n".utf8)
            _ = send(connection, text, text.count, Int32(MSG_NOSIGNAL))
        }
        let outcome = await TCPExchange.run(host: "127.0.0.1", port: port, steps: [], timeout: .patient, tlsFromStart: true)
        #expect(outcome.reason == "tls")
        #expect(outcome.problem?.hasPrefix("the TLS handshake failed") == true)
        #expect(outcome.tls == nil)
    }

    @Test func aCAFileThatIsNotOneIsSaid() async throws {
        let port = try peer { connection in
            var byte: UInt8 = 0
            _ = recv(connection, &byte, 1, 0)
        }
        var settings = TLSSettings()
        settings.caFile = "/nonexistent/ca.pem"
        let outcome = await TCPExchange.run(host: "127.0.0.1", port: port, steps: [], timeout: .seconds(2), tls: settings, tlsFromStart: true)
        #expect(outcome.reason == "tls")
        #expect(outcome.problem?.hasPrefix("cannot set up TLS") == true)
    }

    @Test func capturesExpandAsGoDoes() throws {
        let regex = try Regexp("^220 (?P<host>[^ ]+) (ESMTP)")
        let match = try #require(regex.firstMatch(in: "220 mail.test ESMTP ready"))
        #expect(TCPExchange.expand("EHLO ${1} $2 ${host} $$ ${9}", match: match) == "EHLO mail.test ESMTP mail.test $ ")
        // What Go keeps as text, and what it reads as a name no group has (found by the fuzzer:
        // `${-6}` trapped).
        #expect(TCPExchange.expand("a${-1}b $* ${1 $01 $1x ${nosuch} $", match: match) == "a${-1}b $* ${1    $")
        // A capture repeated 2,000 times is refused as it grows, never built whole.
        let big = try #require(try Regexp("^(.*)$").firstMatch(in: String(repeating: "x", count: 60_000)))
        #expect(TCPExchange.expand(String(repeating: "${1}", count: 2000), match: big, limit: TCPExchange.maxSend) == nil)
        #expect(TCPExchange.expand("${1}", match: big, limit: TCPExchange.maxSend)?.utf8.count == 60_000)
    }
}
