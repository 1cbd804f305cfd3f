import Logging
import LookoutCore
import LookoutWeb
import MicroHTTPServer
import Testing

/// `/probe` past its concurrency limit answers 503 with Retry-After and counts it, before any
/// work (or memory) is spent on the target.
@Suite("/probe limit")
struct ProbeLimitTests {
    @Test func pastTheLimitIsA503WithRetryAfter() async throws {
        var config = LookoutConfig(sources: [SourceConfig(name: "a", url: "http://127.0.0.1:1/")])
        config.probeModules = try ConfigLoader.parse(
            """
            sources: [{name: a, url: "http://127.0.0.1:1/"}]
            probe_modules: {http_2xx: {kind: http, timeout: 1s, allow: ["^http://127\\\\.0\\\\.0\\\\.1:1/"]}}
            """, file: "t.yml"
        ).probeModules
        let monitor = Monitor(config: config, configPath: nil, logger: Logger(label: "test"))
        let before = ProbeEndpoint.refused.load(ordering: .relaxed)
        let full = ProbeEndpoint(context: try LookoutContext(monitor: monitor), concurrencyLimit: 0)
        let response = await full.handle(HTTPRequest(method: "GET", path: "/probe", query: ["target": "http://127.0.0.1:1/", "module": "http_2xx"]))
        #expect(response.status == 503)
        #expect(response.headers["Retry-After"] == "1")
        #expect(ProbeEndpoint.refused.load(ordering: .relaxed) >= before + 1)
        // Within the limit the probe runs (and fails: nothing listens on port 1).
        let open = ProbeEndpoint(context: try LookoutContext(monitor: monitor), concurrencyLimit: 1)
        let probed = await open.handle(HTTPRequest(method: "GET", path: "/probe", query: ["target": "http://127.0.0.1:1/", "module": "http_2xx"]))
        #expect(probed.status == 200)
    }
}
