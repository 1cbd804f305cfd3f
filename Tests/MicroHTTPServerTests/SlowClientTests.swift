import Foundation
import ResilientHTTP
import TestSupport
import Testing

@testable import MicroHTTPServer

/// Slow and oversized clients (issue "Hostile input…", rows 7 and 11): a client that drips its
/// headers is closed at the request deadline however steadily it sends, sooner when connection
/// slots run short; a handler at work is never cut off; a streamed body past the limit gets 413.
@Suite("slow and oversized clients")
struct SlowClientTests {
    let client = CurlTransport()

    func start(limit: Int = 64, bodyLimit: Int = 1024, gate: Gate = Gate(), entered: Gate = Gate()) throws -> HTTPServer {
        var router = Router()
        router.get("/ok") { _ in .text("ok\n") }
        router.post("/echo") { request in .text("got \(request.body.count) bytes") }
        router.get("/gated") { _ in
            entered.open()
            await gate.wait()
            return .text("released\n")
        }
        let server = HTTPServer(
            configuration: .init(port: 0, connectionLimit: limit, connectionTimeoutSeconds: 60, requestDeadlineSeconds: 10, maxRequestBodyBytes: bodyLimit),
            router: router)
        try server.start()
        return server
    }

    @Test func aClientThatDripsItsHeadersIsClosedAtTheDeadline() async throws {
        let server = try start()
        // Times from before the connection opened: however long a loaded machine takes to
        // register it, it is at most 5 s old at `opened + 5 s` (the first check), and at least
        // 11 s old at `now + 11 s` (the second).
        let opened = ContinuousClock.now
        let dripping = try RawSocket(port: server.port)
        dripping.send("GET /ok HTTP/1.1\r\nHost: x\r\n")
        try await eventuallyTrue { server.reaper.openCount == 1 }
        dripping.send("X-Slow: 1\r\n")
        #expect(server.reaper.reap(now: opened + .seconds(5)) == 0)
        #expect(server.reaper.reap(now: .now + .seconds(11)) == 1)
        let outcome = await dripping.readUntilClosed(deadline: .now + .seconds(15))
        #expect(outcome.closed)
        #expect(outcome.text.isEmpty)
        #expect(server.statistics.slowConnectionsClosed == 1)
        // Others are still served (given a loaded machine's patience, not a 10 s default).
        #expect(await client.perform(TransferRequest(url: "http://127.0.0.1:\(server.port)/ok", timeout: .patient)).httpStatus == 200)
        await server.stop()
    }

    @Test func aRequestWhoseHandlerRunsIsNeverCutOff() async throws {
        let gate = Gate()
        let entered = Gate()
        let server = try start(gate: gate, entered: entered)
        let waiting = Task { await client.perform(TransferRequest(url: "http://127.0.0.1:\(server.port)/gated", timeout: .seconds(30))) }
        await entered.wait()
        #expect(server.reaper.reap(now: .now + .seconds(60)) == 0)
        gate.open()
        #expect(await waiting.value.bodyText == "released\n")
        await server.stop()
    }

    @Test func whenSlotsRunShortTheSlowestMakeRoom() async throws {
        let server = try start(limit: 4)
        let first = try RawSocket(port: server.port)
        let second = try RawSocket(port: server.port)
        first.send("GET /ok HTTP/1.1\r\n")
        second.send("GET /ok HTTP/1.1\r\n")
        try await eventuallyTrue { server.reaper.openCount == 2 }
        // Two of four slots taken: the one-second deadline applies, not the ten-second one.
        server.reaper.reap(now: .now + .seconds(2))
        #expect(await first.readUntilClosed(deadline: .now + .seconds(15)).closed)
        #expect(await second.readUntilClosed(deadline: .now + .seconds(15)).closed)
        #expect(server.statistics.slowConnectionsClosed >= 2)
        #expect(await client.perform(TransferRequest(url: "http://127.0.0.1:\(server.port)/ok")).httpStatus == 200)
        await server.stop()
    }

    /// A client that sends its whole body before it reads (no `Expect: 100-continue`, as most
    /// libraries do) still reads the 413: the body is read and dropped, not cut off by a reset
    /// that throws away the answer in the client's receive buffer.
    @Test func aDeclaredBodyPastTheLimitIsReadAndDroppedSoThe413Arrives() async throws {
        let server = try start(bodyLimit: 1 << 20)
        let socket = try RawSocket(port: server.port)
        let body = [UInt8](repeating: 97, count: 4 << 20)
        socket.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: \(body.count)\r\n\r\n")
        let sentWhole = socket.send(body)
        #expect(sentWhole, "the server reset the connection before the body was sent")
        let answer = await socket.readUntilClosed(deadline: .now + .seconds(30))
        #expect(answer.text.hasPrefix("HTTP/1.1 413 "), "\(answer.text)")
        #expect(answer.text.hasSuffix("request body is larger than 1048576 bytes\n"), "\(answer.text)")
        #expect(await client.perform(TransferRequest(url: "http://127.0.0.1:\(server.port)/ok")).httpStatus == 200)
        await server.stop()
    }

    /// A client that waits for `100 Continue` gets the 413 instead, and a body declared past what
    /// is worth draining is refused at its headers: nothing of either is read.
    @Test func aBodyThatWaitsOrIsTooLargeToDrainIsRefusedAtItsHeaders() async throws {
        let server = try start(bodyLimit: 1 << 20)
        for head in [
            "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 2097152\r\nExpect: 100-continue\r\n\r\n",
            "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 10737418240\r\n\r\n",
        ] {
            let socket = try RawSocket(port: server.port)
            socket.send(head)
            let answer = await socket.readUntilClosed(deadline: .now + .seconds(30))
            #expect(answer.text.hasPrefix("HTTP/1.1 413 "), "\(answer.text)")
            #expect(!answer.text.contains("100 Continue"), "\(answer.text)")
        }
        await server.stop()
    }

    @Test func aStreamedBodyOfFiftyMegabytesGets413() async throws {
        let server = try start(bodyLimit: 1 << 20)
        let result = await client.perform(
            TransferRequest(
                url: "http://127.0.0.1:\(server.port)/echo", method: "POST",
                headers: [("Transfer-Encoding", "chunked"), ("Expect", "")],
                body: [UInt8](repeating: 97, count: 50 << 20), timeout: .seconds(60), maxResponseBytes: 4096))
        #expect(result.httpStatus == 413)
        #expect(result.bodyText == "request body is larger than 1048576 bytes\n")
        #expect(await client.perform(TransferRequest(url: "http://127.0.0.1:\(server.port)/ok")).httpStatus == 200)
        await server.stop()
    }
}
