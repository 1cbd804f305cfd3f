import Foundation
import ResilientHTTP
import TestSupport
import Testing

/// Every reason of SPEC section 4, produced for real: lookout-sim, local sockets, a network
/// namespace. Nothing leaves 127.0.0.1 (or the namespace).
@Suite("failure reasons end to end", .serialized)
struct FailureReasonsEndToEndTests {
    static func startSim(_ extra: [String] = [], port: String = "0") async throws -> (ChildProcess, String) {
        let sim = try ChildProcess("lookout-sim", ["--listen", "127.0.0.1:\(port)"] + extra)
        let base = try await sim.waitFor(#"listening on (https?://127\.0\.0\.1:\d+)/"#)
        return (sim, base)
    }

    static func call(
        _ client: ResilientClient, _ url: String, upstream: String = "test", timeout: Duration = .seconds(5),
        connectTimeout: Duration? = nil, maxRedirects: Int = 10, caFile: String? = nil
    ) async -> CallOutcome {
        await client.call(
            upstream: upstream,
            CallRequest(
                TransferRequest(url: url, timeout: timeout, connectTimeout: connectTimeout, maxRedirects: maxRedirects, caFile: caFile),
                singleFlight: false))
    }

    /// A client that retries nothing, so each test sees the first classification.
    static func plainClient() -> ResilientClient {
        let client = ResilientClient()
        client.configure(upstream: "test", policy: UpstreamPolicy(retry: .none, rateLimit: nil))
        return client
    }

    @Test func oneTokenRequestServesTwentyConcurrentCallsAndOne401Refresh() async throws {
        var (sim, base) = try await Self.startSim()
        let port = String(base.split(separator: ":").last!)
        let client = ResilientClient()
        client.configure(
            upstream: "oauth",
            policy: UpstreamPolicy(
                rateLimit: nil,
                auth: .oauth2(
                    OAuth2ClientCredentials(
                        tokenURL: "\(base)/oauth/token", clientID: "lookout", clientSecret: "s3cret", scopes: ["read"]))))
        func twenty(_ base: String) async -> [CallOutcome] {
            await withTaskGroup(of: CallOutcome.self) { group in
                for index in 0..<20 { group.addTask { await Self.call(client, "\(base)/protected?call=\(index)", upstream: "oauth") } }
                return await group.reduce(into: []) { $0.append($1) }
            }
        }
        let first = await twenty(base)
        #expect(first.allSatisfy { $0.ok })
        var counters = try await Self.counters(base)
        #expect(counters["/oauth/token"] == 1)
        #expect(counters["/protected"] == 20)

        // A new simulator on the same port has forgotten the token: a call sent with the old
        // token gets 401 once and is retried with the new one; one refresh serves them all.
        // (Calls that start after the refresh already carry the new token, so how many see
        // the 401 depends on timing; the counts must agree either way.)
        #expect(try await sim.terminate() == 0)
        (sim, base) = try await Self.startSim(port: port)
        let second = await twenty(base)
        #expect(second.allSatisfy { $0.ok })
        let retried = second.filter { $0.attempts.count == 2 }
        #expect(!retried.isEmpty)
        #expect(retried.allSatisfy { $0.attempts[0].failure?.reason == "http_401" })
        #expect(second.allSatisfy { $0.attempts.count <= 2 })
        counters = try await Self.counters(base)
        #expect(counters["/oauth/token"] == 1)
        #expect(counters["/protected"] == 20 + retried.count)

        // A token endpoint that refuses the client: token_refresh_failed.
        client.configure(
            upstream: "bad",
            policy: UpstreamPolicy(
                auth: .oauth2(
                    OAuth2ClientCredentials(
                        tokenURL: "\(base)/oauth/token", clientID: "lookout", clientSecret: "wrong"))))
        let refused = await Self.call(client, "\(base)/protected", upstream: "bad")
        #expect(refused.failure?.category == .authError)
        #expect(refused.failure?.reason == "token_refresh_failed")
        #expect(try await sim.terminate() == 0)
    }

    @Test func tlsFailuresAgainstASelfSignedSimulator() async throws {
        let directory = try makeTemporaryDirectory("tls")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (cert, key) = try makeSelfSignedCertificate(in: directory)
        let (tlsSim, tlsBase) = try await Self.startSim(["--tls-cert", cert, "--tls-key", key])
        #expect(tlsBase.hasPrefix("https://"))
        let client = Self.plainClient()

        let untrusted = await Self.call(client, "\(tlsBase)/ok")
        #expect(untrusted.failure?.category == .tlsError)
        #expect(untrusted.failure?.reason == "cert_invalid")

        let trusted = await Self.call(client, "\(tlsBase)/ok", caFile: cert)
        #expect(trusted.ok)
        let expiry = try #require(trusted.final?.certificateExpiry)
        #expect(expiry > Date().addingTimeInterval(2 * 86400) && expiry < Date().addingTimeInterval(4 * 86400))

        let (plainSim, plainBase) = try await Self.startSim()
        let handshake = await Self.call(client, plainBase.replacingOccurrences(of: "http://", with: "https://") + "/ok")
        #expect(handshake.failure?.category == .tlsError)
        #expect(handshake.failure?.reason == "tls_handshake")
        #expect(try await tlsSim.terminate() == 0)
        #expect(try await plainSim.terminate() == 0)
    }

    @Test func reasonsFromTheSimulator() async throws {
        let (sim, base) = try await Self.startSim()
        let client = Self.plainClient()
        let cases: [(String, ErrorCategory, String)] = [
            ("/status/500", .serverError, "http_500"), ("/status/503", .serverError, "http_503"),
            ("/status/429", .rateLimited, "http_429"), ("/status/401", .authError, "http_401"),
            ("/status/408", .timeout, "http_408"), ("/status/504", .timeout, "http_504"),
            ("/status/404", .clientError, "http_404"), ("/drop", .transient, "empty_reply"),
        ]
        for (path, category, reason) in cases {
            let outcome = await Self.call(client, "\(base)\(path)")
            #expect(outcome.failure?.category == category, "\(path)")
            #expect(outcome.failure?.reason == reason, "\(path)")
        }
        let redirects = await Self.call(client, "\(base)/redirect?n=20", maxRedirects: 5)
        #expect(redirects.failure?.reason == "too_many_redirects")
        let slow = await Self.call(client, "\(base)/slow?ms=3000", timeout: .milliseconds(300))
        #expect(slow.failure?.reason == "response_timeout")
        let truncated = await Self.call(client, "\(base)/download/200000?truncate_at=1000")
        #expect(truncated.failure?.category == .invalidResponse || truncated.failure?.category == .transient)

        // Retry-After is honoured: the wait before the retry is what the server asked for.
        let recorder = WaitRecorder()
        let patient = ResilientClient(sleep: recorder.sleep)
        patient.configure(upstream: "test", policy: UpstreamPolicy(rateLimit: nil))
        let limited = await Self.call(patient, "\(base)/status/429?retry_after=9")
        #expect(limited.attempts.count == 2)
        #expect(recorder.waits == [.seconds(9)])

        let binary = ChildProcess.binDirectory.appendingPathComponent("lookout").path
        let json = try await runTool(binary, ["probe", "\(base)/json/invalid", "--kind", "json", "--json"])
        #expect(json.status == 1)
        #expect(json.output.contains(#""reason":"json_invalid""#))
        let valid = try await runTool(binary, ["probe", "\(base)/json/valid", "--kind", "json", "--json"])
        #expect(valid.status == 0)
        #expect(valid.output.contains(#""ok":true"#))
        let feed = try await runTool(binary, ["probe", "\(base)/rss/malformed", "--kind", "rss", "--json"])
        #expect(feed.output.contains(#""reason":"xml_invalid""#))
        #expect(try await sim.terminate() == 0)
    }

    @Test func connectionRefusedAndConnectTimeoutFromLocalSockets() async throws {
        let client = Self.plainClient()
        let refused = await withRefusingPort { port in await Self.call(client, "http://127.0.0.1:\(port)/") }
        #expect(refused.failure?.reason == "connection_refused")

        // A listener that never accepts, with its queue full: the next SYN is dropped.
        let listener = try FullListener()
        let stuck = await Self.call(client, "http://127.0.0.1:\(listener.port)/", timeout: .seconds(5), connectTimeout: .milliseconds(400))
        #expect(stuck.failure?.category == .timeout)
        #expect(stuck.failure?.reason == "connect_timeout")
    }

    @Test func dnsFailureInsideAnIsolatedNetworkNamespace() async throws {
        // The namespace has only a loopback interface, so the resolver cannot reach any name
        // server and nothing leaves the machine.
        let namespace = "lookout-dns-\(getpid())"
        #expect(try await runTool("/usr/sbin/ip", ["netns", "add", namespace]).status == 0)
        defer { _ = try? runToolBlocking("/usr/sbin/ip", ["netns", "delete", namespace]) }
        #expect(try await runTool("/usr/sbin/ip", ["-n", namespace, "link", "set", "lo", "up"]).status == 0)
        let binary = ChildProcess.binDirectory.appendingPathComponent("lookout").path
        let probe = try await runTool(
            "/usr/sbin/ip",
            [
                "netns", "exec", namespace, binary, "probe", "http://lookout-test.invalid/", "--json", "--timeout", "3s",
            ])
        #expect(probe.status == 1, "\(probe.output)")
        #expect(probe.output.contains(#""category":"network_unreachable""#), "\(probe.output)")
        #expect(probe.output.contains(#""reason":"dns_failure""#), "\(probe.output)")
    }

    static func counters(_ base: String) async throws -> [String: Int] {
        let result = await CurlTransport().perform(TransferRequest(url: "\(base)/counters", timeout: .patient))
        return try #require(try JSONSerialization.jsonObject(with: Data(result.body)) as? [String: Int])
    }
}

/// Records retry waits instead of sleeping them.
final class WaitRecorder: Sendable {
    private let list = Locked<[Duration]>([])
    var waits: [Duration] { list.value }
    var sleep: @Sendable (Duration) async throws -> Void { { [list] wait in list.mutate { $0.append(wait) } } }
}

/// A TCP listener on 127.0.0.1 that never accepts, with its accept queue filled.
final class FullListener {
    let fd: Int32
    let port: UInt16
    private var clients: [Int32] = []

    init() throws {
        let (listener, address) = boundLoopbackSocket()
        fd = listener
        port = UInt16(bigEndian: address.sin_port)
        listen(fd, 0)
        // Fill the queue: these connections complete and wait, so later SYNs are dropped.
        for _ in 0..<4 {
            let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            var target = address
            _ = withUnsafePointer(to: &target) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(client, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            clients.append(client)
        }
    }

    deinit {
        for client in clients { close(client) }
        close(fd)
    }
}
