import Foundation
import Logging
import LookoutCore
import ResilientHTTP

extension LookoutBench {
    /// The process's resident bytes now (VmRSS).
    static func heapBytes() -> Int {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
    }

    /// `lookout-bench memory [SOURCES]`: what each part of a running monitor costs per source,
    /// as resident bytes after each step (the config, the registry and client, a day of health, the
    /// scheduler's tasks waiting for their next tick).
    static func memory(sources count: Int) async {
        var steps: [(String, Int)] = []
        var last = heapBytes()
        func step(_ name: String) {
            let now = heapBytes()
            steps.append((name, now - last))
            last = now
        }
        let sources = (0..<count).map { index in
            var source = SourceConfig(name: "source-\(index)", url: "http://127.0.0.1:9/\(index)", interval: .seconds(3600))
            source.group = "group-\(index % 10)"
            return source
        }
        let config = LookoutConfig(sources: sources)
        step("config")
        let monitor = Monitor(config: config, configPath: nil, logger: Logger(label: "bench") { _ in SwiftLogNoOpLogHandler() })
        step("monitor")
        monitor.start()
        step("registry")
        for source in sources { monitor.client.configure(upstream: source.name, policy: source.policy) }
        step("client")
        let now = Timestamp.nowMs()
        for source in sources {
            for minute in stride(from: 0, to: 1440, by: 5) {
                monitor.registry.record(
                    ProbeResult(source: source.name, timestampMs: now - Int64(minute) * 60_000, ok: true, httpStatus: 200, durationSeconds: 0.01))
            }
        }
        step("a day of health")
        let running = Task { await monitor.run() }
        try? await Task.sleep(for: .seconds(3))
        step("scheduler waiting")
        for (name, bytes) in steps {
            row("memory per source: \(name) (\(count) sources)", "lookout-bench memory \(count)", "\(bytes / count) B", "resident (VmRSS)", "")
        }
        running.cancel()
        _ = monitor
    }
}
