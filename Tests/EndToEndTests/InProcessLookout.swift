import Foundation
import Logging
import LookoutCore
import LookoutService
import ResilientHTTP
import ServiceLifecycle
import TestSupport

/// Lookout started in this process, as `serve` starts it (`LookoutApp.build` and a
/// ServiceGroup), on a port of its own and a database in memory unless the config names one:
///
/// ```swift
/// let lookout = try await InProcessLookout.start("sources: [{name: a, url: \"http://127.0.0.1:1/\"}]\n")
/// let metrics = await CurlTransport().perform(TransferRequest(url: lookout.base + "/metrics", timeout: .patient))
/// try await lookout.stop()
/// ```
struct InProcessLookout {
    let app: LookoutApp
    let base: String
    let directory: URL
    private let group: ServiceGroup
    private let running: Task<Void, any Error>

    /// Writes `yaml` (with `listen: 127.0.0.1:0` and `database: ":memory:"` unless it sets
    /// them) to a config file and starts Lookout on it.
    static func start(_ yaml: String) async throws -> InProcessLookout {
        let directory = try makeTemporaryDirectory("in-process")
        var text = yaml
        if !text.contains("listen:") { text = "listen: 127.0.0.1:0\n" + text }
        if !text.contains("database:") { text = "database: \":memory:\"\n" + text }
        let path = directory.appendingPathComponent("lookout.yml").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        let logger = Logger(label: "in-process")
        let app = try LookoutApp.build(config: try LookoutApp.loadConfig(path: path), options: .init(configPath: path), logger: logger)
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(services: app.services, logger: logger))
        let running = Task { try await group.run() }
        return InProcessLookout(app: app, base: "http://127.0.0.1:\(app.port)", directory: directory, group: group, running: running)
    }

    /// `/metrics` once each of `sources` has been probed (its `lookout_probe_success` is there).
    func metricsOnceProbed(_ sources: [String]) async throws -> String {
        let http = CurlTransport()
        return try await eventually("a probe of each of \(sources.joined(separator: ", "))") {
            let text = await http.perform(TransferRequest(url: base + "/metrics", timeout: .patient)).bodyText
            return sources.allSatisfy { text.contains("lookout_probe_success{source=\"\($0)\"}") } ? text : nil
        }
    }

    /// Shuts down as SIGTERM does (the server drains, the writer flushes) and removes the files.
    func stop() async throws {
        await group.triggerGracefulShutdown()
        try await running.value
        try? FileManager.default.removeItem(at: directory)
    }
}
