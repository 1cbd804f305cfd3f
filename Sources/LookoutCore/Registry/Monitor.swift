import Foundation
import Logging
import ResilientHTTP
import Synchronization

/// The monitoring loop as one service: the config in force, the scheduler, the status board, the
/// connectivity verdict, and reloads that keep the history, breaker state and schedule of the
/// sources that stay.
public final class Monitor: Sendable {
    /// The outcome of the last reload, for `/metrics` and `/-/reload`.
    public struct ReloadStatus: Sendable, Equatable {
        public var successful = true
        public var lastSuccessMs: Int64
        public var problems: [String] = []
    }

    public let board: SourceStatusBoard
    /// Error rates, retry success, availability and burn rates per source.
    public let health = HealthAnalyzer()
    public let scheduler: ProbeScheduler
    public let connectivity: ConnectivityMonitor
    public let client: ResilientClient
    /// Counters of the client's events; pass it to the client's `events` when creating it.
    public let clientMetrics: ClientMetrics
    let configPath: String?
    let shardOverride: Shard?
    let logger: Logger
    private let current: Mutex<LookoutConfig>
    private let reloadListeners = Mutex<[@Sendable () -> Void]>([])
    /// Breakers saved before a restart, put back when their source is first configured.
    private let savedBreakers = Mutex<[String: PersistedBreaker]>([:])
    private let reload = Mutex(ReloadStatus(lastSuccessMs: Timestamp.nowMs()))

    /// - Parameters:
    ///   - configPath: where `reload()` reads the config again; nil for a fixed config.
    ///   - shardOverride: `--shard I/N`, which wins over the config's `shard`.
    ///   - sinks: more receivers of every probe result (the store).
    public init(
        config: LookoutConfig, configPath: String?, shardOverride: Shard? = nil, clientMetrics: ClientMetrics = ClientMetrics(),
        client: ResilientClient, sinks: [any ProbeResultSink] = [], maxConcurrent: Int = 512, logger: Logger
    ) {
        self.clientMetrics = clientMetrics
        self.configPath = configPath
        self.shardOverride = shardOverride
        self.logger = logger
        self.client = client
        self.current = Mutex(config)
        let board = SourceStatusBoard()
        self.board = board
        let connectivity = ConnectivityMonitor { offline in
            if offline {
                logger.warning("network offline: Lookout cannot reach its canaries or most sources; per-source failures are held back")
            } else {
                logger.info("network online again")
            }
        }
        self.connectivity = connectivity
        let prober = SourceProber(client: client) { name, progress in board.updateDownload(name, progress) }
        self.scheduler = ProbeScheduler(
            prober: prober, sinks: [board, health] + sinks, connectivity: connectivity,
            fallback: { board.healthyFallback(for: $0) }, maxConcurrent: maxConcurrent, logger: logger)
    }

    public var config: LookoutConfig { current.withLock { $0 } }
    public var reloadStatus: ReloadStatus { reload.withLock { $0 } }
    public var shard: Shard { shardOverride ?? config.shard }

    /// The sources this instance probes: those of its shard.
    public var ownSources: [SourceConfig] {
        let shard = self.shard
        return config.sources.filter { shard.owns($0.name) }
    }

    /// Breakers saved before a restart: an open one stays open until its next attempt time.
    public func restore(breakers: [String: PersistedBreaker]) {
        savedBreakers.withLock { $0 = breakers }
    }

    /// Calls `listener` after each successful reload.
    public func onReload(_ listener: @escaping @Sendable () -> Void) {
        reloadListeners.withLock { $0.append(listener) }
    }

    /// Lists the config's sources on the board; probing starts with `run()`.
    public func start() {
        board.apply(ownSources)
    }

    private func apply(_ config: LookoutConfig) {
        let previous = Set(self.config.sources.map(\.name))
        current.withLock { $0 = config }
        let sources = ownSources
        board.apply(sources)
        let saved = savedBreakers.withLock { saved -> [String: PersistedBreaker] in
            defer { saved.removeAll() }
            return saved
        }
        for source in sources {
            client.configure(upstream: source.name, policy: source.policy)
            if let breaker = saved[source.name] { client.restoreBreaker(upstream: source.name, breaker) }
        }
        scheduler.apply(sources)
        for gone in previous.subtracting(sources.map(\.name)) { client.remove(upstream: gone) }
        clientMetrics.retain(Set(sources.map(\.name)))
        health.retain(Set(sources.map(\.name)))
    }

