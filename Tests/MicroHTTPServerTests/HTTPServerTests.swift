import Foundation
import MicroHTTPServer
import ResilientHTTP
import Synchronization
import TestSupport
import Testing

func makeServer(timeout: Int = 10, bodyLimit: Int = 1024, gate: Gate = Gate(), entered: Gate = Gate()) throws -> HTTPServer {
    var router = Router()
    router.get("/ok") { _ in .text("ok\n") }
    router.get("/echo/:id") { request in
        .text("id=\(request.pathParameters["id"]!) q=\(request.query["q"] ?? "-") h=\(request.headers["X-Test"] ?? "-")")
    }
    router.post("/echo") { request in .text("got \(request.body.count) bytes: \(request.bodyText)") }
    router.get("/gated") { _ in
        entered.open()
        await gate.wait()
        return .text("released\n")
    }
    router.get("/stream") { _ in
        HTTPResponse(
            body: .stream(contentLength: nil) { writer in
                for index in 0..<50 { try await writer.write(Array("chunk\(index);".utf8)) }
            })
    }
    router.get("/files/*") { request in .text("rest=\(request.pathParameters["*"]!)") }
    router.get("/owned") { _ in
        // 1 MB the server takes over: byte i is i % 251.
        let count = 1_000_000
        let pointer = UnsafeMutablePointer<UInt8>.allocate(capacity: count)
        for index in 0..<count { pointer[index] = UInt8(index % 251) }
        return HTTPResponse(body: .owned(OwnedBytes(takingOwnershipOf: UnsafeMutableRawPointer(pointer), count: count)))
    }
    let server = HTTPServer(
        configuration: .init(host: "127.0.0.1", port: 0, connectionTimeoutSeconds: timeout, maxRequestBodyBytes: bodyLimit),
        router: router)
    try server.start()
    return server
}

@Suite("HTTPServer")
struct HTTPServerTests {
    let client = CurlTransport()

    func get(
        _ server: HTTPServer, _ path: String, method: String = "GET", body: [UInt8]? = nil,
        headers: [(name: String, value: String)] = [], timeout: Duration = .seconds(20)
    ) async -> TransferResult {
        await client.perform(
            TransferRequest(
                url: "http://127.0.0.1:\(server.port)\(path)", method: method, headers: headers, body: body,
                timeout: timeout))
    }

    @Test func sendsAnOwnedBufferAsTheWholeBody() async throws {
        let server = try makeServer()
        for _ in 0..<3 {  // each response frees its own buffer
            let result = await get(server, "/owned")
            #expect(result.httpStatus == 200)
            #expect(result.header("Content-Length") == "1000000")
            #expect(result.body.count == 1_000_000)
            #expect(result.body.indices.allSatisfy { result.body[$0] == UInt8($0 % 251) })
        }
        await server.stop()
    }

    @Test func bindsAFreePortAndAnswers() async throws {
        let server = try makeServer()
        #expect(server.port > 0)
        let result = await get(server, "/ok")
        #expect(result.httpStatus == 200)
        #expect(result.bodyText == "ok\n")
        await server.stop()
    }

    @Test func routesPathParametersQueryAndHeaders() async throws {
        let server = try makeServer()
        let result = await get(server, "/echo/abc?q=hello%20world", headers: [("X-Test", "yes")])
        #expect(result.bodyText == "id=abc q=hello world h=yes")
        let rest = await get(server, "/files/a/b/c.txt")
        #expect(rest.bodyText == "rest=a/b/c.txt")
        await server.stop()
    }

    /// %00 is not decoded: as a NUL it ended the path there, and /echo/abc%00x answered as
    /// /echo/abc (issue "Nothing told is lost…", row 15). Every other escape still is.
    @Test func anEscapedNULIsNotDecoded() async throws {
        let server = try makeServer()
        #expect(await get(server, "/echo/abc%00x?q=a%00b").bodyText == "id=abc%00x q=a%00b h=-")
        #expect(await get(server, "/echo/a%62c?q=%41%2f").bodyText == "id=abc q=A/ h=-")
        await server.stop()
    }

