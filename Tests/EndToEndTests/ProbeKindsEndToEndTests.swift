import Foundation
import LookoutCore
import ResilientHTTP
import TestSupport
import Testing

/// Each probe kind against lookout-sim, through the same prober `serve` uses.
@Suite("probe kinds end to end")
struct ProbeKindsEndToEndTests {
    static func prober() -> SourceProber {
        SourceProber(client: ResilientClient())
    }

    /// A source with no retries, so each check sees one answer.
    static func source(_ kind: SourceKind, _ url: String, _ configure: (inout SourceConfig) -> Void = { _ in }) -> SourceConfig {
        var source = SourceConfig(name: "s-\(UUID().uuidString.prefix(8))", kind: kind, url: url, interval: .seconds(60), timeout: .seconds(5))
        source.policy.retry = .none
        source.policy.rateLimit = nil
        configure(&source)
        return source
    }

    static func probe(_ source: SourceConfig) async -> ProbeResult {
        let prober = prober()
        prober.configure(source)
        return await prober.probe(source)
    }

    @Test func feedsAreParsedAndCounted() async throws {
        let (sim, base) = try await startSimulator()
        let enough = await Self.probe(Self.source(.rss, "\(base)/rss/valid?items=5") { $0.expect.minItems = 5 })
        #expect(enough.ok)
        let atom = await Self.probe(Self.source(.rss, "\(base)/atom/valid?items=3") { $0.expect.minItems = 3 })
        #expect(atom.ok)
        let few = await Self.probe(Self.source(.rss, "\(base)/atom/valid?items=2") { $0.expect.minItems = 3 })
        #expect(few.failure?.reason == "too_few_items")
        #expect(few.failure?.detail.contains("2 items") == true)
        let empty = await Self.probe(Self.source(.rss, "\(base)/rss/valid?items=0") { $0.expect.minItems = 1 })
        #expect(empty.failure?.reason == "too_few_items")
        let broken = await Self.probe(Self.source(.rss, "\(base)/rss/malformed"))
        #expect(broken.failure?.category == .invalidResponse)
        #expect(broken.failure?.reason == "xml_invalid")
        let notAFeed = await Self.probe(Self.source(.rss, "\(base)/json/valid"))
        #expect(notAFeed.failure?.reason == "xml_invalid")
        #expect(try await sim.terminate() == 0)
    }

    @Test func jsonAssertionsPassAndFail() async throws {
        let (sim, base) = try await startSimulator()
        let url = "\(base)/json/valid"
        let cases: [(JSONPathAssertion, String?)] = [
            (JSONPathAssertion(path: "meta.total", min: 1), nil),
            (JSONPathAssertion(path: "meta.total", min: 5), "meta.total is 3, below the minimum 5"),
            (JSONPathAssertion(path: "meta.total", max: 2), "meta.total is 3, above the maximum 2"),
            (JSONPathAssertion(path: "items.1.title", equals: "second"), nil),
            (JSONPathAssertion(path: "items.1.title", equals: "first"), "items.1.title is second, not first"),
            (JSONPathAssertion(path: "items", min: 3), nil),
            (JSONPathAssertion(path: "meta.missing", exists: true), "meta.missing is missing"),
            (JSONPathAssertion(path: "meta.missing", exists: false), nil),
        ]
        for (assertion, problem) in cases {
            let result = await Self.probe(Self.source(.json, url) { $0.expect.jsonPath = assertion })
            if let problem {
                #expect(result.failure?.reason == "json_assertion", "\(assertion)")
                #expect(result.failure?.detail == problem)
            } else {
                #expect(result.ok, "\(assertion): \(result.failure?.detail ?? "")")
            }
        }
        let invalid = await Self.probe(Self.source(.json, "\(base)/json/invalid"))
        #expect(invalid.failure?.reason == "json_invalid")
        let body = await Self.probe(Self.source(.http, url) { $0.expect.bodyContains = "no such text" })
        #expect(body.failure?.reason == "body_mismatch")
        let expected404 = await Self.probe(Self.source(.http, "\(base)/status/404") { $0.expect.statuses = [200, 404] })
        #expect(expected404.ok)
        let slow = await Self.probe(Self.source(.http, "\(base)/slow?ms=400") { $0.expect.maxLatency = .milliseconds(100) })
        #expect(slow.failure?.reason == "slow_response")
        #expect(try await sim.terminate() == 0)
    }

    @Test func downloadsResumeVerifyAndStop() async throws {
        let (sim, base) = try await startSimulator()
        let size = 3_000_000
        let plain = await CurlTransport().perform(TransferRequest(url: "\(base)/download/\(size)?seed=5", timeout: .patient, maxResponseBytes: 8 << 20))
        let digest = try #require(plain.header("X-Content-SHA256"))

        let resumed = await Self.probe(Self.source(.download, "\(base)/download/\(size)?seed=5&truncate_at=1000000") { $0.sha256 = digest })
        #expect(resumed.ok, "\(resumed.failure?.detail ?? "")")
        #expect(resumed.download?.resumes == 1)
        #expect(resumed.download?.verified == true)
        #expect(resumed.download?.state == .completed)
        #expect(resumed.download?.sha256 == digest)
        #expect(resumed.bytes == size)
        let counters = try await FailureReasonsEndToEndTests.counters(base)
        #expect(counters["/download/\(size)"] == 3)  // the plain GET, the truncated one, the resume
        #expect(counters["/download/\(size) range"] == 1)

        let corrupt = await Self.probe(Self.source(.download, "\(base)/download/\(size)?seed=5&corrupt=1") { $0.sha256 = digest })
        #expect(corrupt.failure?.reason == "checksum_mismatch")
        #expect(corrupt.download?.verified == false)
        #expect(corrupt.download?.state == .failed)

        let large = await Self.probe(Self.source(.download, "\(base)/download/\(size)?seed=5") { $0.maxBytes = 1_000_000 })
        #expect(large.failure?.reason == "too_large")
        #expect(large.download?.state == .failed)
        #expect(try await sim.terminate() == 0)
    }
}
