import Foundation
import MicroHTTPServer
import Synchronization

/// Receivers for Telegram, Mattermost, Google Chat, Matrix, Pushover, Gotify, incident.io and
/// Splunk On-Call, each checking a request the way the service documents it and answering as it
/// does; throttled (`/providers/throttle`), Telegram and Matrix say the wait in the body, as they do.
extension Simulator {
    /// The HTML Telegram's parse mode takes: these tags, `&lt;`-style entities, nothing else.
    static func telegramHTMLProblem(_ text: String) -> String? {
        let allowed: Set<String> = ["b", "strong", "i", "em", "u", "ins", "s", "strike", "del", "a", "code", "pre", "tg-spoiler", "blockquote"]
        var rest = Substring(text)
        while let open = rest.firstIndex(where: { $0 == "<" || $0 == "&" }) {
            let tail = rest[open...]
            if tail.first == "&" {
                guard let semicolon = tail.firstIndex(of: ";"), ["&lt;", "&gt;", "&amp;", "&quot;"].contains(String(tail[...semicolon])) else {
                    return "Bad Request: can't parse entities: unsupported entity"
                }
                rest = tail[tail.index(after: semicolon)...]
                continue
            }
            guard let close = tail.firstIndex(of: ">") else { return "Bad Request: can't parse entities: unclosed start tag" }
            let name = tail.dropFirst().prefix { $0 != " " && $0 != ">" }.drop { $0 == "/" }
            guard allowed.contains(String(name)) else { return "Bad Request: can't parse entities: unsupported start tag \"\(name)\"" }
            rest = tail[tail.index(after: close)...]
        }
        return nil
    }

    /// Telegram Bot API `sendMessage`: `chat_id`, `text` ≤ 4,096 in valid HTML; 429 says
    /// `parameters.retry_after` in its body.
    func telegram(_ request: HTTPRequest) async -> HTTPResponse {
        receive(
            request,
            check: { body in
                guard request.pathParameters["bot"]?.hasPrefix("bot") == true, (request.pathParameters["bot"]?.count ?? 0) > 10 else { return "Unauthorized" }
                guard body["chat_id"] is String || body["chat_id"] is NSNumber else { return "Bad Request: chat_id is empty" }
                guard Simulator.text(body["text"], max: 4096) else { return "Bad Request: message text is empty or too long" }
                guard body["parse_mode"] as? String == "HTML" else { return "Bad Request: parse_mode is not HTML" }
                return Simulator.telegramHTMLProblem(body["text"] as? String ?? "")
            },
            rejected: { problem in
                .json(Simulator.jsonText(["ok": false, "error_code": problem == "Unauthorized" ? 401 : 400, "description": problem]), status: 400)
            },
            accepted: { body in .json(Simulator.jsonText(["ok": true, "result": ["message_id": 1, "text": body["text"] ?? ""]])) },
            throttled: { seconds in
                .json(
                    Simulator.jsonText([
                        "ok": false, "error_code": 429, "description": "Too Many Requests: retry after \(seconds)", "parameters": ["retry_after": seconds],
                    ]), status: 429)
            })
    }

    /// Mattermost incoming webhook: `text` or `attachments`; answers `ok`.
    func mattermost(_ request: HTTPRequest) async -> HTTPResponse {
        receive(
            request,
            check: { body in
                let attachments = body["attachments"] as? [[String: Any]] ?? []
                guard body["text"] is String || !attachments.isEmpty else { return "Unable to parse incoming data: no text or attachments" }
                for attachment in attachments where !(attachment["fallback"] is String) { return "attachment without fallback" }
                return nil
            }, rejected: { problem in .text(problem, status: 400) }, accepted: { _ in .text("ok") })
    }

    /// Google Chat space webhook: `text` or `cardsV2`; a `thread.threadKey` needs
    /// `messageReplyOption` in the URL; answers the message with its thread.
    func googleChat(_ request: HTTPRequest) async -> HTTPResponse {
        receive(
            request,
            check: { body in
                guard request.query["key"] != nil, request.query["token"] != nil else { return "the webhook URL's key and token are missing" }
                let cards = body["cardsV2"] as? [[String: Any]] ?? []
                guard body["text"] is String || !cards.isEmpty else { return "Message cannot be empty" }
                for card in cards {
                    guard card["cardId"] is String, let content = card["card"] as? [String: Any], content["sections"] is [Any] else {
                        return "Invalid JSON payload: cardsV2 needs cardId and card.sections"
                    }
                }
                if (body["thread"] as? [String: Any])?["threadKey"] != nil, request.query["messageReplyOption"] == nil {
                    return "threadKey without messageReplyOption starts a new thread each time"
                }
                return nil
            },
            rejected: { problem in .json(Simulator.jsonText(["error": ["code": 400, "message": problem, "status": "INVALID_ARGUMENT"]]), status: 400) },
            accepted: { body in
                let key = ((body["thread"] as? [String: Any])?["threadKey"] as? String) ?? "new"
                return .json(Simulator.jsonText(["name": "spaces/AAA/messages/1", "thread": ["name": "spaces/AAA/threads/\(key)"]]))
            })
    }

