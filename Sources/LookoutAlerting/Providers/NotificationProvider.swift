import LookoutCore
import ResilientHTTP

/// One kind of hook (`type:` in a hook's config): the keys it reads (as a `HookKind`), what it
/// sends for a notification and how it is delivered. A new provider is a file in this folder and
/// a line in `NotificationProviders.all`, which the config reader is handed at start and on every
/// reload.
protocol NotificationProvider: HookKind {
    /// Whether it gets Lookout's grouped notifications (one per broken source); false for a
    /// receiver that groups alerts itself (Alertmanager), which gets each alert on its own.
    static var grouped: Bool { get }
    /// How a notification reaches it.
    static var delivery: NotificationDelivery { get }
    /// The body of one grouped notification, firing, resolved or `hooks test`'s, in the
    /// provider's documented format. It is kept in the outbox: no secret may be in it.
    static func body(_ summary: ProviderPayloads.Summary, _ send: NotificationGroups.Send, hook: HookConfig, externalURL: String, nowMs: Int64) -> String
    /// Where the request goes (default: the hook's URL).
    static func deliveryURL(_ hook: HookConfig) -> String
    /// The request of one delivery: URL, method and headers of its own (a bearer token; Matrix's
    /// PUT with the delivery as its transaction id, so a retry is not a second message).
    /// `delivery` is the outbox row's id, the same on every retry. Default: POST to `deliveryURL`.
    static func target(_ hook: HookConfig, delivery: String) -> DeliveryTarget
    /// How long the receiver asked to wait in its answer's body (Telegram's
    /// `parameters.retry_after`, Matrix's `retry_after_ms`), beside any Retry-After header.
    static func askedWait(_ answer: TransferResult) -> Duration?
    /// The body as sent, with what the outbox must not hold added now (default: unchanged).
    static func atDelivery(_ payload: String, _ hook: HookConfig) -> String
}

/// How a provider's notifications travel.
enum NotificationDelivery: Sendable {
    /// A POST through the resilient client, with the hook's breaker, retries and signature.
    case http
    /// The provider sends the outbox row's payload itself (email, through the hook's SMTP relay);
    /// the outbox still keeps the row, retries it with backoff and counts what happened.
    case own(@Sendable (_ payload: String, _ hook: HookConfig) async -> OwnDelivery)
}

/// Where one delivery goes and how.
struct DeliveryTarget: Sendable {
    var url: String
    var method = "POST"
    /// Added to the shared headers (Content-Type, the delivery id, the user agent); never kept in
    /// the outbox, so a token may be one.
    var headers: [(name: String, value: String)] = []
}

/// What a provider that sends for itself reports of one try.
struct OwnDelivery: Sendable {
    /// What the receiver answered, for `lookout hooks test` ("SMTP 250").
    var reply: String
    /// Why it was not delivered, in words for the operator; nil when it was.
    var error: String?
}

extension NotificationProvider {
    static var grouped: Bool { true }
    static var delivery: NotificationDelivery { .http }
    static func deliveryURL(_ hook: HookConfig) -> String { hook.url }
    static func target(_ hook: HookConfig, delivery: String) -> DeliveryTarget { DeliveryTarget(url: deliveryURL(hook)) }
    static func askedWait(_ answer: TransferResult) -> Duration? { nil }
    static func atDelivery(_ payload: String, _ hook: HookConfig) -> String { payload }
}

/// Every provider, one line each.
package enum NotificationProviders {
    static let all: [any NotificationProvider.Type] = [
        WebhookProvider.self, AlertmanagerProvider.self, SlackProvider.self, TeamsProvider.self, PagerDutyProvider.self,
        DiscordProvider.self, NtfyProvider.self, EmailProvider.self,
        TelegramProvider.self,
        MattermostProvider.self,
        GoogleChatProvider.self,
        MatrixProvider.self,
        PushoverProvider.self,
        GotifyProvider.self,
        IncidentIOProvider.self,
        SplunkOnCallProvider.self,
    ]

    /// The hook types a config may name, with the keys each reads: hand them to
    /// `ConfigLoader.load(path:hooks:)` and `Monitor`.
    package static let hookKinds: [any HookKind.Type] = all.map { $0 }

    private static let byType: [HookType: any NotificationProvider.Type] = Dictionary(uniqueKeysWithValues: all.map { ($0.type, $0) })

    /// The provider of `hook`'s type.
    static func provider(_ hook: HookConfig) -> any NotificationProvider.Type {
        // The config reader accepts only these types; webhook is the config's default.
        byType[hook.type] ?? WebhookProvider.self
    }
}
