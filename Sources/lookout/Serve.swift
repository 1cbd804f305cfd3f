import ArgumentParser
import Foundation
import Logging
import LookoutCore
import LookoutStore
import LookoutWeb
import MicroHTTPServer
import ResilientHTTP

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Probes every configured source and serves /metrics and the status page.")

    @Option(help: "The config file.")
    var config: String

    @Option(help: "Address to listen on, HOST:PORT (overrides the config's listen).")
    var listen: String?

    @Option(help: "SQLite database path (overrides the config's database).")
    var db: String?

    @Option(help: "Log line format: logfmt or json.")
    var logFormat: String = "logfmt"

    func run() async throws {
        guard let format = LogfmtLogHandler.Format(rawValue: logFormat) else {
            throw ValidationError("--log-format must be logfmt or json")
        }
        LoggingSystem.bootstrap { LogfmtLogHandler(label: $0, format: format) }
        let logger = Logger(label: "lookout")

        let loaded: LookoutConfig
        do {
            loaded = try ConfigLoader.load(path: config)
        } catch let error as ConfigError {
            printError(error.description)
            printError("lookout: not starting: \(config) has \(error.problems.count) problem\(error.problems.count == 1 ? "" : "s")")
            throw ExitCode(1)
        }
        let address = listen ?? loaded.listen
        guard let (host, port) = HTTPServerConfiguration.parseAddress(address) else {
            throw ValidationError("listen address \(address) is not HOST:PORT")
        }
        let database: LookoutDatabase
        do {
            database = try LookoutDatabase(path: db ?? loaded.database)
        } catch {
            printError("lookout: \(error)")
            throw ExitCode(1)
        }

        let board = SourceStatusBoard(sources: loaded.sources)
        let writer = ProbeResultWriter(database: database, logger: logger)
        let scheduler = ProbeScheduler(
            sources: loaded.sources, prober: SourceProber(client: ResilientClient()), sinks: [board, writer], logger: logger)
        let server = HTTPServer(
            configuration: .init(host: host, port: port), router: LookoutRoutes.router(board: board))
        do {
            try server.start()
        } catch {
            printError("lookout: \(error)")
            throw ExitCode(1)
        }
        logger.info("listening", metadata: [
            "address": "\(host):\(server.port)", "sources": "\(loaded.sources.count)", "database": "\(database.path)",
        ])

        let work = Task {
            await withDiscardingTaskGroup { group in
                group.addTask { await scheduler.run() }
                group.addTask { await writer.run() }
            }
        }
        await ProcessSignals.waitForTermination()
        logger.info("stopping")
        work.cancel()
        await work.value
        await server.stop()
        writer.flush()
        logger.info("stopped")
    }
}
