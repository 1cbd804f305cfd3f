import LookoutCore
import MicroHTTPServer

/// Every route Lookout serves.
public enum LookoutRoutes {
    public static func router(board: SourceStatusBoard) -> Router {
        let metrics = MetricsPage(board: board)
        let status = StatusPage(board: board)
        var router = Router()
        router.get("/") { _ in .html(status.render()) }
        router.get("/metrics") { _ in
            HTTPResponse(
                headers: ["Content-Type": "text/plain; version=0.0.4; charset=utf-8"],
                body: .bytes(Array(metrics.render().utf8)))
        }
        router.get("/-/healthy") { _ in .text("Lookout is healthy.\n") }
        router.get("/-/ready") { _ in
            board.everySourceProbed ? .text("Lookout is ready.\n") : .text("Lookout is not ready: the first round has not finished.\n", status: 503)
        }
        return router
    }
}
