import ArgumentParser
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

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Probes every configured source and serves /metrics and the status page.")

    @Option(help: "The config file.")
    var config: String

    @Option(help: "Address to listen on, HOST:PORT (overrides the config's listen).")
    var listen: String?

    @Option(help: "SQLite database path (overrides the config's database).")
    var db: String?

    @Option(help: "Probe only this shard of the sources: I/N, or auto (a StatefulSet pod's ordinal; N is the config's shard.count).")
    var shard: String?

    @Option(help: "With --shard auto: pods per shard (replicas of one shard probe the same sources).")
    var replicas: Int = 1

    @Option(help: "This instance's name among the replicas of its shard (a label on lookout_build_info and in the logs).")
    var replica: String?

    @Option(help: "Log line format: logfmt or json.")
    var logFormat: String = "logfmt"

    @Option(help: "Least level logged: trace, debug, info, notice, warning, error or critical (debug adds a line for every failed probe).")
    var logLevel: String = "info"

    func run() async throws {
        guard let format = LogfmtLogHandler.Format(rawValue: logFormat) else {
            throw ValidationError("--log-format must be logfmt or json")
        }
        guard let level = Logger.Level(rawValue: logLevel) else {
            throw ValidationError("--log-level must be trace, debug, info, notice, warning, error or critical")
        }
        var shardOverride: Shard?
        if let shard, shard != "auto" {
            guard let parsed = Shard.parse(shard) else { throw ValidationError("--shard must be I/N with 0 ≤ I < N, e.g. 0/2, or auto") }
            shardOverride = parsed
        }
        guard replicas >= 1 && replicas <= 100 else { throw ValidationError("--replicas must be 1 to 100") }
        // A stderr whose reader has gone must not kill the service (SIGPIPE's default action):
        // the log writer drops those lines and counts them. libcurl and the HTTP server send
        // with MSG_NOSIGNAL already.
        signal(SIGPIPE, SIG_IGN)
        let logWriter = LogWriter(format: format)
        LoggingSystem.bootstrap { label in
            var handler = LogfmtLogHandler(label: label, writer: logWriter)
            handler.logLevel = level
            return handler
        }
        defer { logWriter.flush(within: .seconds(2)) }
        // Trapped first: a signal sent as soon as "listening" is logged must be handled, not fatal.
        let signals = TrappedSignals.install([SIGTERM, SIGINT, SIGHUP])
        let logger = Logger(label: "lookout")

        let loaded: LookoutConfig
        do {
            loaded = try ConfigLoader.load(path: config)
        } catch let error as ConfigError {
            for problem in error.problems { printError(problem.naming) }
            printError("lookout: not starting: \(config) has \(error.problems.count) problem\(error.problems.count == 1 ? "" : "s")")
            throw ExitCode(1)
        }
        for warning in loaded.warnings { logger.warning("config: \(warning.naming)") }
        var replicaName = replica
        if shard == "auto" {
            // In a StatefulSet the pod's host name is NAME-ORDINAL.
            let host = ProcessInfo.processInfo.environment["HOSTNAME"] ?? ProcessInfo.processInfo.hostName
            switch Shard.fromPod(hostName: host, replicas: replicas, count: loaded.shard.count) {
            case .success(let placed):
                shardOverride = placed.shard
                replicaName = replicaName ?? "\(placed.replica)"
            case .failure(let problem):
                printError("lookout: not starting: \(problem.message)")
                throw ExitCode(1)
            }
        }
        let address = listen ?? loaded.listen
        guard let (host, port) = HTTPServerConfiguration.parseAddress(address) else {
            throw ValidationError("listen address \(address) is not HOST:PORT")
        }
        let database: LookoutDatabase
        do {
            database = try LookoutDatabase.openOrStandIn(path: db ?? loaded.database)
        } catch {
            printError("lookout: \(error)")
            throw ExitCode(1)
        }

        let writer = RecordWriter(database: database, logger: logger)
        let monitor = Monitor(
            config: loaded, configPath: config, shardOverride: shardOverride, sinks: [writer], clientEvents: [writer], logger: logger)
        let alerts = AlertService(monitor: monitor, store: AlertStore(database: database), logger: logger)
        let outbox = OutboxDeliverer(hooks: { monitor.config.hooks }, store: OutboxStore(database: database), client: ResilientClient(), logger: logger)
        alerts.onStored { outbox.poke() }
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
        let statistics = HTTPServerStatistics()
        var context = LookoutContext(monitor: monitor, writer: writer, database: database, alerts: alerts, outbox: outbox, server: statistics)
        context.replica = replicaName
        context.monitoringGap = gap
        let peers = Peers(urls: { monitor.config.peers }, instanceID: context.instanceID)
        context.peers = peers
        let server = HTTPServer(configuration: .init(host: host, port: port), router: LookoutRoutes.router(context), statistics: statistics)
        do {
            try server.start()
        } catch {
            printError("lookout: \(error)")
            throw ExitCode(1)
        }
        // Parsing a big config, restoring history and rebuilding the registry leave many freed
        // pages behind: give them back each time a config has taken effect (at the start of
        // probing, and after each reload).
        monitor.afterApplying { lookout_release_free_memory() }
        let listening: Logger.Metadata = [
            "address": "\(host):\(server.port)", "sources": "\(monitor.ownSources.count)", "database": "\(database.path)",
            "shard": "\(monitor.shard.index)/\(monitor.shard.count)", "replica": "\(replicaName ?? "-")",
        ]

        // Shut down in reverse order: the server drains first, the writer flushes once, last.
        // Minute rows are rolled up once no call that started in them can still be running.
        let longestCall = loaded.sources.map(SourceProber.deadline(for:)).max() ?? .zero
        let retention = Retention(
            retention: loaded.retention, rawRetention: loaded.rawRetention, tiers: loaded.rollupRetention,
            rollupGrace: longestCall + .seconds(60))
        var parts: [ServiceGroupConfiguration.ServiceConfiguration] = [
            .init(service: RunningPart("writer") { await writer.run() }),
            .init(service: RunningPart("monitor") { await monitor.run() }),
            .init(service: RunningPart("alerts") { await alerts.run() }),
            .init(service: RunningPart("outbox") { await outbox.run() }),
            .init(service: RunningPart("retention") { await retention.run(database, logger: logger) }),
            .init(service: RunningPart("peers") { await peers.run() }),
            // A changed config file is reloaded by itself (a ConfigMap update, an editor's save).
            .init(
                service: RunningPart("config-watch") {
                    await ConfigWatcher(path: config).run {
                        logger.info("config file changed; reloading", metadata: ["config": "\(config)"])
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
        var lifecycle = ServiceGroupConfiguration(services: parts, logger: logger)
        lifecycle.maximumGracefulShutdownDuration = .seconds(8)
        let group = ServiceGroup(configuration: lifecycle)
        do {
            // SIGHUP reloads the config (as POST /-/reload does); SIGTERM and SIGINT shut down.
            let handling = Task {
                for await signal in signals {
                    if signal == SIGHUP {
                        monitor.reloadConfig()
                    } else {
                        await group.triggerGracefulShutdown()
                        break
                    }
                }
            }
            defer { handling.cancel() }
            try await group.run()
        } catch {
            logger.error("stopped on an error", metadata: ["error": "\(error)"])
            throw ExitCode(1)
        }
        logger.info("stopped")
    }
}
