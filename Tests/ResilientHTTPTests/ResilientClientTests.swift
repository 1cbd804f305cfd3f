import Foundation
import MicroHTTPServer
import ResilientHTTP
import Synchronization
import TestSupport
import Testing

/// Collects what the client reports, and the waits it asks for instead of sleeping them.
final class Recorder: ClientEventSink {
    private let events = Mutex<[ClientEvent]>([])
    private let waits = Mutex<[Duration]>([])

    func handle(_ event: ClientEvent) { events.withLock { $0.append(event) } }

    var recordedWaits: [Duration] { waits.withLock { $0 } }
    var recorded: [ClientEvent] { events.withLock { $0 } }

    var sleeper: @Sendable (Duration) async throws -> Void {
        { [self] wait in
            try Task.checkCancellation()
            waits.withLock { $0.append(wait) }
        }
    }

    var transitions: [BreakerState] {
        recorded.compactMap { if case .breakerTransition(_, let transition, _) = $0 { return transition.to } else { return nil } }
    }
}

/// Counts requests per path and answers from a script.
final class ScriptedServer: Sendable {
    let counts = PathCounts()
    let live: HTTPServer

    init(_ routes: [(String, @Sendable (Int, HTTPRequest) async -> HTTPResponse)]) throws {
        var router = Router()
        for (path, respond) in routes {
            router.get(path) { [counts] request in await respond(counts.bump(path), request) }
        }
        live = HTTPServer(configuration: .init(port: 0), router: router)
        try live.start()
    }

    func url(_ path: String) -> String { "http://127.0.0.1:\(live.port)\(path)" }
    func count(_ path: String) -> Int { counts.value(path) }
    func stop() async { await live.stop() }
}

final class PathCounts: Sendable {
    private let counts = Mutex<[String: Int]>([:])

    func bump(_ path: String) -> Int {
        counts.withLock { counts in
            counts[path, default: 0] += 1
            return counts[path]!
        }
    }

    func value(_ path: String) -> Int { counts.withLock { $0[path] ?? 0 } }
}

@Suite("ResilientClient")
struct ResilientClientTests {
    func client(_ recorder: Recorder, random: Double = 0.5) -> ResilientClient {
        ResilientClient(events: [recorder], random: { random }, sleep: recorder.sleeper)
    }

    func request(_ url: String, deadline: Duration = .seconds(120)) -> CallRequest {
        // Patient: a full `make test` on two cores has starved the in-process servers for over
        // 10 s at its start; these tests are about classification and waits, not speed.
        CallRequest(TransferRequest(url: url, timeout: .seconds(60)), deadline: deadline, singleFlight: false)
    }

    @Test func retriesServerErrorsWithExponentialBackoffUntilSuccess() async throws {
        let server = try ScriptedServer([("/flaky", { seen, _ in seen <= 2 ? .text("busy", status: 503) : .text("ok") })])
        let recorder = Recorder()
        let outcome = await client(recorder).call(upstream: "a", request(server.url("/flaky")))
        #expect(outcome.ok)
        #expect(outcome.attempts.count == 3)
        #expect(outcome.attempts.map(\.retried) == [true, true, false])
        #expect(outcome.kind == .successfulWithRetry)
        #expect(recorder.recordedWaits == [.seconds(2), .seconds(4)])
        #expect(server.count("/flaky") == 3)
        await server.stop()
    }

    @Test func honoursRetryAfterAndDrainsTheBucketOnASpentQuota() async throws {
        let server = try ScriptedServer([
            (
                "/limited",
                { seen, _ in
                    guard seen == 1 else { return .text("ok") }
                    var response = HTTPResponse.text("slow down", status: 429)
                    response.headers.set("Retry-After", "17")
                    response.headers.set("RateLimit", #""default";r=0;t=17"#)
                    return response
                }
            )
        ])
        let recorder = Recorder()
        let client = client(recorder)
        let outcome = await client.call(upstream: "a", request(server.url("/limited")))
        #expect(outcome.ok)
        // The bucket, drained by r=0, asks to wait for the reset before the retry's token.
        #expect(recorder.recordedWaits.first == .seconds(17))
        #expect(
            recorder.recorded.contains {
                if case .retryScheduled(_, 1, .rateLimited, .seconds(17)) = $0 { return true } else { return false }
            })
        await server.stop()
    }

    @Test func doesNotRetryClientErrors() async throws {
        let server = try ScriptedServer([("/missing", { _, _ in .text("no", status: 404) })])
        let recorder = Recorder()
        let outcome = await client(recorder).call(upstream: "a", request(server.url("/missing")))
        #expect(outcome.failure?.category == .clientError)
        #expect(outcome.attempts.count == 1)
        #expect(outcome.kind == .failedWithoutRetry)
        #expect(recorder.recordedWaits.isEmpty)
        await server.stop()
    }

    @Test func stopsRetryingWhenTheBudgetIsSpent() async throws {
        let server = try ScriptedServer([("/down", { _, _ in .text("down", status: 500) })])
        let recorder = Recorder()
        let client = client(recorder)
        client.configure(upstream: "a", policy: UpstreamPolicy(retryBudgetRatio: 0, retryBudgetMinPerMinute: 1))
        let first = await client.call(upstream: "a", request(server.url("/down")))
        #expect(first.attempts.count == 2)
        #expect(first.gaveUp == .budgetExhausted)  // server errors allow 3 attempts; the budget allowed 1 retry
        let second = await client.call(upstream: "a", request(server.url("/down")))
        #expect(second.attempts.count == 1)
        #expect(second.gaveUp == .budgetExhausted)
        #expect(recorder.recorded.contains { if case .retryBudgetExhausted = $0 { return true } else { return false } })
        #expect(client.snapshot(upstream: "a")?.retryBudgetExhausted == 2)
        await server.stop()
    }

