import LookoutCore
import ResilientHTTP

/// Renders `/metrics` from the monitor's board and state.
public struct MetricsPage: Sendable {
    public let monitor: Monitor
    public let version: String

    public init(monitor: Monitor, version: String = ResilientHTTPVersion.string) {
        self.monitor = monitor
        self.version = version
    }

    public func render() -> String {
        let entries = monitor.board.snapshot()
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
        renderDownloads(entries, &writer)

        let reload = monitor.reloadStatus
        writer.family("lookout_config_last_reload_successful", type: .gauge, help: "Whether the last config reload succeeded.")
        writer.sample("lookout_config_last_reload_successful", value: reload.successful ? 1 : 0)
        writer.family("lookout_config_last_reload_success_timestamp_seconds", type: .gauge, help: "When the config was last loaded successfully.")
        writer.sample("lookout_config_last_reload_success_timestamp_seconds", value: Double(reload.lastSuccessMs) / 1000)
        writer.family("lookout_network_online", type: .gauge, help: "Whether Lookout's own network is up (0 while offline).")
        writer.sample("lookout_network_online", value: monitor.connectivity.isOffline ? 0 : 1)
        let shard = monitor.shard
        writer.family("lookout_shard_info", type: .gauge, help: "The shard this instance probes; always 1.")
        writer.sample("lookout_shard_info", labels: [("index", "\(shard.index)"), ("count", "\(shard.count)")], value: 1)
        let stats = monitor.scheduler.statistics
        writer.family("lookout_scheduler_probes_started_total", type: .counter, help: "Scheduled probes started.")
        writer.sample("lookout_scheduler_probes_started_total", value: Double(stats.started))
        writer.family("lookout_scheduler_late_starts_total", type: .counter, help: "Scheduled probes that started more than 1 s after their tick.")
        writer.sample("lookout_scheduler_late_starts_total", value: Double(stats.lateStarts))
        writer.family("lookout_scheduler_skipped_ticks_total", type: .counter, help: "Ticks skipped because the previous run of the source was still going.")
        writer.sample("lookout_scheduler_skipped_ticks_total", value: Double(stats.skippedTicks))
        writer.family("lookout_build_info", type: .gauge, help: "Lookout's version; always 1.")
        writer.sample("lookout_build_info", labels: [("version", version)], value: 1)
        return writer.text
    }

    private func renderDownloads(_ entries: [SourceStatusBoard.Entry], _ writer: inout ExpositionWriter) {
        let downloads = entries.filter { $0.source.kind == .download }
        guard !downloads.isEmpty else { return }
        writer.family("lookout_download_bytes_total", type: .counter, help: "Bytes received by finished download probes.")
        for entry in downloads {
            writer.sample("lookout_download_bytes_total", labels: [("source", entry.source.name)], value: Double(entry.downloadBytesTotal))
        }
        writer.family("lookout_download_throughput_bytes_per_second", type: .gauge, help: "Throughput of the current or last download.")
        for entry in downloads {
            writer.sample("lookout_download_throughput_bytes_per_second", labels: [("source", entry.source.name)], value: entry.download?.throughputBytesPerSecond ?? 0)
        }
        writer.family("lookout_download_progress_ratio", type: .gauge, help: "Share of the current or last download received (0 when the size is unknown).")
        for entry in downloads {
            writer.sample("lookout_download_progress_ratio", labels: [("source", entry.source.name)], value: entry.download?.ratio ?? 0)
        }
        writer.family("lookout_download_state", type: .gauge, help: "The download's state; 1 for the current one.")
        for entry in downloads {
            let state = entry.download?.state ?? .notStarted
            for candidate in DownloadState.allCases {
                writer.sample("lookout_download_state", labels: [("source", entry.source.name), ("state", candidate.rawValue)], value: candidate == state ? 1 : 0)
            }
        }
        writer.family("lookout_download_verify_failures_total", type: .counter, help: "Downloads whose SHA-256 did not match.")
        for entry in downloads {
            writer.sample("lookout_download_verify_failures_total", labels: [("source", entry.source.name)], value: Double(entry.verifyFailures))
        }
    }
}
