import Foundation
import Logging
import ResilientHTTP
import Testing

@testable import LookoutCore

/// The transfer threads follow the schedule: one while the sources ask for up to
/// `CurlTransport.spreadAbove` probes a second, every thread past it, again at each reload.
@Suite("transfer threads")
struct TransferThreadsTests {
    func sources(_ count: Int, every interval: Duration) -> [SourceConfig] {
        (0..<count).map { index in
            var source = SourceConfig(name: "s\(index)", url: "http://127.0.0.1:1/\(index)")
            source.interval = interval
            return source
        }
    }

    @Test func theRateIsWhatTheIntervalsAskFor() {
        #expect(Monitor.probesPerSecond(sources(4, every: .milliseconds(500))) == 8)
        #expect(abs(Monitor.probesPerSecond(sources(30, every: .seconds(30))) - 1) < 1e-9)
        #expect(Monitor.probesPerSecond([]) == 0)
        // Sources that probe without libcurl's threads do not count.
        let own = [SourceKind.tcp, .dns, .icmp, .push].flatMap { kind in
            sources(3, every: .seconds(1)).map { source in
                var source = source
                source.kind = kind
                return source
            }
        }
        #expect(Monitor.probesPerSecond(own + sources(2, every: .seconds(1))) == 2)
    }

    @Test func aReloadPastTheRateSpreadsTransfersAndOneBelowItGathersThem() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("threads-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("lookout.yml").path
        func write(_ count: Int) throws {
            let lines = (0..<count).map { "  - {name: s\($0), url: \"http://127.0.0.1:1/\($0)\", interval: 1s}" }
            try ("database: \":memory:\"\nsources:\n" + lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        }
        try write(10)
        let transport = CurlTransport(threads: 2)
        let monitor = Monitor(
            config: try ConfigLoader.load(path: path, environment: [:]), configPath: path, transport: transport,
            logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
        monitor.start()
        try write(Int(CurlTransport.spreadAbove) + 1)
        guard case .reloaded = monitor.reloadConfig() else {
            Issue.record("the reload was refused")
            return
        }
        #expect(transport.threadsInUse == 2)
        try write(10)
        guard case .reloaded = monitor.reloadConfig() else {
            Issue.record("the second reload was refused")
            return
        }
        #expect(transport.threadsInUse == 1)
    }
}
