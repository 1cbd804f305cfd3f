internal import CMemory
import Foundation
import Logging
import LookoutAlerting
import LookoutCore
import LookoutStore
import LookoutWeb
import MicroHTTPServer
import ResilientHTTP
import ServiceLifecycle

/// The whole service, built in one function: the database (or its stand-in), the monitor, the
/// alert service and outbox, what a restart takes back (`SavedState`), the HTTP server, already
/// listening, and the long-running parts as swift-service-lifecycle services. `lookout serve`
/// runs `services` in a ServiceGroup with its signal handling; a test can do the same in-process:
///
/// ```swift
/// let app = try LookoutApp.build(config: try LookoutApp.loadConfig(path: "t.yml"), options: .init(configPath: "t.yml"), logger: logger)
/// let group = ServiceGroup(services: app.services.map(\.service), logger: logger)
/// // http://127.0.0.1:\(app.port)/metrics
/// ```
package struct LookoutApp: Sendable {
    /// What the command line may set over the config.
    package struct Options: Sendable {
        /// The config file: reloads read it again, and a change to it reloads by itself.
        package var configPath: String
        /// `--listen`, `--database`, `--shard`, `--replica`.
        package var listen: String?
        package var database: String?
        package var shard: Shard?
        package var replica: String?

        package init(configPath: String, listen: String? = nil, database: String? = nil, shard: Shard? = nil, replica: String? = nil) {
            self.configPath = configPath
            self.listen = listen
            self.database = database
            self.shard = shard
            self.replica = replica
        }
    }

    /// Why the service cannot start: a listen address that is not one, a database that cannot
    /// be opened even as a stand-in, a port that cannot be bound.
    package struct StartError: Error, CustomStringConvertible {
        package let description: String
        init(_ description: String) { self.description = description }
    }

    package let monitor: Monitor
    package let context: LookoutContext
    package let server: HTTPServer
    /// Every long-running part, the HTTP server last (it stops first on shutdown).
    package let services: [ServiceGroupConfiguration.ServiceConfiguration]

    /// The port the server listens on (the one it was given, or the one port 0 picked).
    package var port: Int { Int(server.port) }

    /// The config file, read with every notification provider's hook type: what `serve`, its
    /// reloads and the other commands read.
    package static func loadConfig(path: String) throws -> LookoutConfig {
        try ConfigLoader.load(path: path, hooks: NotificationProviders.hookKinds)
    }

    /// Builds and starts everything but the services' loops: the server listens and the
    /// monitor has its sources when this returns; nothing is probed until `services` run.
    package static func build(config loaded: LookoutConfig, options: Options, logger: Logger) throws(StartError) -> LookoutApp {
        let address = options.listen ?? loaded.listen
        guard let (host, port) = HTTPServerConfiguration.parseAddress(address) else {
            throw StartError("listen address \(address) is not HOST:PORT")
        }
        let database: LookoutDatabase
        do {
            database = try LookoutDatabase.openOrStandIn(path: options.database ?? loaded.database)
        } catch {
            throw StartError("\(error)")
        }

        let writer = RecordWriter(database: database, logger: logger)
        let monitor = Monitor(
            config: loaded, configPath: options.configPath, hookKinds: NotificationProviders.hookKinds, shardOverride: options.shard, sinks: [writer],
            clientEvents: [writer], logger: logger)
        var context = LookoutContext(monitor: monitor, database: database, writer: writer, logger: logger)
        let alerts = context.alerts
        let outbox = context.outbox
        let peers = context.peers
        if let reason = database.unwritableReason {
            logger.error(
                "cannot open the database for writing; probing and serving go on, records wait in memory and are written once it can be opened",
                metadata: [
                    "database": "\(database.path)", "error": "\(reason)",
                    "saved_state": "\(database.standInReadTheFile ? "read from the file" : "not readable: starting without it")",
                ])
        }
        // What was saved before a restart: the run's gap, outages, history, breakers,
        // maintenance and alerts (`SavedState`); a damaged file loses this, not the service.
        var saved = SavedState(database: database, writer: writer, monitor: monitor, alerts: alerts, logger: logger)
        saved.begin(loaded)
        monitor.start()
        saved.restore()
        let gap = saved.gap
        let runs = saved.runs
        let startedAtMs = saved.startedAtMs
        context.replica = options.replica
        context.monitoringGap = gap
        let server = HTTPServer(configuration: .init(host: host, port: port), router: LookoutRoutes.router(context), statistics: context.server)
        do {
            try server.start()
        } catch {
            throw StartError("\(error)")
        }
        // Parsing a big config, restoring history and rebuilding the registry leave many freed
        // pages behind: give them back each time a config has taken effect (at the start of
        // probing, and after each reload).
        monitor.afterApplying { lookout_release_free_memory() }
        let listening: Logger.Metadata = [
            "address": "\(host):\(server.port)", "sources": "\(monitor.ownSources.count)", "database": "\(database.path)",
            "shard": "\(monitor.shard.index)/\(monitor.shard.count)", "replica": "\(options.replica ?? "-")",
        ]

        // Shut down in reverse order: the server drains first, the writer flushes once, last.
        // Minute rows are rolled up once no call that started in them can still be running.
        let longestCall = loaded.sources.map(SourceProber.deadline(for:)).max() ?? .zero
        let retention = Retention(
            retention: loaded.retention, rawRetention: loaded.rawRetention, tiers: loaded.rollupRetention,
            rollupGrace: longestCall + .seconds(60), claimKeep: SLAStore.keep(for: loaded.sources))
        var parts: [ServiceGroupConfiguration.ServiceConfiguration] = [
            .init(service: RunningPart("writer") { await writer.run() }),
            .init(service: RunningPart("monitor") { await monitor.run() }),
            .init(service: RunningPart("alerts") { await alerts.run() }),
            .init(service: RunningPart("outbox") { await outbox.run() }),
            .init(service: RunningPart("retention") { await retention.run(database, logger: logger) }),
            .init(service: RunningPart("peers") { await peers.run() }),
            .init(service: RunningPart("heap") { await HeapTrim().run() }),
            .init(service: RunningPart("sla") { await SLAWatch(monitor: monitor, database: database, logger: logger).run() }),
            .init(
                service: RunningPart("vendors") {
                    let store = VendorStore(database: database)
                    await monitor.watchVendors { saved in
                        // The stand-in for a file that cannot be written keeps nothing: said at start.
                        guard database.unwritableReason == nil else { return true }
                        do {
                            try store.save(saved)
                            return true
                        } catch {
                            logger.error("cannot save the vendors' records; trying again", metadata: ["database": "\(database.path)", "error": "\(error)"])
                            return false
                        }
                    }
                }),
            .init(
                service: RunningPart("domains") {
                    await monitor.watchDomains { fetched in
                        guard database.unwritableReason == nil else { return true }
                        do {
                            try RDAPStore(database: database).save(fetched)
                            return true
                        } catch {
                            logger.error("cannot keep the RDAP bootstrap file", metadata: ["database": "\(database.path)", "error": "\(error)"])
                            return false
                        }
                    }
                }),
            // A changed config file is reloaded by itself (a ConfigMap update, an editor's save).
            .init(
                service: RunningPart("config-watch") {
                    await ConfigWatcher(path: options.configPath).run {
                        logger.info("config file changed; reloading", metadata: ["config": "\(options.configPath)"])
                        monitor.reloadConfig()
                    }
                }),
            .init(
                service: RunningPart("database-reopen") {
                    guard database.unwritableReason != nil else { return }
                    await database.reopenWhenWritable {
                        logger.notice("database opened for writing", metadata: ["database": "\(database.path)"])
                    }
                    guard database.unwritableReason == nil else { return }
                    // What the file holds from before this start, unless it was read at start
                    // (taken back twice, a firing alert would be two episodes, one firing for
                    // ever): firing alerts and silences (so a silenced alert stays quiet), and
                    // whether the file is sound.
                    if !database.standInReadTheFile {
                        do { try alerts.restore() } catch {
                            logger.error("cannot read the saved alerts", metadata: ["error": "\(error)"])
                        }
                    }
                    if case .damaged(let problems) = await database.checkIntegrity() {
                        logger.error(
                            "the database is damaged; probing and serving go on (run lookout db check, or restore a backup)",
                            metadata: [
                                "database": "\(database.path)", "quick_check": "\(problems)",
                            ])
                    }
                }),
            .init(
                service: RunningPart("integrity-check") {
                    guard database.unwritableReason == nil else { return }  // checked once the file opens
                    if case .damaged(let problems) = await database.checkIntegrity() {
                        logger.error(
                            "the database is damaged; probing and serving go on (run lookout db check, or restore a backup)",
                            metadata: [
                                "database": "\(database.path)", "quick_check": "\(problems)",
                            ])
                    }
                }),
            .init(service: ServingHTTP(server: server, logger: logger, listening: listening)),
        ]
        // Also when the start could not be recorded: the heartbeat records the run once it can.
        parts.insert(.init(service: RunningPart("heartbeat") { await runs.keepAlive(startedAtMs: startedAtMs) }), at: 1)
        return LookoutApp(monitor: monitor, context: context, server: server, services: parts)
    }
}
