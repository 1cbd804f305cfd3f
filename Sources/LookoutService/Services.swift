import Logging
import LookoutCore
import MicroHTTPServer
import ServiceLifecycle

/// One long-running part of `serve` (scheduler, writer, evaluator, outbox, retention…) as a
/// swift-service-lifecycle service: it runs until the group shuts down gracefully, then its task
/// is cancelled and it finishes what it does on cancellation (the writer's last flush, say).
/// The modules below stay free of the lifecycle library; this adapter is the only place it meets them.
package struct RunningPart: Service, CustomStringConvertible {
    package let description: String
    let body: @Sendable () async -> Void

    package init(_ name: String, _ body: @escaping @Sendable () async -> Void) {
        self.description = name
        self.body = body
    }

    package func run() async throws {
        await cancelWhenGracefulShutdown { await body() }
        // A part whose work is done early (a start-up check) stays until the group shuts down:
        // ServiceGroup counts a service that returns while the group is shutting down as failed.
        try? await gracefulShutdown()
    }
}

/// The HTTP server, already listening: on graceful shutdown it answers what is in flight (or 503)
/// and closes.
package struct ServingHTTP: Service, CustomStringConvertible {
    let server: HTTPServer
    let logger: Logger
    /// Logged once the group runs, so that whoever waits for it may send SIGTERM at once: the
    /// group's signal handlers are in place by then.
    let listening: Logger.Metadata
    package var description: String { "http-server" }

    package init(server: HTTPServer, logger: Logger, listening: Logger.Metadata) {
        self.server = server
        self.logger = logger
        self.listening = listening
    }

    package func run() async throws {
        logger.info("listening", metadata: listening)
        try? await gracefulShutdown()
        logger.info("stopping")
        await server.stop()
    }
}
