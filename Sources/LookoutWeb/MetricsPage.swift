import LookoutCore
import ResilientHTTP

/// Renders `/metrics` from the status board.
public struct MetricsPage: Sendable {
    public let board: SourceStatusBoard
    public let version: String

    public init(board: SourceStatusBoard, version: String = ResilientHTTPVersion.string) {
        self.board = board
        self.version = version
    }

    public func render() -> String {
        let entries = board.snapshot()
        let probed = entries.filter { $0.last != nil }
        var writer = ExpositionWriter()

        writer.family("lookout_probe_success", type: .gauge, help: "Whether the last probe of the source succeeded (1) or failed (0).")
        for entry in probed {
            writer.sample("lookout_probe_success", labels: [("source", entry.source.name)], value: entry.last!.ok ? 1 : 0)
        }
        writer.family("lookout_probe_duration_seconds", type: .histogram, help: "Duration of probes, retries included.")
        for entry in probed {
            writer.histogram(
                "lookout_probe_duration_seconds", labels: [("source", entry.source.name)], bounds: entry.duration.bounds,
                cumulativeCounts: entry.duration.cumulativeCounts, sum: entry.duration.sum, count: entry.duration.count)
        }
        writer.family("lookout_probe_http_status_code", type: .gauge, help: "HTTP status of the last probe's response; 0 when none arrived.")
        for entry in probed {
            writer.sample("lookout_probe_http_status_code", labels: [("source", entry.source.name)], value: Double(entry.last!.httpStatus ?? 0))
        }
        writer.family("lookout_probes_total", type: .counter, help: "Probes finished, by result.")
        for entry in entries {
            writer.sample("lookout_probes_total", labels: [("source", entry.source.name), ("result", "success")], value: Double(entry.successes))
            writer.sample("lookout_probes_total", labels: [("source", entry.source.name), ("result", "failure")], value: Double(entry.failures))
        }
        writer.family("lookout_build_info", type: .gauge, help: "Lookout's version; always 1.")
        writer.sample("lookout_build_info", labels: [("version", version)], value: 1)
        return writer.text
    }
}
