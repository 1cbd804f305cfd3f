import Foundation
import LookoutCore
import LookoutStore
import MicroHTTPServer
import ResilientHTTP

/// `/push/TOKEN` for push sources' jobs (`kind: push`): `GET`, `POST` or `HEAD` with nothing
/// after the token is a success, `/fail` a failure, `/start` the start of a run, `/N` an exit
/// status 0–255. The token is the credential: no admin token; an unknown one is a 404 that says
/// nothing of which exist, and no answer, log line or page ever shows one. `msg=` or a text body
/// (at most 10 KiB, made printable) is the job's own words.
struct PushRoutes {
    let context: LookoutContext

    /// The most of a job's words kept.
    static let maxMessageBytes = 10 << 10

    func install(into router: inout Router) {
        router.get("/push/*") { request in await handle(request) }
        router.post("/push/*") { request in await handle(request) }
    }

    func handle(_ request: HTTPRequest) async -> HTTPResponse {
        let parts = (request.pathParameters["*"] ?? "").split(separator: "/", omittingEmptySubsequences: false)
        let monitor = context.monitor
        guard (1...2).contains(parts.count), let source = monitor.pushes.source(forToken: String(parts[0])) else {
            return .text("no push source has this token\n", status: 404)
        }
        let message = PushRoutes.message(request)
        let event: PushLedger.Event
        switch parts.count == 2 ? String(parts[1]) : nil {
        case nil: event = .success(message: message)
        case "fail": event = .failure(message: message, exitStatus: nil)
        case "start": event = .start
        case let action?:
            guard action.utf8.count <= 3, action.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }), let status = Int(action), status <= 255 else {
                return .text("after the token: nothing, /fail, /start or an exit status 0-255\n", status: 404)
            }
            event = status == 0 ? .success(message: message) : .failure(message: message, exitStatus: status)
        }
        switch monitor.pushes.record(event, source: source, nowMs: Timestamp.nowMs()) {
        case .rateLimited(let seconds):
            var response = HTTPResponse.text("too many calls for this push source; try again in \(seconds) s\n", status: 429)
            response.headers.set("Retry-After", "\(seconds)")
            return response
        case .recorded(_, let entry):
            do {
                try PushStore(database: context.database).save(source, entry)
            } catch {
                monitor.logger.error("cannot keep a push source's call in the database", metadata: ["source": "\(source)", "error": "\(error)"])
            }
            // Judged now, not at the next tick: an outage starts or ends within seconds.
            if event != .start { _ = await monitor.scheduler.probeNow(source) }
            return .text("OK\n")
        }
    }

    /// `msg=` or a text body: at most `maxMessageBytes`, made printable; nil when empty.
    static func message(_ request: HTTPRequest) -> String? {
        let text = request.query["msg"] ?? (request.body.isEmpty ? nil : String(decoding: request.body.prefix(maxMessageBytes), as: UTF8.self))
        guard var text, !text.isEmpty else { return nil }
        while text.utf8.count > maxMessageBytes { text.removeLast() }
        let printable = PrintableText.escape(text.trimmingCharacters(in: .whitespacesAndNewlines))
        return printable.isEmpty ? nil : printable
    }
}
