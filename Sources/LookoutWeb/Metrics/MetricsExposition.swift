internal import CMemory
import Foundation
import LookoutCore
import LookoutStore
import MicroHTTPServer
import ResilientHTTP
import Synchronization

/// Renders `/metrics` (the Prometheus exposition) from one snapshot of the registry.
package struct MetricsExposition: Sendable {
    package let context: LookoutContext
    package let version: String

    package init(context: LookoutContext, version: String = LookoutVersion.string) {
        self.context = context
        self.version = version
    }

    /// The exposition as text; `nowMs` moves the clock the windows are read at (tests).
    package func render(nowMs: Int64 = Timestamp.nowMs()) -> String {
        write(nowMs: nowMs).text
    }

    /// The exposition, ready to send without another copy.
    package func renderBody() -> OwnedBytes {
        write().take()
    }

    private func write(nowMs: Int64 = Timestamp.nowMs()) -> ExpositionWriter {
        let snapshot = context.monitor.snapshot(nowMs: nowMs)
        let names = snapshot.names
        let tallies = snapshot.records.map(\.tally)
        let writer = ExpositionWriter()
        // Room for the whole exposition up front, from the last one's size (at first from the
        // detail: about 900 bytes a source by default, 3,400 in full): growing a 30 MB buffer
        // copies it and touches twice the memory.
        let perSource = snapshot.config.metricsDetail == .full ? 3400 : 1000
        writer.reserve(max(names.count * perSource, MetricsExposition.lastSize.load(ordering: .relaxed) * 21 / 20))
        // With `location`, every per-source series carries it: rules can ask how many locations
        // see a source down (deploy/lookout-location-rules.yml).
        let place = MetricsExposition.place(snapshot)
        let prefixes = ExpositionWriter.Labels.prefixes("source", names, place)
        // `default`: at most 15 series for a healthy source; a failing one adds what explains
        // it (status code, breaker, errors). `full`: every phase, window, state and bucket.
        let full = snapshot.config.metricsDetail == .full

        writer.family("lookout_probe_success", type: .gauge, help: "Whether the last probe of the source succeeded (1) or failed (0).")
        for i in tallies.indices where tallies[i].probed {
            writer.sample("lookout_probe_success", prefixes, i, value: tallies[i].lastOk ? 1 : 0)
        }
        // What the paging rules follow: the source's outage policy (two failed probes in a row
        // by default), so Prometheus rules page and resolve as Lookout's own do.
        writer.family(
            "lookout_source_down", type: .gauge,
            help: "Whether the source is down by its outage policy (1), its failed probes having opened an outage that no success has ended yet.")
        for i in tallies.indices where tallies[i].probed {
            writer.sample("lookout_source_down", prefixes, i, value: snapshot.records[i].outage.down ? 1 : 0)
        }
        // For dashboards and joins: the group and kind of each source (`* on (source) group_left (group)`).
        writer.family("lookout_source_info", type: .gauge, help: "A configured source's kind and group (empty when ungrouped); always 1.")
        // Not `for record in snapshot.records`: that copied each whole record, a tenth of a
        // scrape at 10,000 sources.
        let statusPage = snapshot.config.statusPage
        let sources = snapshot.sources
        let info = ExpositionWriter.Labels.suffixes(["kind", "group"], count: sources.count) { i, name in
            name == 0 ? sources[i].kind.rawValue : statusPage.group(of: sources[i]) ?? ""
        }
        for i in sources.indices {
            writer.sample("lookout_source_info", prefixes, i, info, i, value: 1)
        }
        // One meaning of latency: one attempt's, when an answer came (a refused connection has
        // none). The summary's quantiles are the page's p50/p95 (the last 64 attempts), so a
        // dashboard and the page agree; its sum and count cover every attempt since the start.
        writer.family(
            "lookout_probe_latency_seconds", type: .summary,
            help: "Latency of one attempt that got an answer: p50 and p95 of the last 64, as the status page shows them.")
        let quantiles = ExpositionWriter.Labels.suffixes("quantile", ["0.5", "0.95"])
        for i in tallies.indices where tallies[i].probed && !tallies[i].isDownload {
            let recent = snapshot.records[i].recentDurations
            if let p50 = recent.quantile(0.5), let p95 = recent.quantile(0.95) {
                writer.sample("lookout_probe_latency_seconds", prefixes, i, quantiles, 0, value: p50)
                writer.sample("lookout_probe_latency_seconds", prefixes, i, quantiles, 1, value: p95)
            }
            writer.sample("lookout_probe_latency_seconds_sum", prefixes, i, value: tallies[i].duration.sum)
            writer.sample("lookout_probe_latency_seconds_count", prefixes, i, value: Double(tallies[i].duration.count))
        }
        writer.family("lookout_probe_duration_seconds", type: .histogram, help: "Latency of one attempt that got an answer, in buckets (metrics.detail full).")
        let duration = ExpositionWriter.HistogramLayout("lookout_probe_duration_seconds", bounds: Histogram.latencyBuckets)
        for i in tallies.indices where full && tallies[i].probed && !tallies[i].isDownload {
            writer.histogram(duration, prefixes, i, tallies[i].duration)
        }
        writer.family(
            "lookout_probe_call_duration_seconds", type: .summary,
            help: "Duration of whole probe calls, retries and backoff waits included (downloads: the whole transfer).")
        for i in tallies.indices where tallies[i].probed && (full || tallies[i].isDownload) {
            writer.sample("lookout_probe_call_duration_seconds_sum", prefixes, i, value: tallies[i].callSecondsSum)
            writer.sample("lookout_probe_call_duration_seconds_count", prefixes, i, value: Double(tallies[i].calls))
        }
        writer.family("lookout_probe_phase_seconds", type: .gauge, help: "Duration of each phase of the last probe's final attempt.")
        let phases = ExpositionWriter.Labels.suffixes("phase", ["dns", "connect", "tls", "ttfb", "transfer"])
        for i in tallies.indices where full && tallies[i].probed {
            let last = tallies[i].lastPhases
            writer.sample("lookout_probe_phase_seconds", prefixes, i, phases, 0, value: last.dns)
            writer.sample("lookout_probe_phase_seconds", prefixes, i, phases, 1, value: last.connect)
            writer.sample("lookout_probe_phase_seconds", prefixes, i, phases, 2, value: last.tls)
            writer.sample("lookout_probe_phase_seconds", prefixes, i, phases, 3, value: last.ttfb)
            writer.sample("lookout_probe_phase_seconds", prefixes, i, phases, 4, value: last.transfer)
        }
        writer.family(
            "lookout_probe_http_status_code", type: .gauge,
            help: "HTTP status of the last probe's response; 0 when none arrived. Kept while the breaker holds calls back.")
        for i in tallies.indices where tallies[i].probed && (full || !tallies[i].lastOk) {
            writer.sample("lookout_probe_http_status_code", prefixes, i, value: Double(tallies[i].lastHTTPStatus))
        }
        // 0 for a source probed that never succeeded, so `time() - x > 300` fires for it too;
        // absent only before its first probe.
        writer.family(
            "lookout_last_success_timestamp_seconds", type: .gauge,
            help: "When the source's last successful probe started; 0 if it was probed and never succeeded.")
        for i in tallies.indices where tallies[i].probed || tallies[i].lastSuccessMs != nil {
            writer.sample("lookout_last_success_timestamp_seconds", prefixes, i, value: Double(tallies[i].lastSuccessMs ?? 0) / 1000)
        }
        writer.family("lookout_probes_total", type: .counter, help: "Probes finished, by result.")
        let results = ExpositionWriter.Labels.suffixes("result", ["success", "failure"])
        for i in tallies.indices {
            writer.sample("lookout_probes_total", prefixes, i, results, 0, value: Double(tallies[i].successes))
            writer.sample("lookout_probes_total", prefixes, i, results, 1, value: Double(tallies[i].failures))
        }
        renderClient(snapshot, tallies, prefixes, full: full, writer)
        renderHealth(snapshot, tallies, prefixes, full: full, writer)
        renderDownloads(tallies, prefixes, full: full, writer)
        renderAlertsAndStore(snapshot, writer)

        let reload = snapshot.reload
        writer.single(
            "lookout_config_last_reload_successful", type: .gauge, help: "Whether the last config reload succeeded.", value: reload.successful ? 1 : 0)
        writer.single(
            "lookout_config_last_reload_success_timestamp_seconds", type: .gauge, help: "When the config was last loaded successfully.",
            value: Double(reload.lastSuccessMs) / 1000)
        writer.single("lookout_network_online", type: .gauge, help: "Whether Lookout's own network is up (0 while offline).", value: snapshot.offline ? 0 : 1)
        let shard = snapshot.shard
        writer.single(
            "lookout_shard_info", type: .gauge, help: "The shard this instance probes; always 1.",
            labels: [("index", "\(shard.index)"), ("count", "\(shard.count)")], value: 1)
        let stats = snapshot.scheduler
        writer.single("lookout_scheduler_probes_started_total", type: .counter, help: "Scheduled probes started.", value: Double(stats.started))
        writer.single(
            "lookout_scheduler_late_starts_total", type: .counter, help: "Scheduled probes that started more than 1 s after their tick.",
            value: Double(stats.lateStarts))
        writer.single(
            "lookout_probe_endpoint_refused_total", type: .counter, help: "/probe calls answered 503 because too many ran at once.",
            value: Double(ProbeEndpoint.refused.load(ordering: .relaxed)))
        writer.single(
            "lookout_scheduler_skipped_ticks_total", type: .counter, help: "Ticks skipped because the previous run of the source was still going.",
            value: Double(stats.skippedTicks))
        writer.single(
            "lookout_log_lines_dropped_total", type: .counter,
            help: "Log lines dropped because stderr was not taking them (a full pipe nobody reads, or a reader that has gone).",
            value: Double(LogWriter.droppedLines))
        writer.single(
            "lookout_build_info", type: .gauge, help: "Lookout's version; always 1.",
            labels: [("version", version)] + place + (context.replica.map { [("replica", $0)] } ?? []), value: 1)
        MetricsExposition.renderVendors(context.monitor.vendors, snapshot, writer)
        ProcessMetrics.render(writer)
        writer.single(
            "lookout_db_memory_bytes", type: .gauge,
            help: "Memory SQLite holds for its caches and statements, all connections together (soft limit 24 MiB).",
            value: Double(LookoutDatabase.memoryUsedBytes))
        let heap = lookout_heap_allocated_bytes()
        if heap >= 0 {
            writer.single(
                "lookout_heap_allocated_bytes", type: .gauge,
                help: "Bytes allocated and not yet freed (the live heap); resident memory less this is what the allocator keeps free, code and mapped files.",
                value: Double(heap))
        }
        let free = lookout_heap_free_bytes()
        if free >= 0 {
            writer.single(
                "lookout_heap_free_bytes", type: .gauge,
                help: "Bytes the allocator holds free and has not returned to the system (its page heap and caches).", value: Double(free))
        }
        MetricsExposition.lastSize.store(writer.size, ordering: .relaxed)
        return writer
    }

    /// `location="…"` when the config names one: on every per-source series and build_info.
    static func place(_ snapshot: RegistrySnapshot) -> [(String, String)] {
        snapshot.config.location.map { [("location", $0)] } ?? []
    }

    /// The size of the last exposition, in bytes.
    private static let lastSize = Atomic<Int>(0)

    private func renderClient(
        _ snapshot: RegistrySnapshot, _ tallies: [SourceRecord.Tally], _ prefixes: ExpositionWriter.Labels, full: Bool, _ writer: ExpositionWriter
    ) {
        let now = snapshot.nowMs
        let names = snapshot.names
        let counters = snapshot.records.map(\.client)
        let breakers = snapshot.breakers
        let tokens = snapshot.tokens
        let place = MetricsExposition.place(snapshot)

        writer.family("lookout_errors_total", type: .counter, help: "Failed attempts, by category and reason.")
        for i in names.indices where !counters[i].errors.isEmpty {
            for (key, value) in counters[i].errors.sorted(by: { $0.key < $1.key }) {
                let parts = key.split(separator: "/", maxSplits: 1).map(String.init)
                writer.sample(
                    "lookout_errors_total", labels: [("source", names[i]), ("category", parts[0]), ("reason", parts[1])] + place, value: Double(value))
            }
        }
        writer.family("lookout_retries_total", type: .counter, help: "Retries made, by the category of the failure retried.")
        let categories = ExpositionWriter.Labels.suffixes("category", ErrorCategory.allCases)
        for i in names.indices where !counters[i].retries.isEmpty {
            for (category, value) in counters[i].retries.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
                writer.sample("lookout_retries_total", prefixes, i, categories, ErrorCategory.allCases.firstIndex(of: category)!, value: Double(value))
            }
        }
        writer.family("lookout_calls_total", type: .counter, help: "Finished calls, by whether they succeeded and were retried.")
        let kinds = ExpositionWriter.Labels.suffixes("kind", CallKind.allCases)
        for i in names.indices where full {
            for (index, kind) in CallKind.allCases.enumerated() {
                writer.sample("lookout_calls_total", prefixes, i, kinds, index, value: Double(counters[i].calls[kind]))
            }
        }
        writer.family("lookout_retry_budget_exhausted_total", type: .counter, help: "Retries refused because the source's retry budget was spent.")
        for i in names.indices where full || counters[i].retryBudgetExhausted > 0 {
            writer.sample("lookout_retry_budget_exhausted_total", prefixes, i, value: Double(counters[i].retryBudgetExhausted))
        }
        writer.family("lookout_circuit_breaker_state", type: .gauge, help: "The circuit breaker's state; 1 for the current one.")
        let breakerStates = ExpositionWriter.Labels.suffixes("state", BreakerState.allCases)
        for i in names.indices {
            let state = breakers[i]?.state ?? .closed
            // By default only the current state's series (always 1).
            for (index, candidate) in BreakerState.allCases.enumerated() where full || candidate == state {
                writer.sample("lookout_circuit_breaker_state", prefixes, i, breakerStates, index, value: candidate == state ? 1 : 0)
            }
        }
        writer.family("lookout_circuit_breaker_opens_total", type: .counter, help: "Times the circuit breaker opened.")
        for i in names.indices where full || (breakers[i]?.openCount ?? 0) > 0 {
            writer.sample("lookout_circuit_breaker_opens_total", prefixes, i, value: Double(breakers[i]?.openCount ?? 0))
        }
        writer.family("lookout_circuit_breaker_not_permitted_calls_total", type: .counter, help: "Calls refused while the breaker was open.")
        for i in names.indices where full || (breakers[i]?.notPermittedCalls ?? 0) > 0 {
            writer.sample("lookout_circuit_breaker_not_permitted_calls_total", prefixes, i, value: Double(breakers[i]?.notPermittedCalls ?? 0))
        }
        writer.family("lookout_circuit_breaker_open_seconds", type: .gauge, help: "How long the breaker has been open so far; 0 when closed.")
        for i in names.indices where full || (breakers[i]?.state ?? .closed) != .closed {
            writer.sample("lookout_circuit_breaker_open_seconds", prefixes, i, value: Double(breakers[i]?.openDurationMs(nowMs: now) ?? 0) / 1000)
        }
        writer.family("lookout_rate_limiter_available_tokens", type: .gauge, help: "Tokens left in the source's rate limiter.")
        for i in names.indices where full {
            if let level = tokens[i] {
                writer.sample("lookout_rate_limiter_available_tokens", prefixes, i, value: level)
            }
        }
        writer.family("lookout_tls_cert_expiry_timestamp_seconds", type: .gauge, help: "When the first of the source's TLS certificates expires.")
        for i in tallies.indices {
            if let expiry = tallies[i].certificateExpirySeconds {
                writer.sample("lookout_tls_cert_expiry_timestamp_seconds", prefixes, i, value: expiry)
            }
        }
        writer.family(
            "lookout_domain_expiry_timestamp_seconds", type: .gauge, help: "When the registration of the source's domain expires, by RDAP (domain_expiry).")
        // Built only when some source is watched: a label per source on every scrape otherwise.
        let watched = tallies.contains { $0.domainExpirySeconds != nil }
        let domains = ExpositionWriter.Labels.suffixes("domain", watched ? snapshot.records.map { $0.source.registrationDomain ?? "" } : [])
        for i in tallies.indices where watched && snapshot.records[i].source.registrationDomain != nil {
            if let expiry = tallies[i].domainExpirySeconds {
                writer.sample("lookout_domain_expiry_timestamp_seconds", prefixes, i, domains, i, value: expiry)
            }
        }
        renderSLA(tallies, prefixes, writer)
    }

    /// Each `sla` source's standing: this period's uptime so far and the budget left, the last
    /// period's uptime once ended, and the target.
    private func renderSLA(_ tallies: [SourceRecord.Tally], _ prefixes: ExpositionWriter.Labels, _ writer: ExpositionWriter) {
        writer.family("lookout_sla_uptime_ratio", type: .gauge, help: "Uptime by the source's SLA measure over its current (or previous) period.")
        let promised = tallies.contains { $0.sla != nil }
        let current = ExpositionWriter.Labels.suffixes("period", promised ? ["current", "previous"] : [])
        for i in tallies.indices {
            guard let sla = tallies[i].sla else { continue }
            if let uptime = sla.uptime { writer.sample("lookout_sla_uptime_ratio", prefixes, i, current, 0, value: uptime) }
            if let uptime = sla.previousUptime { writer.sample("lookout_sla_uptime_ratio", prefixes, i, current, 1, value: uptime) }
        }
        writer.family("lookout_sla_budget_remaining_ratio", type: .gauge, help: "Of this SLA period's downtime budget, the share left (0 or less once spent).")
        for i in tallies.indices {
            if let left = tallies[i].sla?.budgetRemaining { writer.sample("lookout_sla_budget_remaining_ratio", prefixes, i, value: left) }
        }
        writer.family("lookout_sla_target_ratio", type: .gauge, help: "The uptime the source's SLA promises.")
        for i in tallies.indices {
            if let target = tallies[i].sla?.target { writer.sample("lookout_sla_target_ratio", prefixes, i, value: target) }
        }
    }

    private func renderHealth(
        _ snapshot: RegistrySnapshot, _ tallies: [SourceRecord.Tally], _ prefixes: ExpositionWriter.Labels, full: Bool, _ writer: ExpositionWriter
    ) {
        let summaries = snapshot.summaries
        // By default the windows the deploy kit's rules and dashboard read: 5m, 24h (a healthy
        // source's budget of 15 series holds the old name's 5m too, for one release). Shorter and
        // longer windows come with `full`, or from `rate(lookout_probes_total[…])`.
        let rateWindows = Array(HealthWindow.errorRates.prefix(4).map(\.ms).enumerated())
        let shown = full ? rateWindows[...] : rateWindows[1...1]
        let rateLabels = ExpositionWriter.Labels.suffixes("window", HealthWindow.errorRates.map(\.label))
        // A window without a probe (a source probed less often than the window) says what the
        // last probe said: a down source's ratio never vanishes from a scrape, so a Prometheus
        // rule on it does not resolve mid-outage.
        func errorRatios(_ name: StaticString, windows: ArraySlice<(offset: Int, element: Int64)>) {
            for i in summaries.indices {
                guard let summary = summaries[i] else { continue }
                for (index, ms) in windows {
                    if let rate = summary.errorRate(windowMs: ms) ?? (tallies[i].probed ? (tallies[i].lastOk ? 0 : 1) : nil) {
                        writer.sample(name, prefixes, i, rateLabels, index, value: rate)
                    }
                }
            }
        }
        writer.family(
            "lookout_error_ratio", type: .gauge, help: "Failed probes ÷ probes over the window; the last probe's outcome (0 or 1) when none fell in it.")
        errorRatios("lookout_error_ratio", windows: shown)
        // The old name, kept for one release: window 5m (what the shipped rules read) by default.
        writer.family(
            "lookout_error_rate", type: .gauge,
            help: "Deprecated: use lookout_error_ratio (the same values); removed in the next release.")
        errorRatios("lookout_error_rate", windows: shown)
        writer.family("lookout_retry_success_ratio", type: .gauge, help: "Retried calls that then succeeded ÷ retried calls, over 15 minutes.")
        for i in summaries.indices {
            let summary = summaries[i]
            if let ratio = summary?.retrySuccessRatio {
                writer.sample("lookout_retry_success_ratio", prefixes, i, value: ratio)
            }
        }
        writer.family("lookout_availability_ratio", type: .gauge, help: "Successful probes ÷ probes over the window.")
        let availabilityWindows = HealthWindow.availabilities.prefix(full ? 2 : 1).map(\.ms)
        let availabilityLabels = ExpositionWriter.Labels.suffixes("window", HealthWindow.availabilities.map(\.label))
        for i in summaries.indices {
            let summary = summaries[i]
            guard let summary else { continue }
            for (index, ms) in availabilityWindows.enumerated() {
                if let availability = summary.availability(windowMs: ms) {
                    writer.sample("lookout_availability_ratio", prefixes, i, availabilityLabels, index, value: availability)
                }
            }
        }
        let outageHelp: [(StaticString, String)] = [
            (
                "lookout_last_outage_duration_seconds",
                "How long the source's last outage that has ended lasted, from its first failed probe to the success that ended it."
            ),
            ("lookout_recovery_seconds", "Deprecated: use lookout_last_outage_duration_seconds (the same values); removed in the next release."),
        ]
        for (name, help) in outageHelp {
            writer.family("\(name)", type: .gauge, help: help)
            for i in summaries.indices {
                if let recovery = summaries[i]?.lastRecoveryMs { writer.sample(name, prefixes, i, value: Double(recovery) / 1000) }
            }
        }
        writer.single(
            "lookout_partial_failure_ratio", type: .gauge, help: "Share of the last 15 one-minute rounds in which some but not all sources failed.",
            value: snapshot.partialFailureRatio)
    }

    private func renderAlertsAndStore(_ snapshot: RegistrySnapshot, _ writer: ExpositionWriter) {
        let alerts = context.alerts
        var counts: [String: (String, Int)] = [:]
        for rule in alerts.rules { counts[rule.name] = (rule.severity, 0) }
        let firing = alerts.firing
        for alert in firing { counts[alert.rule, default: (alert.severity, 0)].1 += 1 }
        writer.family("lookout_alerts_firing", type: .gauge, help: "Alerts firing now, by rule.")
        for (name, (severity, count)) in counts.sorted(by: { $0.key < $1.key }) {
            writer.sample("lookout_alerts_firing", labels: [("alertname", name), ("severity", severity)], value: Double(count))
        }
        // One series per firing alert, so a dashboard's table can name the source.
        writer.family("lookout_alert_active", type: .gauge, help: "A firing alert, with its source (empty for service-wide rules); always 1.")
        for alert in firing.sorted(by: { ($0.rule, $0.source ?? "") < ($1.rule, $1.source ?? "") }) {
            writer.sample(
                "lookout_alert_active",
                labels: [("alertname", alert.rule), ("severity", alert.severity), ("source", alert.source ?? "")] + MetricsExposition.place(snapshot),
                value: 1)
        }
        let unstored = alerts.unstoredChanges
        writer.single(
            "lookout_alert_changes_unstored", type: .gauge,
            help: "Alert changes waiting in memory for the database (disk full, read-only file); stored in order when it works again.",
            value: Double(unstored.pending))
        writer.single(
            "lookout_alert_changes_dropped_total", type: .counter, help: "Alert changes dropped because too many waited for the database.",
            value: Double(unstored.dropped))
        let hooks = snapshot.config.hooks.map(\.name)
        if !hooks.isEmpty {
            let stats = context.outbox.hookStats
            writer.family("lookout_alert_notifications_total", type: .counter, help: "Notification attempts, by hook and result.")
            for hook in hooks {
                writer.sample(
                    "lookout_alert_notifications_total", labels: [("hook", hook), ("result", "delivered")], value: Double(stats[hook]?.delivered ?? 0))
                writer.sample("lookout_alert_notifications_total", labels: [("hook", hook), ("result", "failed")], value: Double(stats[hook]?.failed ?? 0))
            }
            if let backlog = try? OutboxStore(database: context.database).backlog() {
                writer.family("lookout_alert_outbox_pending", type: .gauge, help: "Notifications waiting for delivery, by hook.")
                for hook in hooks {
                    writer.sample("lookout_alert_outbox_pending", labels: [("hook", hook)], value: Double(backlog[hook]?.pending ?? 0))
                }
                writer.family(
                    "lookout_alert_outbox_set_aside", type: .gauge,
                    help: "Notifications their receiver refused (4xx) too often, set aside until POST /api/v1/hooks/NAME/retry, by hook.")
                for hook in hooks {
                    writer.sample("lookout_alert_outbox_set_aside", labels: [("hook", hook)], value: Double(backlog[hook]?.setAside ?? 0))
                }
            }
        }
        let recordWriter = context.writer
        let health = recordWriter.status
        writer.family("lookout_db_write_duration_seconds", type: .histogram, help: "Duration of the writer's batched transactions.")
        writer.histogram("lookout_db_write_duration_seconds", labels: [], health.writeDurations)
        writer.single(
            "lookout_db_write_errors_total", type: .counter, help: "Batches that could not be written (disk full, read-only...).",
            value: Double(health.failedFlushes))
        writer.single(
            "lookout_db_records_dropped_total", type: .counter, help: "Records dropped because too many waited for a failing database.",
            value: Double(health.droppedRecords))
        writer.single("lookout_db_pending_records", type: .gauge, help: "Records waiting to be written.", value: Double(recordWriter.pendingCount))
        writer.single(
            "lookout_db_pending_rollups", type: .gauge,
            help: "Minute rollups (one a source and minute) held in memory: the current minute's, and while writes fail, those waiting.",
            value: Double(recordWriter.pendingRollups))
        let database = context.database
        writer.single("lookout_db_size_bytes", type: .gauge, help: "Size of the SQLite database and its WAL.", value: Double(database.sizeBytes))
        // Counted in the transactions that add and delete the rows: no table scan per scrape.
        if let rows = try? RecordWriter.rowCounts(database), !rows.isEmpty {
            writer.family("lookout_db_rows", type: .gauge, help: "Rows of probe history per tier: raw results, minute, hour and day rollups.")
            for tier in ["raw", "minute", "hour", "day"] { writer.sample("lookout_db_rows", labels: [("tier", tier)], value: Double(rows[tier] ?? 0)) }
        }
        let damaged = if case .damaged = database.integrityStatus { true } else { false }
        writer.single("lookout_db_damaged", type: .gauge, help: "1 when PRAGMA quick_check found damage at start, else 0.", value: damaged ? 1 : 0)
        writer.single(
            "lookout_db_writable", type: .gauge, help: "0 while the database file cannot be opened for writing (records wait in memory), else 1.",
            value: database.unwritableReason == nil ? 1 : 0)
        let server = context.server
        writer.single(
            "lookout_http_slow_connections_closed_total", type: .counter,
            help: "Connections closed because they did not deliver a whole request in time: slow clients (slowloris) and kept-alive connections left idle.",
            value: Double(server.slowConnectionsClosed))
    }

    private func renderDownloads(_ tallies: [SourceRecord.Tally], _ prefixes: ExpositionWriter.Labels, full: Bool, _ writer: ExpositionWriter) {
        guard tallies.contains(where: \.isDownload) else { return }
        // By default a download's throughput only; the bytes, progress, states and checksum
        // failures with `full` (a failed checksum is an error of its own reason either way).
        writer.family("lookout_download_bytes_total", type: .counter, help: "Bytes received by finished download probes.")
        for i in tallies.indices where full && tallies[i].isDownload {
            writer.sample("lookout_download_bytes_total", prefixes, i, value: Double(tallies[i].downloadBytesTotal))
        }
        writer.family("lookout_download_throughput_bytes_per_second", type: .gauge, help: "Throughput of the current or last download.")
        for i in tallies.indices where tallies[i].isDownload {
            writer.sample("lookout_download_throughput_bytes_per_second", prefixes, i, value: tallies[i].downloadThroughput)
        }
        writer.family("lookout_download_progress_ratio", type: .gauge, help: "Share of the current or last download received (0 when the size is unknown).")
        for i in tallies.indices where full && tallies[i].isDownload {
            writer.sample("lookout_download_progress_ratio", prefixes, i, value: tallies[i].downloadRatio)
        }
        writer.family("lookout_download_state", type: .gauge, help: "The download's state; 1 for the current one.")
        let downloadStates = ExpositionWriter.Labels.suffixes("state", DownloadState.allCases)
        for i in tallies.indices where full && tallies[i].isDownload {
            let state = tallies[i].downloadState
            for (index, candidate) in DownloadState.allCases.enumerated() {
                writer.sample("lookout_download_state", prefixes, i, downloadStates, index, value: candidate == state ? 1 : 0)
            }
        }
        writer.family("lookout_download_verify_failures_total", type: .counter, help: "Downloads whose SHA-256 did not match.")
        for i in tallies.indices where full && tallies[i].isDownload {
            writer.sample("lookout_download_verify_failures_total", prefixes, i, value: Double(tallies[i].verifyFailures))
        }
    }
}
