import Foundation
import MicroHTTPServer
import ResilientHTTP
import Synchronization
import TestSupport
import Testing

/// The transport and the classifier against a real server on loopback.
@Suite("CurlTransport")
struct TransportTests {
    let transport = CurlTransport()

    func startServer() throws -> HTTPServer {
        var router = Router()
        router.get("/ok") { _ in .json(#"{"ok":true}"#) }
        router.get("/status/:code") { request in
            .json(#"{"detail":"status \#(request.pathParameters["code"]!) on purpose"}"#, status: Int(request.pathParameters["code"]!)!)
        }
        router.get("/hang") { _ in
            try? await Task.sleep(for: .seconds(60))
            return .text("late")
        }
        router.get("/big") { _ in .bytes(count: 100_000) }
        router.get("/redirect") { _ in HTTPResponse(status: 302, headers: ["Location": "/redirect"]) }
        router.get("/drop") { _ in .dropConnection }
        for method in ["GET", "POST"] {
            router.add(method, "/echo") { request in
                .text("\(request.method) x-extra=\(request.headers["x-extra"] ?? "-") body=\(request.body.count)")
            }
        }
        router.get("/agent") { request in .text(request.headers["User-Agent"] ?? "-") }
        router.get("/connection") { request in
            let sent = request.headers.filter { $0.name.lowercased() == "connection" }.map(\.value)
            return .text(sent.isEmpty ? "-" : sent.joined(separator: ","))
        }
        let server = HTTPServer(configuration: .init(port: 0), router: router)
        try server.start()
        return server
    }

    func url(_ server: HTTPServer, _ path: String) -> String { "http://127.0.0.1:\(server.port)\(path)" }

    @Test func aSuccessfulResponseHasStatusBodyAndPhases() async throws {
        let server = try startServer()
        let result = await transport.perform(TransferRequest(url: url(server, "/ok"), timeout: .patient))
        #expect(result.curlCode == 0)
        #expect(result.httpStatus == 200)
        #expect(result.bodyText == #"{"ok":true}"#)
        #expect(result.header("content-type") == "application/json")
        #expect(result.httpVersion == "1.1")
        #expect(result.totalSeconds > 0)
        #expect(FailureClassifier.classify(result) == nil)
        await server.stop()
    }

    @Test func theApplicationNamesItselfAndARequestMayOverrideIt() async throws {
        let server = try startServer()
        let named = CurlTransport(userAgent: "Watcher/2.1")
        #expect(await named.perform(TransferRequest(url: url(server, "/agent"), timeout: .patient)).bodyText == "Watcher/2.1")
        let own = TransferRequest(url: url(server, "/agent"), headers: [("User-Agent", "Probe/1")], timeout: .patient)
        #expect(await named.perform(own).bodyText == "Probe/1")
        #expect(await transport.perform(TransferRequest(url: url(server, "/agent"), timeout: .patient)).bodyText == "-")
        await server.stop()
    }

    @Test(arguments: [
        (500, ErrorCategory.serverError), (503, .serverError), (429, .rateLimited), (401, .authError),
        (403, .authError), (404, .clientError), (408, .timeout), (504, .timeout),
    ])
    func classifiesStatuses(status: Int, category: ErrorCategory) async throws {
        let server = try startServer()
        let result = await transport.perform(TransferRequest(url: url(server, "/status/\(status)"), timeout: .patient))
        let failure = FailureClassifier.classify(result)
        #expect(failure?.category == category)
        #expect(failure?.reason == "http_\(status)")
        #expect(failure?.serverMessage == "status \(status) on purpose")
        await server.stop()
    }

    @Test func anExpectedStatusIsNotAFailure() async throws {
        let server = try startServer()
        let result = await transport.perform(TransferRequest(url: url(server, "/status/404"), timeout: .patient))
        #expect(FailureClassifier.classify(result, acceptedStatuses: [200, 404]) == nil)
        await server.stop()
    }

    @Test func aClosedPortIsConnectionRefused() async throws {
        let result = await withRefusingPort { port in
            await transport.perform(TransferRequest(url: "http://127.0.0.1:\(port)/ok"))
        }
        let failure = FailureClassifier.classify(result)
        #expect(failure?.category == .transient)
        #expect(failure?.reason == "connection_refused")
    }

    @Test func aSlowAnswerTimesOut() async throws {
        let server = try startServer()
        let result = await transport.perform(TransferRequest(url: url(server, "/hang"), timeout: .milliseconds(300)))
        let failure = FailureClassifier.classify(result)
        #expect(failure?.category == .timeout)
        #expect(failure?.reason == "response_timeout")
        await server.stop()
    }

    @Test func aDroppedConnectionIsAnEmptyReply() async throws {
        let server = try startServer()
        let failure = FailureClassifier.classify(await transport.perform(TransferRequest(url: url(server, "/drop"), timeout: .patient)))
        #expect(failure?.category == .transient)
        #expect(failure?.reason == "empty_reply")
        await server.stop()
    }

    @Test func tooManyRedirectsIsAClientError() async throws {
        let server = try startServer()
        let result = await transport.perform(TransferRequest(url: url(server, "/redirect"), timeout: .patient, maxRedirects: 3))
        let failure = FailureClassifier.classify(result)
        #expect(failure?.category == .clientError)
        #expect(failure?.reason == "too_many_redirects")
        await server.stop()
    }

    @Test func aBodyPastTheLimitIsTooLarge() async throws {
        let server = try startServer()
        let result = await transport.perform(TransferRequest(url: url(server, "/big"), timeout: .patient, maxResponseBytes: 10_000))
        #expect(result.exceededSizeLimit)
        let failure = FailureClassifier.classify(result)
        #expect(failure?.category == .invalidResponse)
        #expect(failure?.reason == "too_large")
        await server.stop()
    }

    @Test func cancellingTheTaskAbortsTheTransfer() async throws {
        let server = try startServer()
        let call = Task { await transport.perform(TransferRequest(url: url(server, "/hang"), timeout: .seconds(60))) }
        call.cancel()
        let result = await call.value
        #expect(result.cancelled)
        #expect(result.httpStatus == nil)
        await server.stop()
    }

    @Test func manyTransfersRunAtOnceOnOneThread() async throws {
        let server = try startServer()
        let statuses = await withTaskGroup(of: Int?.self) { group in
            for _ in 0..<100 { group.addTask { await transport.perform(TransferRequest(url: url(server, "/ok"), timeout: .patient)).httpStatus } }
            return await group.reduce(into: [Int?]()) { $0.append($1) }
        }
        #expect(statuses.count == 100)
        #expect(statuses.allSatisfy { $0 == 200 })
        await server.stop()
    }
}

extension TransportTests {
    /// A task that prefers the transport's executor runs on its thread, before and after its
    /// transfer, so handing the transfer over and resuming wake no other thread.
    @Test func aTaskThatPrefersTheTransportRunsOnItsThread() async throws {
        let server = try startServer()
        let transport = transport
        let (before, status, after) = await Task(executorPreference: transport.executor) {
            let before = currentThreadName()
            let result = await transport.perform(TransferRequest(url: url(server, "/ok"), timeout: .patient))
            return (before, result.httpStatus, currentThreadName())
        }.value
        #expect(before == CurlTransport.threadName && after == CurlTransport.threadName)
        #expect(status == 200)
        // Without the preference, the same work stays off that thread.
        #expect(await Task { currentThreadName() }.value != CurlTransport.threadName)
        await server.stop()
    }

    /// With several transfer threads, a task's transfer runs on the thread the task prefers:
    /// libcurl's callbacks (here a body sink's) run on the thread the task waits on.
    @Test func aTransferRunsOnTheThreadItsTaskPrefers() async throws {
        let server = try startServer()
        let transport = CurlTransport(threads: 3)
        transport.adapt(toProbesPerSecond: CurlTransport.spreadAbove + 1)
        final class ThreadOfWrite: BodySink {
            let thread = Mutex<pthread_t?>(nil)
            func begin(status: Int, headers: [(name: String, value: String)]) -> Bool { true }
            func write(_ bytes: UnsafeRawBufferPointer) -> Bool {
                thread.withLock { $0 = pthread_self() }
                return true
            }
        }
        for _ in 0..<6 {
            let sink = ThreadOfWrite()
            let (before, status) = await Task(executorPreference: transport.executor) {
                var request = TransferRequest(url: url(server, "/ok"), timeout: .patient)
                request.bodySink = sink
                return (pthread_self(), await transport.perform(request).httpStatus)
            }.value
            #expect(status == 200)
            #expect(sink.thread.withLock { $0 } == before)
        }
        await server.stop()
    }

    /// One transfer thread takes every transfer until more than `spreadAbove` probes a second
    /// are scheduled; then each thread takes its turn, and below it again, one does.
    @Test func transfersSpreadOverThreadsOnlyPastTheRate() {
        let transport = CurlTransport(threads: 2)
        func executors() -> Set<ObjectIdentifier> { Set((0..<4).map { _ in ObjectIdentifier(transport.executor as AnyObject) }) }
        #expect(transport.threadsInUse == 1)
        #expect(executors().count == 1)
        transport.adapt(toProbesPerSecond: CurlTransport.spreadAbove)
        #expect(executors().count == 1)
        transport.adapt(toProbesPerSecond: CurlTransport.spreadAbove + 1)
        #expect(transport.threadsInUse == 2)
        #expect(executors().count == 2)
        transport.adapt(toProbesPerSecond: 10)
        #expect(executors().count == 1)
        // A transport of one thread stays at one.
        let single = CurlTransport(threads: 1)
        single.adapt(toProbesPerSecond: .infinity)
        #expect(single.threadsInUse == 1)
    }

    /// A body nobody reads is counted and dropped: none of it is held, and without a limit any
    /// size passes; with one (blackbox's `body_size_limit`) the transfer stops past it.
    @Test func aBodyNotKeptIsCountedAndDropped() async throws {
        let server = try startServer()
        var request = TransferRequest(url: url(server, "/big"), timeout: .patient, maxResponseBytes: nil)
        request.keepsBody = false
        let result = await transport.perform(request)
        #expect(result.curlCode == 0 && result.httpStatus == 200)
        #expect(result.body.isEmpty)
        #expect(result.bodyBytes == 100_000)
        #expect(!result.exceededSizeLimit)
        request.maxResponseBytes = 10
        let limited = await transport.perform(request)
        #expect(limited.exceededSizeLimit && limited.body.isEmpty)
        #expect(limited.bodyBytes < 100_000)
        await server.stop()
    }

    /// A small body is checked where the call runs; a large one is checked on a thread of its
    /// own: off the transfer thread, which times every other transfer, and off the shared pool,
    /// which answers health checks and scrapes (four 14 MB feeds held it for 20 s).
    @Test func aLargeBodyIsCheckedOffTheTransferThread() async throws {
        let server = try startServer()
        let client = ResilientClient(transport: transport)
        client.configure(upstream: "u", policy: UpstreamPolicy())
        func checkedOn(_ path: String) async -> String? {
            let checkedOn = Mutex<String?>(nil)
            let request = CallRequest(
                TransferRequest(url: url(server, path), timeout: .patient),
                validate: { _ in
                    checkedOn.withLock { $0 = currentThreadName() }
                    return nil
                })
            _ = await Task(executorPreference: transport.executor) { await client.call(upstream: "u", request) }.value
            return checkedOn.withLock { $0 }
        }
        #expect(await checkedOn("/ok") == CurlTransport.threadName)
        let big = await checkedOn("/big")  // 100,000 bytes
        #expect(big == "lookout-check")
        await server.stop()
    }

    /// Once the transport is gone, tasks that still prefer its executor carry on elsewhere
    /// instead of waiting for a thread that has stopped.
    @Test func tasksOutliveTheTransportTheyPrefer() async throws {
        var released: CurlTransport? = CurlTransport()
        let executor = released!.executor
        #expect(await Task(executorPreference: executor) { currentThreadName() }.value == CurlTransport.threadName)
        released = nil
        #expect(await Task(executorPreference: executor) { 42 }.value == 42)
        #expect(await Task(executorPreference: executor) { currentThreadName() }.value != CurlTransport.threadName)
    }

    /// Easy handles are reused: nothing of one transfer (method, headers, body, limits) may
    /// reach the next one that gets its handle.
    @Test func aReusedHandleCarriesNothingOfItsLastTransfer() async throws {
        let server = try startServer()
        let pooled = CurlTransport()
        for _ in 0..<3 {
            let echoed = await pooled.perform(
                TransferRequest(
                    url: url(server, "/echo"), method: "POST", headers: [("X-Extra", "yes")], body: Array("hello".utf8), timeout: .patient))
            #expect(echoed.bodyText == "POST x-extra=yes body=5")
            let post = await pooled.perform(
                TransferRequest(
                    url: url(server, "/echo"), method: "POST", headers: [("X-Extra", "yes")], body: Array("hello".utf8), timeout: .patient,
                    maxResponseBytes: 1))
            #expect(post.exceededSizeLimit)
            let get = await pooled.perform(TransferRequest(url: url(server, "/echo"), timeout: .patient))
            #expect(get.bodyText == "GET x-extra=- body=0")
            #expect(!get.exceededSizeLimit)
        }
        // Handles went back to the pool (each is returned once the loop thread lets go of it).
        _ = try await eventually("a handle back in the pool") { pooled.idleHandles >= 1 ? true : nil }
        await server.stop()
    }

    /// A probe's connection is used once and says so, as blackbox_exporter's do; a transfer that
    /// may reuse its connection, or that names its own Connection header, is left as it is.
    @Test func aFreshConnectionAsksTheServerToClose() async throws {
        let server = try startServer()
        let fresh = await transport.perform(TransferRequest(url: url(server, "/connection"), timeout: .patient))
        #expect(fresh.bodyText == "close")
        let reused = await transport.perform(TransferRequest(url: url(server, "/connection"), timeout: .patient, freshConnection: false))
        #expect(reused.bodyText == "-")
        let named = await transport.perform(TransferRequest(url: url(server, "/connection"), headers: [("Connection", "keep-alive")], timeout: .patient))
        #expect(named.bodyText == "keep-alive")
        await server.stop()
    }

    /// libcurl 7.88 keeps a handle's errno across transfers, even through a reset: a handle
    /// whose connection was refused is not pooled, or the next transfer (here a success) would
    /// report ECONNREFUSED as its errno.
    @Test func aHandleThatSawASocketErrorIsNotReused() async throws {
        let server = try startServer()
        let pooled = CurlTransport()
        for _ in 0..<3 {
            let refused = await withRefusingPort { port in
                await pooled.perform(TransferRequest(url: "http://127.0.0.1:\(port)/"))
            }
            #expect(refused.osErrno == ECONNREFUSED)
            let ok = await pooled.perform(TransferRequest(url: url(server, "/ok"), timeout: .patient))
            #expect(ok.httpStatus == 200)
            #expect(ok.osErrno == 0)
        }
        await server.stop()
    }
}

extension HTTPResponse {
    static func bytes(count: Int) -> HTTPResponse {
        HTTPResponse(body: .bytes([UInt8](repeating: 0x61, count: count)))
    }
}

@Suite("SHA256")
struct SHA256Tests {
    @Test func matchesKnownVectors() {
        #expect(SHA256.hex(Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SHA256.hex([]) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        let hasher = SHA256()
        hasher.update(Array("a".utf8))
        hasher.update(Array("bc".utf8))
        #expect(hasher.finalizeHex() == SHA256.hex(Array("abc".utf8)))
    }

    @Test func hmacMatchesRFC4231() {
        // RFC 4231 test case 2.
        let mac = SHA256.hmacHex(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8))
        #expect(mac == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    @Test func serverMessagesComeFromKnownFields() {
        #expect(ServerMessage.extract(from: Array(#"{"error":{"message":"nested"}}"#.utf8), contentType: nil) == "nested")
        #expect(ServerMessage.extract(from: Array(#"{"message":"plain"}"#.utf8), contentType: nil) == "plain")
        #expect(ServerMessage.extract(from: Array("  backend down \n".utf8), contentType: "text/plain") == "backend down")
        #expect(ServerMessage.extract(from: Array("<html>x</html>".utf8), contentType: "text/html") == nil)
    }
}

/// Transport failures that loopback cannot produce, classified from libcurl's codes and errno.
@Suite("FailureClassifier")
struct ClassifierTests {
    @Test(arguments: [
        (Int32(6), Int32(0), "", ErrorCategory.networkUnreachable, "dns_failure"),
        (7, ENETUNREACH, "", .networkUnreachable, "network_unreachable"),
        (7, EHOSTUNREACH, "", .networkUnreachable, "host_unreachable"),
        (7, ECONNREFUSED, "", .transient, "connection_refused"),
        (56, ECONNRESET, "", .transient, "connection_reset"),
        (52, 0, "", .transient, "empty_reply"),
        (18, 0, "", .invalidResponse, "truncated"),
        (35, 0, "", .tlsError, "tls_handshake"),
        (60, 0, "SSL certificate problem: certificate has expired", .tlsError, "cert_expired"),
        (60, 0, "SSL certificate problem: self-signed certificate", .tlsError, "cert_invalid"),
        (3, 0, "", .clientError, "bad_url"),
    ])
    func classifiesTransportFailures(code: Int32, errno: Int32, message: String, category: ErrorCategory, reason: String) {
        let failure = FailureClassifier.classify(TransferResult(curlCode: code, curlMessage: message, osErrno: errno))
        #expect(failure?.category == category)
        #expect(failure?.reason == reason)
        #expect(failure?.curlCode == code)
    }

    @Test func aTimeoutBeforeConnectingIsAConnectTimeout() {
        let before = FailureClassifier.classify(TransferResult(curlCode: 28))
        #expect(before?.reason == "connect_timeout")
        let after = FailureClassifier.classify(TransferResult(curlCode: 28, phases: PhaseTimings(connect: 0.001)))
        #expect(after?.reason == "response_timeout")
    }

    @Test func messagesNameTheOperation() {
        let failure = Failure(category: .serverError, reason: "http_503", httpStatus: 503, serverMessage: "down for maintenance")
        #expect(failure.message(operation: "probing acme") == "Error while probing acme: the server answered 503. The server said: down for maintenance")
    }
}
