import Foundation
import LookoutCore
import ResilientHTTP

/// Telegram's Bot API `sendMessage`, in HTML parse mode. The bot token is in the request's path:
/// added at delivery, never kept in the outbox.
enum TelegramProvider: NotificationProvider {
    static let type: HookType = "telegram"
    static let ownKeys = ["bot_token", "bot_token_file", "chat_id", "message_thread_id"]
    /// The Bot API's base, where a hook without `url` sends.
    static let defaultURL: String? = "https://api.telegram.org"

    struct Settings: ProviderSettings {
        var botToken: String
        var chatID: String
        var threadID: Int64?
    }

    static func read(_ keys: inout HookKeys, into hook: inout HookConfig) {
        keys.require("chat_id", "the chat (or channel, @name) to send to")
        let token = keys.requiredSecret(inline: "bot_token", file: "bot_token_file", "a telegram hook needs the bot's token (from @BotFather)")
        guard let token, let chat = keys.string("chat_id") else { return }
        var thread: Int64?
        if let text = keys.string("message_thread_id") {
            guard let number = Int64(text), number > 0 else { return keys.problem("message_thread_id", "\"\(text)\" is not a topic's id (a whole number)") }
            thread = number
        }
        hook.settings = HookSettings(Settings(botToken: token, chatID: chat, threadID: thread))
    }

    static func target(_ hook: HookConfig, delivery: String) -> DeliveryTarget {
        let base = hook.url.trimmingSuffix("/")
        return DeliveryTarget(url: "\(base)/bot\(hook.settings.get(Settings.self)?.botToken ?? "")/sendMessage")
    }

    /// `{"ok": false, "error_code": 429, "parameters": {"retry_after": 5}}`.
    static func askedWait(_ answer: TransferResult) -> Duration? {
        ProviderPayloads.waitField(answer, ["parameters", "retry_after"])
    }

    static func body(_ summary: ProviderPayloads.Summary, _ send: NotificationGroups.Send, hook: HookConfig, externalURL: String, nowMs: Int64) -> String {
        let settings = hook.settings.get(Settings.self)
        let html = ProviderPayloads.htmlText
        // The first line is what a lock screen shows: the mark, where and since when; then the
        // upstream's words.
        var lines = ["\(summary.mark) <b>\(html(summary.headline))</b>"]
        lines += ProviderPayloads.lines(summary, escape: html) { "<b>\(html($0))</b>" }
        lines.append("<a href=\"\(html(summary.link))\">Status page</a>")
        var fields: [(String, JSONText)] = [
            ("chat_id", Int64(settings?.chatID ?? "").map { .int($0) } ?? .string(settings?.chatID ?? "")),
            ("text", .string(ProviderPayloads.clip(lines.joined(separator: "\n"), 4096))),
            ("parse_mode", .string("HTML")),
            ("link_preview_options", .ordered([("is_disabled", .bool(true))])),
        ]
        if let thread = settings?.threadID { fields.insert(("message_thread_id", .int(thread)), at: 1) }
        return JSONText.ordered(fields).rendered
    }
}