    @Test func answersManyConcurrentRequests() async throws {
        let server = try makeServer()
        let bodies = await withTaskGroup(of: String.self) { group in
            for index in 0..<200 {
                group.addTask { await get(server, "/echo/\(index)").bodyText }
            }
            return await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(bodies.count == 200)
        #expect(bodies.contains("id=199 q=- h=-"))
        await server.stop()
    }

    @Test func unknownPathIs404AndWrongMethodIs405WithAllow() async throws {
        let server = try makeServer()
        #expect(await get(server, "/nope").httpStatus == 404)
        let wrong = await get(server, "/ok", method: "DELETE")
        #expect(wrong.httpStatus == 405)
        #expect(wrong.header("Allow") == "GET, HEAD")
        await server.stop()
    }

    @Test func acceptsBodiesWithinTheLimitAndRejectsLargerOnesWith413() async throws {
        let server = try makeServer(bodyLimit: 1024)
        let small = await get(server, "/echo", method: "POST", body: Array("hello".utf8))
        #expect(small.bodyText == "got 5 bytes: hello")
        let large = await get(server, "/echo", method: "POST", body: [UInt8](repeating: 65, count: 4096))
        #expect(large.httpStatus == 413)
        let chunked = await get(
            server, "/echo", method: "POST", body: [UInt8](repeating: 66, count: 4096),
            headers: [("Transfer-Encoding", "chunked")])
        #expect(chunked.httpStatus == 413)
        #expect(await get(server, "/ok").httpStatus == 200)
        await server.stop()
    }

    @Test func aSlowHandlerDoesNotHoldUpOthers() async throws {
        let gate = Gate()
        let server = try makeServer(timeout: 120, gate: gate)
        // Waits as long as the others may take on a loaded machine: the test is about order, not speed.
        let slow = Task { await get(server, "/gated", timeout: .seconds(120)) }
        for _ in 0..<20 {
            #expect(await get(server, "/ok").httpStatus == 200)
        }
        gate.open()
        #expect(await slow.value.bodyText == "released\n")
        await server.stop()
    }

    @Test func streamsABodyInPieces() async throws {
        let server = try makeServer()
        let result = await get(server, "/stream")
        #expect(result.bodyText == (0..<50).map { "chunk\($0);" }.joined())
        await server.stop()
    }

    @Test func dropsASilentClientAfterTheTimeoutWhileServingOthers() async throws {
        let server = try makeServer(timeout: 1)
        let silent = try RawSocket(port: server.port)
        #expect(await get(server, "/ok").httpStatus == 200)
        let outcome = await silent.readUntilClosed(deadline: .now + .seconds(15))
        #expect(outcome.closed)
        #expect(await get(server, "/ok").httpStatus == 200)
        await server.stop()
    }

    @Test func answersAMalformedRequestWith400AndKeepsServing() async throws {
        let server = try makeServer()
        let garbage = try RawSocket(port: server.port)
        garbage.send("THIS IS NOT HTTP\r\n\r\n")
        let outcome = await garbage.readUntilClosed(deadline: .now + .seconds(15))
        #expect(outcome.text.hasPrefix("HTTP/1.1 400"))
        #expect(await get(server, "/ok").httpStatus == 200)
        await server.stop()
    }

    @Test func stopReleasesThePortAndAnswersWaitingRequests() async throws {
        let gate = Gate()
        let entered = Gate()
        let server = try makeServer(gate: gate, entered: entered)
        let port = server.port
        let waiting = Task { await get(server, "/gated") }
        await entered.wait()
        await server.stop()
        let after = await client.perform(TransferRequest(url: "http://127.0.0.1:\(port)/ok", timeout: .seconds(5)))
        #expect(after.httpStatus == nil)
        gate.open()
        let answered = await waiting.value
        #expect(answered.httpStatus == 503)
    }

    @Test func refusesAnAddressThatIsTaken() async throws {
        let server = try makeServer()
        let second = HTTPServer(configuration: .init(host: "127.0.0.1", port: server.port), router: Router())
        #expect(throws: HTTPServerError.self) { try second.start() }
        await server.stop()
    }

    @Test func theServersClockRunsFromArrivalToHandOver() async throws {
        // (received, handler started, handler ended, queued) for each answer.
        let marks = Mutex<[[ContinuousClock.Instant]]>([])
        var router = Router()
        router.get("/timed") { request in
            let started = ContinuousClock.now
            var response = HTTPResponse.text("timed\n")
            let ended = ContinuousClock.now
            response.onQueued = { queued in marks.withLock { $0.append([request.receivedAt, started, ended, queued]) } }
            return response
        }
        let server = HTTPServer(configuration: .init(host: "127.0.0.1", port: 0), router: router)
        try server.start()
        for _ in 0..<3 { #expect(await get(server, "/timed").httpStatus == 200) }
        await server.stop()
        let recorded = marks.withLock { $0 }
        #expect(recorded.count == 3)
        for mark in recorded { #expect(mark == mark.sorted()) }
    }

    @Test func aRouteWithAnExecutorRunsItsHandlerThere() async throws {
        let executor = QueueExecutor()
        var router = Router()
        router.get("/on", executor: { executor }) { _ in .text(QueueExecutor.isCurrent ? "on the executor\n" : "elsewhere\n") }
        router.get("/off") { _ in .text(QueueExecutor.isCurrent ? "on the executor\n" : "elsewhere\n") }
        let server = HTTPServer(configuration: .init(host: "127.0.0.1", port: 0), router: router)
        try server.start()
        #expect(await get(server, "/on").bodyText == "on the executor\n")
        #expect(await get(server, "/off").bodyText == "elsewhere\n")
        #expect(await get(server, "/on", method: "HEAD").httpStatus == 200)
        await server.stop()
        #expect(executor.jobs.load(ordering: .relaxed) >= 2)
    }
}

/// A task executor on a serial queue that tells whether the running code is on it.
final class QueueExecutor: TaskExecutor, @unchecked Sendable {
    private static let key = DispatchSpecificKey<Bool>()
    private let queue = DispatchQueue(label: "test.executor")
    let jobs = Atomic<Int>(0)

    init() { queue.setSpecific(key: QueueExecutor.key, value: true) }

    static var isCurrent: Bool { DispatchQueue.getSpecific(key: key) == true }

    func enqueue(_ job: consuming ExecutorJob) {
        jobs.add(1, ordering: .relaxed)
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
