import ArgumentParser
internal import CMemory
import Foundation
import Logging
import LookoutAlerting
import LookoutCore
import LookoutService
import LookoutStore
import LookoutWeb
import MicroHTTPServer
import ResilientHTTP
import ServiceLifecycle

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
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
            loaded = try LookoutApp.loadConfig(path: config)
        } catch let error as ConfigError {
            for problem in error.problems { printError(problem.naming) }
            printError("lookout: not starting: \(config) has \(error.problems.count) problem\(error.problems.count == 1 ? "" : "s")")
            throw ExitCode(1)
        }
        for warning in loaded.warnings { logger.warning("config: \(warning.naming)") }
        var replicaName = replica
        if shard == "auto" { (shardOverride, replicaName) = try placeFromPod(shardCount: loaded.shard.count) }
        let app: LookoutApp
        do {
            app = try LookoutApp.build(
                config: loaded,
                options: .init(configPath: config, listen: listen, database: db, shard: shardOverride, replica: replicaName), logger: logger)
        } catch {
            printError("lookout: \(error)")
            throw ExitCode(1)
        }
        try await Serve.runUntilStopped(app, signals: signals, logger: logger)
        Serve.close(app.context.database, logger: logger)
        logWriter.flush(within: .seconds(2))
        // Then leave at once, skipping exit(): its handlers (C libraries' cleanups, run while
        // libcurl's and libmicrohttpd's threads still exist) have nothing left to do for us, and a
        // loaded CI run saw a serve that had logged "stopped" still alive 30 s later, inside exit.
        _exit(0)
    }

    /// `--shard auto`: the shard and replica of a StatefulSet pod, whose host name is
    /// NAME-ORDINAL; exit 1 when the name says neither.
    func placeFromPod(shardCount: Int) throws -> (Shard, String?) {
        let host = ProcessInfo.processInfo.environment["HOSTNAME"] ?? ProcessInfo.processInfo.hostName
        switch Shard.fromPod(hostName: host, replicas: replicas, count: shardCount) {
        case .success(let placed):
            return (placed.shard, replica ?? "\(placed.replica)")
        case .failure(let problem):
            printError("lookout: not starting: \(problem.message)")
            throw ExitCode(1)
        }
    }

    /// Runs the app's services until SIGTERM or SIGINT (SIGHUP reloads the config, as
    /// POST /-/reload does); exit 1 when a service stops on an error.
    static func runUntilStopped(_ app: LookoutApp, signals: AsyncStream<Int32>, logger: Logger) async throws {
        let monitor = app.monitor
        var lifecycle = ServiceGroupConfiguration(services: app.services, logger: logger)
        lifecycle.maximumGracefulShutdownDuration = .seconds(8)
        let group = ServiceGroup(configuration: lifecycle)
        do {
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

    /// Closes the database once everything is written: closing checkpoints the WAL into the file,
    /// so the file alone holds it all (a copy of lookout.sqlite taken after a stop is whole). On a
    /// thread of its own and waited for 5 s at most: loaded CI runs saw a serve that had logged
    /// "stopped" still alive 30 s later, with no warning from a close that failed. A checkpoint
    /// that does not finish loses nothing: the WAL file keeps what it holds for the next start.
    static func close(_ database: LookoutDatabase, logger: Logger) {
        let closed = DispatchSemaphore(value: 0)
        startNamedThread("lookout-close") {
            do {
                try database.close()
            } catch {
                logger.warning("database not closed", metadata: ["error": "\(error)"])
            }
            closed.signal()
        }
        if closed.wait(timeout: .now() + 5) == .timedOut {
            logger.warning("the database did not close within 5 s; stopping anyway (its WAL file keeps what it holds)")
        }
    }
}
