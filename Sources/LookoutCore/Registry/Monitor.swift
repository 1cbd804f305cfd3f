import Foundation
import Logging
import ResilientHTTP
import Synchronization

/// The monitoring loop as one service: the config in force, the scheduler, the source registry, the
/// connectivity verdict, and reloads that keep the history, breaker state and schedule of the
/// sources that stay.
package final class Monitor: Sendable {
    /// The outcome of the last reload, for `/metrics` and `/-/reload`.
    package struct ReloadStatus: Sendable, Equatable {
        package var successful = true
        package var lastSuccessMs: Int64
        package var problems: [String] = []
    }

    /// Every source's record: the one place per-source state lives.
    package let registry: SourceRegistry
    package let scheduler: ProbeScheduler
    package let connectivity: ConnectivityMonitor
    /// Every source's calls go through it; its events reach the registry first.
    package let client: ResilientClient
    /// The maintenance windows of the config and of the admin API.
    package let maintenance = MaintenanceCalendar()
    /// The vendors' own status pages (`vendor_status`), read beside the probes.
    package let vendors: VendorWatch
    /// What push sources' jobs have said (`/push/TOKEN`).
    package let pushes: PushLedger
    /// When the registrations of `domain_expiry` sources' domains expire.
    package let domains: DomainWatch
    let configPath: String?
    /// The hook types a reloaded config's hooks may name.
    let hookKinds: [any HookKind.Type]
    let shardOverride: Shard?
    package let logger: Logger
    private let current: Mutex<LookoutConfig>
    private let reloadListeners = Mutex<[@Sendable () -> Void]>([])
    private let preparers = Mutex<[@Sendable (LookoutConfig) -> Void]>([])
    private let appliedListeners = Mutex<[@Sendable () -> Void]>([])
    /// Breakers saved before a restart, put back when their source is first configured.
    private let savedBreakers = Mutex<[String: PersistedBreaker]>([:])
    private let reload = Mutex(ReloadStatus(lastSuccessMs: Timestamp.nowMs()))

    /// - Parameters:
    ///   - configPath: where `reload()` reads the config again; nil for a fixed config.
    ///   - hookKinds: the hook types a reloaded config may name (`NotificationProviders.all`).
    ///   - shardOverride: `--shard I/N`, which wins over the config's `shard`.
    ///   - sinks: more receivers of every probe result (the store).
    ///   - clientEvents: more receivers of the client's events (the store).
    package init(
        config: LookoutConfig, configPath: String?, hookKinds: [any HookKind.Type] = [], shardOverride: Shard? = nil, transport: CurlTransport = .lookout(),
        sinks: [any ProbeResultSink] = [], clientEvents: [any ClientEventSink] = [], maxConcurrent: Int = 512, logger: Logger
    ) {
        self.configPath = configPath
        self.hookKinds = hookKinds
        self.shardOverride = shardOverride
        self.logger = logger
        self.current = Mutex(config)
        self.vendors = VendorWatch(transport: transport)
        self.domains = DomainWatch(transport: transport, logger: logger)
        let registry = SourceRegistry(logger: logger)
        self.registry = registry
        let connectivity = ConnectivityMonitor { offline in
            if offline {
                logger.warning("network offline: Lookout cannot reach its canaries or most sources; per-source failures are held back")
            } else {
                logger.info("network online again")
            }
        }
        self.connectivity = connectivity
        let client = ResilientClient(transport: transport, events: [registry, connectivity] + clientEvents)
        self.client = client
        let pushes = PushLedger()
        self.pushes = pushes
        let prober = SourceProber(client: client, pushes: pushes) { name, progress in registry.updateDownload(name, progress) }
        let maintenance = self.maintenance
        self.scheduler = ProbeScheduler(
            prober: prober, sinks: [registry] + sinks, connectivity: connectivity,
            fallback: { registry.healthyFallback(for: $0) }, inMaintenance: { maintenance.entries(atMs: Timestamp.nowMs())[$0] != nil },
            maxConcurrent: maxConcurrent, logger: logger)
    }

    package var config: LookoutConfig { current.withLock { $0 } }
    package var reloadStatus: ReloadStatus { reload.withLock { $0 } }
    package var shard: Shard { shardOverride ?? config.shard }

    /// The sources this instance probes: those of its shard.
    package var ownSources: [SourceConfig] {
        let shard = self.shard
        // Unsharded, the config's own array: shared by whoever keeps it, not copied.
        guard shard.count > 1 else { return config.sources }
        return config.sources.filter { shard.owns($0.name) }
    }

    /// The sources `name` depends on, directly or through others.
    package func dependencies(of name: String) -> [String] {
        let sources = Dictionary(config.sources.map { ($0.name, $0.dependsOn) }) { first, _ in first }
        var found: [String] = []
        var queue = sources[name] ?? []
        while let next = queue.popLast() {
            guard next != name, !found.contains(next) else { continue }
            found.append(next)
            queue += sources[next] ?? []
        }
        return found
    }

    /// Breakers saved before a restart: an open one stays open until its next attempt time.
    package func restore(breakers: [String: PersistedBreaker]) {
        savedBreakers.withLock { $0 = breakers }
    }

    /// Calls `prepare` with each config that loaded, before it takes effect (no probe of a new or
    /// renamed source has run yet).
    package func beforeApplying(_ prepare: @escaping @Sendable (LookoutConfig) -> Void) {
        preparers.withLock { $0.append(prepare) }
    }

    /// Calls `listener` each time a config has taken effect: when probing starts, and after
    /// each successful reload.
    package func afterApplying(_ listener: @escaping @Sendable () -> Void) {
        appliedListeners.withLock { $0.append(listener) }
    }

    /// Calls `listener` after each successful reload.
    package func onReload(_ listener: @escaping @Sendable () -> Void) {
        reloadListeners.withLock { $0.append(listener) }
    }

    /// Lists the config's sources in the registry; probing starts with `run()`.
    package func start() {
        registry.apply(ownSources)
        pushes.setSources(ownSources)
        domains.configure(ownSources, settings: config.rdap)
        vendors.configure(ownSources.compactMap { source in source.vendorStatus.map { (source.name, $0) } })
        maintenance.set(configured: config.maintenance, sources: ownSources)
    }

    /// The one place a config takes effect: the registry, the client and the scheduler follow
    /// it together, so no per-source state can outlive its source or miss a new one.
    private func apply(_ config: LookoutConfig) {
        current.withLock { $0 = config }
        let sources = ownSources
        let removed = registry.apply(sources)
        pushes.setSources(sources)
        domains.configure(sources, settings: config.rdap)
        maintenance.set(configured: config.maintenance, sources: sources)
        vendors.configure(sources.compactMap { source in source.vendorStatus.map { (source.name, $0) } })
        let saved = savedBreakers.withLock { saved -> [String: PersistedBreaker] in
            defer { saved.removeAll() }
            return saved
        }
        for source in sources {
            client.configure(upstream: source.name, policy: source.policy)
            if let breaker = saved[source.name] { client.restoreBreaker(upstream: source.name, breaker) }
        }
        scheduler.apply(sources)
        client.transport.adapt(toProbesPerSecond: Monitor.probesPerSecond(sources))
        for gone in removed { client.remove(upstream: gone) }
        for listener in appliedListeners.withLock({ $0 }) { listener() }
    }

    /// The probes a second the sources' intervals ask of the transfer threads (not counting
    /// push, DNS, ICMP, TCP and TLS sources, which probe without them).
    static func probesPerSecond(_ sources: [SourceConfig]) -> Double {
        var rate = 0.0
        for source in sources where Probers.prober(for: source.kind).usesTransferThreads {
            let seconds = source.interval.seconds
            if seconds > 0 { rate += 1 / seconds }
        }
        return rate
    }

    /// Every own source and the service's state at one moment: what every reader takes.
    /// `names` narrows it to those sources (one source's API document).
    package func snapshot(nowMs: Int64 = Timestamp.nowMs(), names: [String]? = nil) -> RegistrySnapshot {
        var snapshot = registry.snapshot(nowMs: nowMs, names: names)
        let names = snapshot.names
        snapshot.breakers = client.breakers(names)
        snapshot.tokens = client.availableTokens(names)
        snapshot.offline = connectivity.isOffline
        snapshot.shard = shard
        snapshot.reload = reloadStatus
        snapshot.scheduler = scheduler.statistics
        snapshot.config = config
        snapshot.maintenance = maintenance.entries(atMs: nowMs)
        return snapshot
    }

    /// Reads the vendors' pages as they fall due and follows each outage against them, until
    /// cancelled; `save` gets what a restart must keep whenever it changed, and says whether
    /// it was kept (if not, it is given again after the next turn).
    package func watchVendors(save: @escaping @Sendable (VendorWatch.Saved) -> Bool = { _ in true }) async {
        await vendors.run { [self] in
            observeVendors()
            if let changed = vendors.unsaved(), !save(changed) { vendors.saveFailed() }
        }
    }

    /// Asks when watched domains expire as they fall due, until cancelled, and hands what is known
    /// to the registry; `save` gets a newly fetched RDAP bootstrap file.
    package func watchDomains(save: @escaping @Sendable (DomainWatch.SavedBootstrap) -> Bool = { _ in true }) async {
        await domains.run { [self] in
            let readings = domains.readings
            registry.setDomainExpiries(Dictionary(readings.map { ($0.source, $0.reading.expiresMs) }) { first, _ in first })
            if let fetched = domains.unsavedBootstrap() { _ = save(fetched) }
        }
    }

    /// Tells the vendor watch which sources are down, and since when.
    package func observeVendors(nowMs: Int64 = Timestamp.nowMs()) {
        let snapshot = registry.snapshot(nowMs: nowMs)
        var down: [String: Int64] = [:]
        for record in snapshot.records where record.outage.down {
            if let since = record.incident?.downSinceMs { down[record.name] = since }
        }
        vendors.observe(down: down, maintenance: maintenance, nowMs: nowMs)
    }

    /// What `reloadConfig` did: the problems that kept the running config, or what changed.
    package enum ReloadOutcome: Sendable, Equatable {
        case reloaded(ConfigChange)
        case refused(problems: [String])
        /// Started without a config file: nothing to read again.
        case noFile
    }

    /// Reads the config file again. On problems the running config stays and the problems are
    /// returned (and shown by `lookout_config_last_reload_successful 0`). A reload logs what it
    /// changed by name, and each key that takes effect only at the next start.
    @discardableResult
    package func reloadConfig() -> ReloadOutcome {
        guard let configPath else { return .noFile }
        do {
            let config = try ConfigLoader.load(path: configPath, hooks: hookKinds)
            let change = ConfigChange(from: self.config, to: config)
            for prepare in preparers.withLock({ $0 }) { prepare(config) }
            apply(config)
            reload.withLock {
                $0 = ReloadStatus(successful: true, lastSuccessMs: Timestamp.nowMs(), problems: [])
            }
            var metadata: Logger.Metadata = ["sources": "\(ownSources.count)"]
            for (key, value) in change.metadata { metadata[key] = "\(value)" }
            logger.info("config reloaded", metadata: metadata)
            for key in change.needsRestart { logger.warning("config: \(key) takes effect at the next restart; the running value stays") }
            for warning in config.warnings { logger.warning("config: \(warning.naming)") }
            for listener in reloadListeners.withLock({ $0 }) { listener() }
            return .reloaded(change)
        } catch {
            let problems = (error as? ConfigError)?.problems.map(\.naming) ?? ["\(error)"]
            reload.withLock {
                $0.successful = false
                $0.problems = problems
            }
            logger.error("config reload failed; keeping the running config", metadata: ["problems": "\(problems.joined(separator: "; "))"])
            return .refused(problems: problems)
        }
    }

    /// Runs the scheduler and the canary checks until cancelled.
    package func run() async {
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
