import Foundation
import LookoutCore
import Testing

@testable import LookoutAlerting

/// Every hook type the config accepts has exactly one provider in the registry, and what the
/// providers declare (grouping, delivery, URL) is what the deliverer uses.
@Suite("notification provider registry")
struct ProviderRegistryTests {
    func hook(_ type: HookType) throws -> HookConfig {
        let extra: [HookType: String] = [
            "pagerduty": #"url: "http://127.0.0.1:1/base/oncall", routing_key: "${HOME}""#,
            "email": #"url: "smtp://127.0.0.1:1", starttls: false, from: lookout@example.test, to: [oncall@example.test]"#,
            "telegram": #"bot_token: "${HOME}", chat_id: "42""#,
            "matrix": #"url: "http://127.0.0.1:1", room_id: "!r:example.org", access_token: "${HOME}""#,
            "pushover": #"token: "${HOME}", user_key: "${HOME}""#,
            "gotify": #"url: "http://127.0.0.1:1", token: "${HOME}""#,
            "incidentio": #"url: "http://127.0.0.1:1/x", token: "${HOME}""#,
        ]
        return try #require(
            try ConfigLoader.parse(
                """
                sources: [{name: acme, url: "http://127.0.0.1:1/"}]
                alerts:
                  hooks: [{name: h, type: \(type.rawValue), \(extra[type] ?? #"url: "http://127.0.0.1:1/base/oncall""#)}]
                """, file: "t.yml", hooks: NotificationProviders.hookKinds
            ).hooks.first)
    }

    @Test func everyHookTypeHasOneProvider() throws {
        let types = NotificationProviders.all.map { $0.type }
        #expect(Set(types).count == types.count)
        #expect(types.first == .webhook)
        for type in types {
            #expect(NotificationProviders.provider(try hook(type)).type == type)
        }
        // A provider's own keys are not the shared ones, so each key has one meaning.
        let shared: Set = ["name", "type", "url", "url_file", "severities", "matchers", "send_resolved", "group_by", "group_wait"]
        for provider in NotificationProviders.all {
            #expect(shared.isDisjoint(with: provider.ownKeys), "\(provider.type)")
        }
    }

    /// Each new provider's own keys, refused with the reason and position when wrong.
    @Test(arguments: [
        (#"type: telegram, bot_token: "${HOME}""#, #"alerts.hooks[0].chat_id: is missing: the chat (or channel, @name) to send to"#),
        (#"type: telegram, chat_id: "1""#, #"alerts.hooks[0].bot_token_file: is missing: a telegram hook needs the bot's token (from @BotFather)"#),
        (
            #"type: telegram, bot_token: "${HOME}", chat_id: "1", message_thread_id: x"#,
            #"alerts.hooks[0].message_thread_id: "x" is not a topic's id (a whole number)"#
        ),
        (
            #"type: matrix, url: "http://127.0.0.1:1", room_id: lobby, access_token: "${HOME}""#,
            #"alerts.hooks[0].room_id: "lobby" is not a room id (!id:server) or alias (#name:server)"#
        ),
        (#"type: pushover, token: "${HOME}""#, #"alerts.hooks[0].user_key_file: is missing: a pushover hook needs the user or group key"#),
        (#"type: gotify, url: "http://127.0.0.1:1""#, #"alerts.hooks[0].token_file: is missing: a gotify hook needs an application token"#),
        (#"type: incidentio, url: "http://127.0.0.1:1", token: "${HOME}", chat_id: "1""#, #"alerts.hooks[0].chat_id: only applies to type: telegram"#),
    ])
    func newProvidersReadTheirOwnKeys(hook: String, expected: String) throws {
        let yaml = """
            sources: [{name: acme, url: "http://127.0.0.1:1/"}]
            alerts:
              hooks: [{name: h, \(hook)}]
            """
        let error = try #require(throws: ConfigError.self) { try ConfigLoader.parse(yaml, file: "t.yml", hooks: NotificationProviders.hookKinds) }
        #expect(error.problems.map { "\($0.path): \($0.message)" }.contains(expected), "\(error.problems.map { "\($0.path): \($0.message)" })")
    }

    /// What Telegram, Matrix and Gotify put in the request at delivery: the token in the path or
    /// a header (never in the outbox's payload), Matrix's PUT with the delivery as transaction id.
    @Test func tokensGoInTheRequestNotThePayload() throws {
        let telegram = try hook("telegram")
        let request = OutboxDeliverer.request(telegram, payload: "{}", delivery: "7")
        #expect(request.url.hasSuffix("/bot\(ProcessInfo.processInfo.environment["HOME"] ?? "")/sendMessage"))
        let matrix = OutboxDeliverer.request(try hook("matrix"), payload: "{}", delivery: "42")
        #expect(matrix.method == "PUT" && matrix.url.hasSuffix("/_matrix/client/v3/rooms/%21r%3Aexample%2Eorg/send/m.room.message/lookout-42"))
        #expect(matrix.headers.contains { $0.name == "Authorization" && $0.value.hasPrefix("Bearer ") })
        let gotify = OutboxDeliverer.request(try hook("gotify"), payload: "{}", delivery: "1")
        #expect(gotify.url == "http://127.0.0.1:1/message" && gotify.headers.contains { $0.name == "X-Gotify-Key" })
    }

    /// Where ntfy and Google Chat deliver, worked out from the hook's URL: ntfy's server root
    /// (the topic goes in the JSON), Google Chat's URL with one `messageReplyOption` whatever
    /// the URL held; everything else as written.
    @Test func deliveryURLsKeepWhatTheHookURLHolds() throws {
        func hook(_ type: HookType, _ url: String) throws -> HookConfig {
            var hook = try self.hook(type)
            hook.url = url
            return hook
        }
        #expect(NtfyProvider.deliveryURL(try hook("ntfy", "https://ntfy.example:8443/team/on%20call?auth=x")) == "https://ntfy.example:8443/team?auth=x")
        #expect(NtfyProvider.deliveryURL(try hook("ntfy", "https://ntfy.example/oncall")) == "https://ntfy.example/")
        #expect(NtfyProvider.topic(of: "https://ntfy.example:8443/team/on%20call?auth=x") == "on call")
        #expect(NtfyProvider.topic(of: "not a url") == "lookout")
        let chat = "https://chat.example/v1/spaces/AAA/messages?key=k%26&messageReplyOption=OLD&token=t"
        #expect(
            GoogleChatProvider.deliveryURL(try hook("googlechat", chat))
                == "https://chat.example/v1/spaces/AAA/messages?key=k%26&token=t&messageReplyOption=REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD")
        #expect(
            GoogleChatProvider.deliveryURL(try hook("googlechat", "https://chat.example/v1/spaces/AAA/messages"))
                == "https://chat.example/v1/spaces/AAA/messages?messageReplyOption=REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD")
        #expect(EmailProvider.urlProblem("smtp://mail.example:587") == nil)
        #expect(EmailProvider.urlProblem("smtps://[::1]:465") == nil)
        #expect(EmailProvider.urlProblem("smtp://") != nil && EmailProvider.urlProblem("smtp:/mail.example") != nil)
    }

    @Test func theReaderKnowsOnlyTheTypesItIsHanded() throws {
        let yaml = """
            sources: [{name: acme, url: "http://127.0.0.1:1/"}]
            alerts:
              hooks: [{name: h, type: slakc, url: "http://127.0.0.1:1/"}]
            """
        let error = try #require(throws: ConfigError.self) { try ConfigLoader.parse(yaml, file: "t.yml", hooks: NotificationProviders.hookKinds) }
        let message = try #require(error.problems.map(\.message).first)
        #expect(message.hasPrefix(#""slakc" is not a hook type (use webhook, alertmanager, slack, "#))
        // Every registered type is offered, however many there are.
        for provider in NotificationProviders.all { #expect(message.contains(provider.type.rawValue)) }
        // Without providers (a reader below LookoutAlerting), no hook type is known.
        let bare = try #require(throws: ConfigError.self) { try ConfigLoader.parse(yaml.replacingOccurrences(of: "slakc", with: "slack"), file: "t.yml") }
        #expect(bare.problems.map(\.message) == [#""slack" is not a hook type (use none: no provider is known)"#])
    }

    @Test func aHookOfAnUnknownTypeHasItsOtherProblemsToldInTheSamePass() throws {
        let yaml = """
            sources: [{name: acme, url: "http://127.0.0.1:1/"}]
            alerts:
              hooks: [{name: h, type: slakc, url: "http://127.0.0.1:1/", group_wait: soon}]
            """
        let error = try #require(throws: ConfigError.self) { try ConfigLoader.parse(yaml, file: "t.yml", hooks: NotificationProviders.hookKinds) }
        #expect(error.problems.map(\.path) == ["alerts.hooks[0].type", "alerts.hooks[0].group_wait"])
    }

    @Test func aChangedProviderSettingIsAChangedHook() throws {
        func config(_ template: String) throws -> LookoutConfig {
            try ConfigLoader.parse(
                """
                sources: [{name: acme, url: "http://127.0.0.1:1/"}]
                alerts:
                  hooks: [{name: h, url: "http://127.0.0.1:1/", template: "\(template)"}]
                """, file: "t.yml", hooks: NotificationProviders.hookKinds)
        }
        #expect(ConfigChange(from: try config("{{title}}"), to: try config("{{title}}")).hooksChanged == [])
        #expect(ConfigChange(from: try config("{{title}}"), to: try config("{{headline}}")).hooksChanged == ["h"])
    }

    @Test func aProviderOfItsOwnIsOneTypeAndItsKeys() throws {
        let yaml = """
            sources: [{name: acme, url: "http://127.0.0.1:1/"}]
            alerts:
              hooks:
                - {name: toy, type: toy, url: "http://127.0.0.1:1/", colour: teal}
                - {name: plain, url: "http://127.0.0.1:1/", colour: red}
            """
        let kinds = NotificationProviders.hookKinds + [ToyProvider.self]
        let error = try #require(throws: ConfigError.self) { try ConfigLoader.parse(yaml, file: "t.yml", hooks: kinds) }
        #expect(error.problems.map { "\($0.path): \($0.message)" } == ["alerts.hooks[1].colour: only applies to type: toy"])
        let config = try ConfigLoader.parse(yaml.replacingOccurrences(of: ", colour: red", with: ""), file: "t.yml", hooks: kinds)
        #expect(config.hooks.first?.settings.get(ToyProvider.Settings.self) == ToyProvider.Settings(colour: "teal"))
        #expect(config.hooks.last?.settings.get(ToyProvider.Settings.self) == nil)
        let wrong = try #require(throws: ConfigError.self) {
            try ConfigLoader.parse(
                yaml.replacingOccurrences(of: "teal", with: "\"\"").replacingOccurrences(of: ", colour: red", with: ""), file: "t.yml", hooks: kinds)
        }
        #expect(wrong.problems.map { "\($0.path): \($0.message)" } == ["alerts.hooks[0].colour: must not be empty"])
    }

    @Test func whatProvidersDeclareReachesTheRequest() throws {
        #expect(OutboxDeliverer.request(try hook("alertmanager"), payload: "[]", delivery: "1").url == "http://127.0.0.1:1/base/oncall/api/v2/alerts")
        #expect(OutboxDeliverer.request(try hook("ntfy"), payload: "{}", delivery: "1").url == "http://127.0.0.1:1/base")
        #expect(OutboxDeliverer.request(try hook("slack"), payload: "{}", delivery: "1").url == "http://127.0.0.1:1/base/oncall")
        let paged = OutboxDeliverer.request(try hook("pagerduty"), payload: #"{"event_action":"trigger"}"#, delivery: "1")
        let key = try #require(ProcessInfo.processInfo.environment["HOME"])
        #expect(String(decoding: paged.body ?? [], as: UTF8.self) == #"{"routing_key":"\#(key)","event_action":"trigger"}"#)
        let slack = OutboxDeliverer.request(try hook("slack"), payload: #"{"text":"x"}"#, delivery: "1")
        #expect(String(decoding: slack.body ?? [], as: UTF8.self) == #"{"text":"x"}"#)
        #expect(NotificationProviders.all.filter { !$0.grouped }.map { $0.type } == ["alertmanager"])
        let ownDelivery = NotificationProviders.all.filter {
            if case .own = $0.delivery { true } else { false }
        }
        #expect(ownDelivery.map { $0.type } == ["email"])
    }
}

/// A provider defined outside the registry, with a key of its own: what a new provider is.
private enum ToyProvider: NotificationProvider {
    static let type: HookType = "toy"
    static let ownKeys = ["colour"]

    struct Settings: ProviderSettings {
        var colour: String
    }

    static func read(_ keys: inout HookKeys, into hook: inout HookConfig) {
        guard let colour = keys.string("colour") else { return }
        guard !colour.isEmpty else { return keys.problem("colour", "must not be empty") }
        hook.settings = HookSettings(Settings(colour: colour))
    }

    static func body(_ summary: ProviderPayloads.Summary, _ send: NotificationGroups.Send, hook: HookConfig, externalURL: String, nowMs: Int64) -> String {
        summary.headline
    }
}