    /// Matrix `PUT …/send/m.room.message/TXN`: a bearer token, `msgtype` and `body`; the same
    /// transaction id answers the same event id (a retry is idempotent); 429 says
    /// `retry_after_ms` in its body.
    func matrix(_ request: HTTPRequest) async -> HTTPResponse {
        receive(
            request,
            check: { body in
                guard request.headers["Authorization"]?.hasPrefix("Bearer ") == true else { return "M_MISSING_TOKEN" }
                guard body["msgtype"] is String, Simulator.text(body["body"], max: 65_536) else { return "M_BAD_JSON: msgtype and body are required" }
                if body["formatted_body"] != nil, body["format"] as? String != "org.matrix.custom.html" { return "M_BAD_JSON: format" }
                return nil
            },
            rejected: { problem in
                .json(Simulator.jsonText(["errcode": problem.hasPrefix("M_MISSING") ? "M_MISSING_TOKEN" : "M_BAD_JSON", "error": problem]), status: 400)
            },
            accepted: { _ in .json(Simulator.jsonText(["event_id": "$\(request.pathParameters["txn"] ?? "")"])) },
            throttled: { seconds in
                .json(Simulator.jsonText(["errcode": "M_LIMIT_EXCEEDED", "error": "Too many requests", "retry_after_ms": seconds * 1000]), status: 429)
            })
    }

    /// Pushover Messages API: `token` (30 characters), `user`, `message` ≤ 1,024, `title` ≤ 250,
    /// `priority` −2…2, `url` ≤ 512; answers `{"status": 1}`.
    func pushover(_ request: HTTPRequest) async -> HTTPResponse {
        receive(
            request,
            check: { body in
                guard let token = body["token"] as? String, token.count == 30 else { return "application token is invalid" }
                guard Simulator.text(body["user"], max: 30) else { return "user identifier is not a valid user, group, or subscribed user key" }
                guard Simulator.text(body["message"], max: 1024) else { return "message cannot be blank or over 1024 characters" }
                if let title = body["title"], !Simulator.text(title, max: 250) { return "title is too long" }
                if let priority = body["priority"] as? Int, !(-2...2).contains(priority) { return "priority is invalid" }
                if let url = body["url"], !Simulator.text(url, max: 512) { return "url is too long" }
                return nil
            }, rejected: { problem in .json(Simulator.jsonText(["status": 0, "errors": [problem], "request": "sim"]), status: 400) },
            accepted: { _ in .json(Simulator.jsonText(["status": 1, "request": "sim"])) })
    }

    /// Gotify `POST /message`: `X-Gotify-Key`, `message`, `priority` a number; answers the message.
    func gotify(_ request: HTTPRequest) async -> HTTPResponse {
        receive(
            request,
            check: { body in
                guard request.headers["X-Gotify-Key"]?.isEmpty == false else { return "you need to provide a valid access token" }
                guard Simulator.text(body["message"], max: 1_000_000) else { return "Field 'message' is required" }
                if let priority = body["priority"], !(priority is NSNumber) { return "priority is not a number" }
                return nil
            }, rejected: { problem in .json(Simulator.jsonText(["error": "Bad Request", "errorCode": 400, "errorDescription": problem]), status: 400) },
            accepted: { body in .json(Simulator.jsonText(["id": 1, "appid": 1, "message": body["message"] ?? "", "title": body["title"] ?? ""])) })
    }

    /// incident.io HTTP alert source: a bearer token, `title`, `status` firing|resolved,
    /// `deduplication_key`; answers 202.
    func incidentIO(_ request: HTTPRequest) async -> HTTPResponse {
        receive(
            request,
            check: { body in
                guard request.headers["Authorization"]?.hasPrefix("Bearer ") == true else { return "missing bearer token" }
                guard Simulator.text(body["title"], max: 255) else { return "title is required" }
                guard let status = body["status"] as? String, ["firing", "resolved"].contains(status) else { return "status must be firing or resolved" }
                guard Simulator.text(body["deduplication_key"], max: 255) else { return "deduplication_key is required" }
                return nil
            }, rejected: { problem in .json(Simulator.jsonText(["type": "validation_error", "status": 422, "errors": [["message": problem]]]), status: 422) },
            accepted: { body in
                .json(
                    Simulator.jsonText([
                        "status": "success", "message": "Event accepted for processing", "deduplication_key": body["deduplication_key"] ?? "",
                    ]), status: 202)
            })
    }

    /// Splunk On-Call REST endpoint: `message_type` (CRITICAL, WARNING, INFO, ACKNOWLEDGEMENT,
    /// RECOVERY), `entity_id`; answers `{"result": "success"}`.
    func splunkOnCall(_ request: HTTPRequest) async -> HTTPResponse {
        receive(
            request,
            check: { body in
                guard let type = body["message_type"] as? String, ["CRITICAL", "WARNING", "INFO", "ACKNOWLEDGEMENT", "RECOVERY"].contains(type) else {
                    return "message_type is missing or unknown"
                }
                guard Simulator.text(body["entity_id"], max: 512) else { return "entity_id is required" }
                return nil
            }, rejected: { problem in .json(Simulator.jsonText(["result": "failure", "message": problem]), status: 400) },
            accepted: { body in .json(Simulator.jsonText(["result": "success", "entity_id": body["entity_id"] ?? ""])) })
    }
}
