import Foundation
import LookoutCore
import ResilientHTTP

/// Matrix's client-server API: `PUT {url}/_matrix/client/v3/rooms/ROOM/send/m.room.message/TXN`
/// with the access token as a bearer token (added at delivery). The transaction id is the outbox
/// row's: a retry of one notification is the same event, never a second message.
enum MatrixProvider: NotificationProvider {
    static let type: HookType = "matrix"
    static let ownKeys = ["room_id", "access_token", "access_token_file"]

    struct Settings: ProviderSettings {
        var roomID: String
        var accessToken: String
    }

    static func read(_ keys: inout HookKeys, into hook: inout HookConfig) {
        keys.require("room_id", "the room to send to, e.g. \"!abc123:example.org\"")
        let token = keys.requiredSecret(inline: "access_token", file: "access_token_file", "a matrix hook needs the sending user's access token")
        guard let token, let room = keys.string("room_id") else { return }
        guard room.hasPrefix("!") || room.hasPrefix("#"), room.contains(":") else {
            return keys.problem("room_id", "\"\(room)\" is not a room id (!id:server) or alias (#name:server)")
        }
        hook.settings = HookSettings(Settings(roomID: room, accessToken: token))
    }

    static func target(_ hook: HookConfig, delivery: String) -> DeliveryTarget {
        let settings = hook.settings.get(Settings.self)
        let base = hook.url.trimmingSuffix("/")
        let room = (settings?.roomID ?? "").addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let transaction = "lookout-" + (delivery.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "0")
        return DeliveryTarget(
            url: "\(base)/_matrix/client/v3/rooms/\(room)/send/m.room.message/\(transaction)", method: "PUT",
            headers: [("Authorization", "Bearer \(settings?.accessToken ?? "")")])
    }

    /// `{"errcode": "M_LIMIT_EXCEEDED", "retry_after_ms": 2000}`.
    static func askedWait(_ answer: TransferResult) -> Duration? {
        ProviderPayloads.waitField(answer, ["retry_after_ms"], unit: 0.001)
    }

    static func body(_ summary: ProviderPayloads.Summary, _ send: NotificationGroups.Send, hook: HookConfig, externalURL: String, nowMs: Int64) -> String {
        let html = ProviderPayloads.htmlText
        // `body` is the plain text clients show in a notification; `formatted_body` the HTML.
        var plain = ["\(summary.mark) \(summary.headline)"]
        plain += ProviderPayloads.lines(summary, escape: { $0 }, bold: { $0 })
        plain.append(summary.link)
        var rich = ["<p>\(summary.mark) <strong>\(html(summary.headline))</strong></p>"]
        rich += ProviderPayloads.lines(summary, escape: html) { "<strong>\(html($0))</strong>" }.map { "<p>\($0)</p>" }
        rich.append("<p><a href=\"\(html(summary.link))\">Status page</a></p>")
        return JSONText.ordered([
            ("msgtype", .string(summary.firing ? "m.text" : "m.notice")),
            ("body", .string(ProviderPayloads.clip(plain.joined(separator: "\n"), bytes: 16_000))),
            ("format", .string("org.matrix.custom.html")),
            ("formatted_body", .string(ProviderPayloads.clip(rich.joined(), bytes: 32_000))),
        ]).rendered
    }
}