    /// Reads the config file again. On problems the running config stays and the problems are
    /// returned (and shown by `lookout_config_last_reload_successful 0`).
    @discardableResult
    public func reloadConfig() -> [String] {
        guard let configPath else { return [] }
        do {
            let config = try ConfigLoader.load(path: configPath)
            apply(config)
            reload.withLock {
                $0 = ReloadStatus(successful: true, lastSuccessMs: Timestamp.nowMs(), problems: [])
            }
            logger.info("config reloaded", metadata: ["sources": "\(ownSources.count)"])
            for warning in config.warnings { logger.warning("config: \(warning)") }
            for listener in reloadListeners.withLock({ $0 }) { listener() }
            return []
        } catch {
            let problems = (error as? ConfigError)?.problems.map(\.description) ?? ["\(error)"]
            reload.withLock {
                $0.successful = false
                $0.problems = problems
            }
            logger.error("config reload failed; keeping the running config", metadata: ["problems": "\(problems.joined(separator: "; "))"])
            return problems
        }
    }

    /// What alert rules read: the measurements of every own source and of the service.
    public func alertInputs(nowMs: Int64) -> AlertEvaluator.Inputs {
        let (boardNames, tallies) = board.tallies()
        let lastOk = Dictionary(zip(boardNames, tallies.map { $0.probed ? $0.lastOk : nil })) { first, _ in first }
        let names = ownSources.map(\.name)
        let summaries = Dictionary(zip(names, health.summaries(names, nowMs: nowMs))) { first, _ in first }
        let breakers = Dictionary(zip(names, client.breakers(names).map { $0?.state })) { first, _ in first }.compactMapValues { $0 }
        let probed = lastOk.values.compactMap { $0 }
        let failing = probed.filter { !$0 }.count
        let open = breakers.values.filter { $0 == .open || $0 == .forcedOpen }.count
        let board = board
        let partial = health.partialFailureRatio(nowMs: nowMs)
        let offline = connectivity.isOffline
        return AlertEvaluator.Inputs(sources: names, offline: offline) { metric, _ in
            switch metric {
            case .sourcesFailingRatio: return probed.isEmpty ? nil : Double(failing) / Double(probed.count)
            case .circuitsOpenRatio: return breakers.isEmpty ? nil : Double(open) / Double(breakers.count)
            case .partialFailureRatio: return partial
            case .networkOffline: return offline ? 1 : 0
            default: return nil
            }
        } source: { [health] source in
            let summary = summaries[source] ?? nil
            let up = lastOk[source] ?? nil
            let breaker = breakers[source]
            return { metric, window in
                // Standard windows come from the summary; any other window is summed on demand.
                func counts(_ fallback: Int64) -> BucketRing.Counts? {
                    let ms = window?.totalMilliseconds ?? fallback
                    guard let summary else { return nil }
                    return summary.counts(windowMs: ms) ?? health.health(source)?.counts(windowMs: ms, nowMs: nowMs)
                }
                func rate(_ fallback: Int64) -> Double? {
                    counts(fallback).flatMap(HealthWindow.errorRate)
                }
                switch metric {
                case .errorRate: return rate(HealthWindow.fiveMinutes)
                case .probes: return counts(HealthWindow.fiveMinutes).map { Double($0.probes) }
                case .failures: return counts(HealthWindow.fiveMinutes).map { Double($0.failures) }
                case .retries: return counts(HealthWindow.fifteenMinutes).map { Double($0.retried) }
                case .retrySuccessRatio: return summary?.retrySuccessRatio
                case .availability: return rate(HealthWindow.day).map { 1 - $0 }
                case .burnRate: return rate(HealthWindow.hour).map { HealthWindow.burnRate(errorRate: $0) }
                case .up: return up.map { $0 ? 1 : 0 }
                case .breakerOpen:
                    guard let breaker else { return nil }
                    return breaker == .open || breaker == .halfOpen || breaker == .forcedOpen ? 1 : 0
                case .insecureBlocked: return summary.map { $0.insecureBlocked ? 1 : 0 }
                case .recoveredAfterRetries: return summary.map { $0.recoveredAfterRetries ? 1 : 0 }
                default: return nil
                }
            }
        } context: { source in
            guard let last = board.entry(source)?.last, let failure = last.failure, let message = last.message else { return nil }
            return (message, failure.recoverySuggestion)
        }
    }

    /// Runs the scheduler and the canary checks until cancelled.
    public func run() async {
        // Learn whether the network is up before the first probes, so an offline start does
        // not count against every source.
        await checkCanaries()
        apply(config)
        await withDiscardingTaskGroup { group in
            group.addTask { await self.scheduler.run() }
            group.addTask { await self.watchCanaries() }
        }
    }

    private func watchCanaries() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(10))
            await checkCanaries()
        }
    }

    private func checkCanaries() async {
        let urls = config.canaries
        let down = urls.isEmpty ? false : await CanaryProber(urls: urls, transport: client.transport).allDown()
        connectivity.recordCanaries(allDown: down)
    }
}
