import Foundation
import LookoutCore
import LookoutStore
import MicroHTTPServer
import ResilientHTTP

/// `/push/TOKEN` for push sources' jobs (`kind: push`): `GET`, `POST` or `HEAD` with nothing
/// after the token is a success, `/fail` a failure, `/start` the start of a run, `/N` an exit
/// status 0–255. The token is the credential: no admin token; an unknown one is a 404 that says
/// nothing of which exist, and no answer, log line or page ever shows one. `msg=` or a text body
/// (at most 10 KiB, made printable) is the job's own words. A call is forwarded once to every
/// peer (`peers`), so each replica of the source's shard hears it, whichever one the job reached.
struct PushRoutes {
    let context: LookoutContext

    /// Marks a call forwarded by a peer (its instance id): recorded, not forwarded again.
    static let forwardedHeader = "X-Lookout-Forwarded"

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
        let forwardedBy = request.headers[PushRoutes.forwardedHeader]
        // Our own call come back (a peer list that names this instance too): already recorded.
        if forwardedBy == context.instanceID { return .text("OK\n") }
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
            if forwardedBy == nil { forward(request, parts: parts) }
            // Judged now, not at the next tick: an outage starts or ends within seconds.
            if event != .start { _ = await monitor.scheduler.probeNow(source) }
            return .text("OK\n")
        }
    }

    /// Sends the call on to every peer, in the background: a peer of another shard does not know
    /// the token (404), one that is down is not waited for. Nothing of it is logged: its URL holds
    /// the token.
    func forward(_ request: HTTPRequest, parts: [Substring]) {
        let peers = context.monitor.config.peers
        guard !peers.isEmpty else { return }
        var path = "/push/" + parts.joined(separator: "/")
        if let message = request.query["msg"], let encoded = message.addingPercentEncoding(withAllowedCharacters: .alphanumerics) {
            path += "?msg=" + encoded
        }
        let headers = [(PushRoutes.forwardedHeader, context.instanceID)]
        let target = path
        let body = request.body
        // The transport instances already talk to each other through (a transport of its own
        // would start its threads in every serve, push sources or not).
        let transport = context.peers.transport
        Task.detached {
            await withTaskGroup(of: Void.self) { group in
                for peer in peers {
                    group.addTask {
                        _ = await transport.perform(
                            TransferRequest(url: peer + target, method: "POST", headers: headers, body: body, timeout: .seconds(5), maxResponseBytes: 4096))
                    }
                }
            }
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