    @Test func theBreakerOpensAndThenRefusesWithoutARequest() async throws {
        let server = try ScriptedServer([("/down", { _, _ in .text("down", status: 503) })])
        let recorder = Recorder()
        let client = client(recorder)
        client.configure(
            upstream: "a",
            policy: UpstreamPolicy(
                retry: .none, breaker: CircuitBreakerSettings(failureThreshold: 3, openTimeout: .seconds(60))))
        for _ in 0..<3 { _ = await client.call(upstream: "a", request(server.url("/down"))) }
        #expect(recorder.transitions == [.open])
        let refused = await client.call(upstream: "a", request(server.url("/down")))
        #expect(refused.failure?.category == .circuitOpen)
        #expect(refused.attempts.isEmpty)
        #expect(server.count("/down") == 3)
        #expect(client.snapshot(upstream: "a")?.breaker.notPermittedCalls == 1)
        #expect(client.breaker(upstream: "a", .reset))
        #expect(await client.call(upstream: "a", request(server.url("/down"))).attempts.count == 1)
        await server.stop()
    }

    @Test func refusesPlainHTTPOrUpgradesIt() async throws {
        let server = try ScriptedServer([("/ok", { _, _ in .text("ok") })])
        let recorder = Recorder()
        let client = client(recorder)
        client.configure(upstream: "strict", policy: UpstreamPolicy(requireHTTPS: true))
        let refused = await client.call(upstream: "strict", request(server.url("/ok")))
        #expect(refused.failure?.category == .insecureBlocked)
        #expect(refused.failure?.reason == "plain_http_refused")
        #expect(server.count("/ok") == 0)

        client.configure(upstream: "upgrade", policy: UpstreamPolicy(retry: .none, requireHTTPS: true, upgradeToHTTPS: true))
        let upgraded = await client.call(upstream: "upgrade", request(server.url("/ok")))
        #expect(upgraded.upgradedToHTTPS)
        #expect(upgraded.url.hasPrefix("https://127.0.0.1:"))
        // This server speaks plain HTTP, so the TLS handshake fails.
        #expect(upgraded.failure?.category == .tlsError)
        #expect(upgraded.failure?.reason == "tls_handshake")
        await server.stop()
    }

    @Test func identicalGETsInFlightShareOneRequest() async throws {
        let gate = Gate()
        let server = try ScriptedServer([
            (
                "/shared",
                { _, _ in
                    await gate.wait()
                    return .text("shared")
                }
            )
        ])
        let recorder = Recorder()
        let client = client(recorder)
        let request = CallRequest(TransferRequest(url: server.url("/shared"), timeout: .patient))
        let calls = (0..<10).map { _ in Task { await client.call(upstream: "a", request) } }
        // Every other call has joined the one in flight before it answers (on two loaded cores a
        // task may start late, and a call begun after the answer is a new request).
        try await eventuallyTrue { server.count("/shared") == 1 && client.callsWaitingOnSharedGETs == 9 }
        gate.open()
        for call in calls { #expect(await call.value.ok) }
        #expect(server.count("/shared") == 1)
        await server.stop()
    }

    @Test func neverWaitsPastTheDeadline() async throws {
        let server = try ScriptedServer([("/down", { _, _ in .text("down", status: 503) })])
        let recorder = Recorder()
        let outcome = await client(recorder).call(upstream: "a", request(server.url("/down"), deadline: .seconds(1)))
        #expect(outcome.attempts.count == 1)
        #expect(outcome.gaveUp == .deadline)
        #expect(recorder.recordedWaits.isEmpty)
        await server.stop()
    }

    @Test func sendsTheBearerTokenFromAFileAndRereadsItAfterA401() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("token-\(UUID().uuidString)")
        try "first-token\n".write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let server = try ScriptedServer([
            (
                "/private",
                { _, request in
                    request.headers["Authorization"] == "Bearer second-token" ? .text("ok") : .text("no", status: 401)
                }
            )
        ])
        let recorder = Recorder()
        let client = client(recorder)
        client.configure(upstream: "a", policy: UpstreamPolicy(auth: .bearerTokenFile(path: file.path)))
        let refused = await client.call(upstream: "a", request(server.url("/private")))
        #expect(refused.failure?.reason == "http_401")
        #expect(refused.attempts.count == 2)  // one retry after re-reading the file
        try "second-token\n".write(to: file, atomically: true, encoding: .utf8)
        let accepted = await client.call(upstream: "a", request(server.url("/private")))
        #expect(accepted.ok)
        #expect(accepted.attempts.count == 2)
        try FileManager.default.removeItem(at: file)
        let missing = await client.call(upstream: "a", request(server.url("/private")))
        #expect(missing.ok)  // the token in hand still works
        await server.stop()
    }

    @Test func cancellingACallStopsItsRetries() async throws {
        let server = try ScriptedServer([("/down", { _, _ in .text("down", status: 503) })])
        let client = ResilientClient(sleep: { try await Task.sleep(for: $0) })
        let call = Task { await client.call(upstream: "a", request(server.url("/down"))) }
        try await eventuallyTrue { server.count("/down") >= 1 }
        call.cancel()
        let outcome = await call.value
        #expect(outcome.cancelled)
        #expect(!outcome.ok)
        #expect(server.count("/down") == 1)
        await server.stop()
    }
}
