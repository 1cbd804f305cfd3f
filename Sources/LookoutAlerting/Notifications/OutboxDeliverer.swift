import Foundation
import Logging
import LookoutCore
import LookoutStore
import ResilientHTTP
import Synchronization

/// Delivers the outbox at least once: per hook, in order, the oldest row first; a row is marked
/// delivered only after a 2xx. Each request carries `X-Lookout-Delivery: <row id>` so receivers
/// can drop duplicates, and `X-Lookout-Signature: sha256=<HMAC>` when the hook has a secret.
/// Failures back off exponentially up to five minutes; rows survive restarts in SQLite.
package final class OutboxDeliverer: Sendable {
    /// Per-hook counters for `/metrics` and the status page.
    package struct HookStats: Sendable, Equatable {
        package var delivered: UInt64 = 0
        package var failed: UInt64 = 0
        package var lastError: String?
        package var lastDeliveredMs: Int64?
        /// Notifications set aside since the start (refused `maxRefusals` times).
        package var setAside: UInt64 = 0
        /// The last one set aside: why.
        package var lastSetAside: String?
    }

    /// A notification the receiver refuses (a 4xx other than 408 and 429: it will not take this
    /// body) this many times is set aside, so the hook's later notifications go on.
    package static let maxRefusals = 3

    package static let backoffBase: Duration = .seconds(1)
    /// A receiver back from an outage hears from Lookout within this long.
    package static let backoffMax: Duration = .seconds(60)

    /// The hooks in force (they change on reload).
    let hooks: @Sendable () -> [HookConfig]
    let store: OutboxStore
    let client: ResilientClient
    let logger: Logger
    private let stats = Mutex<[String: HookStats]>([:])
    private let wake = AsyncWakeUp()
    /// The hooks whose rows are being delivered now.
    private let draining = Mutex<Set<String>>([])

    package init(hooks: @escaping @Sendable () -> [HookConfig], store: OutboxStore, client: ResilientClient, logger: Logger) {
        self.hooks = hooks
        self.store = store
        self.client = client
        self.logger = logger
    }

    package var hookStats: [String: HookStats] { stats.withLock { $0 } }

    /// Asks the deliverer to look at the outbox now (new rows were written).
    package func poke() {
        wake.signal()
    }

    /// Delivers until cancelled, looking again at least every second. Each hook drains on its
    /// own: a receiver that hangs (up to the 30 s a delivery may take) holds back only its own
    /// hook's notifications, never another's; a hook still draining is not started again.
    package func run() async {
        await withDiscardingTaskGroup { group in
            while !Task.isCancelled {
                for hook in hooks() where draining.withLock({ $0.insert(hook.name).inserted }) {
                    group.addTask {
                        await self.drain(hook)
                        self.draining.withLock { _ = $0.remove(hook.name) }
                    }
                }
                await wake.wait(timeout: .seconds(1))
            }
            group.cancelAll()
        }
    }

    /// Sends the hook's due rows in order until one fails or none is left.
    func drain(_ hook: HookConfig) async {
        configure(hook)
        while !Task.isCancelled {
            let row: OutboxRow?
            do { row = try store.head(hook: hook.name) } catch {
                logger.error("cannot read the outbox", metadata: ["error": "\(error)"])
                return
            }
            guard let row, row.nextAttemptAtMs <= Timestamp.nowMs() else { return }
            guard await deliver(row, to: hook) else { return }
        }
    }

    /// One try; true when the row was delivered.
    func deliver(_ row: OutboxRow, to hook: HookConfig) async -> Bool {
        if case .own(let send) = NotificationProviders.provider(hook).delivery {
            let outcome = await send(row.payload, hook)
            return settle(
                row, hook, ok: outcome.error == nil, reason: outcome.error.map { "Error while notifying \(hook.name): \($0)" } ?? "", askedWait: nil,
                refused: false)
        }
        let request = OutboxDeliverer.request(hook, payload: row.payload, delivery: String(row.id))
        let outcome = await client.call(
            upstream: OutboxDeliverer.upstream(hook),
            CallRequest(request, deadline: .seconds(30), singleFlight: false))
        let reason = outcome.failure.map { $0.message(operation: "notifying \(hook.name)") } ?? "cancelled"
        // The hook's breaker held the call back: try again when it lets one through.
        var asked = outcome.final.flatMap { ServerWait.requested(by: $0) }
        if let told = outcome.final.flatMap(NotificationProviders.provider(hook).askedWait) { asked = max(asked ?? .zero, told) }
        if outcome.failure?.category == .circuitOpen, let next = outcome.breaker?.nextAttemptAtMs {
            asked = .milliseconds(max(0, next - Timestamp.nowMs()))
        }
        // The receiver answered and will not take this body: retrying it for ever would hold
        // back every later notification to the hook.
        let status = outcome.final?.httpStatus ?? 0
        let refused = (400...499).contains(status) && status != 408 && status != 429 && outcome.failure?.category != .circuitOpen
        return settle(row, hook, ok: outcome.ok, reason: reason, askedWait: asked, refused: refused)
    }

    /// Marks the row delivered, or failed with a backoff (at least what the receiver asked for).
    private func settle(_ row: OutboxRow, _ hook: HookConfig, ok: Bool, reason: String, askedWait: Duration?, refused: Bool) -> Bool {
        let now = Timestamp.nowMs()
        if ok {
            do { try store.markDelivered(row.id, nowMs: now) } catch {
                logger.error("delivered, but cannot mark the outbox row", metadata: ["hook": "\(hook.name)", "error": "\(error)"])
                return false
            }
            stats.withLock {
                $0[hook.name, default: HookStats()].delivered += 1
                $0[hook.name]!.lastError = nil
                $0[hook.name]!.lastDeliveredMs = now
            }
            return true
        }
        if refused && row.attempts.addingClamped(1) >= OutboxDeliverer.maxRefusals {
            do { try store.setAside(row.id, error: reason, nowMs: now) } catch {
                logger.error("cannot set a refused notification aside", metadata: ["hook": "\(hook.name)", "error": "\(error)"])
                return false
            }
            stats.withLock {
                $0[hook.name, default: HookStats()].failed += 1
                $0[hook.name]!.setAside += 1
                $0[hook.name]!.lastSetAside = reason
                $0[hook.name]!.lastError = nil
            }
            logger.error(
                "notification set aside: its receiver refused it \(OutboxDeliverer.maxRefusals) times; later ones go on",
                metadata: [
                    "hook": "\(hook.name)", "error": "\(reason)", "delivery": "\(row.id)",
                    "retry": "POST /api/v1/hooks/\(hook.name)/retry",
                ])
            return true  // on to the next row
        }
        // A receiver that says when to come back (429 or 503 with Retry-After) is up and is taken
        // at its word, as is the hook's breaker; otherwise the wait doubles, up to a minute.
        var wait = OutboxDeliverer.backoff(afterAttempts: row.attempts.addingClamped(1))
        if let asked = askedWait { wait = max(OutboxDeliverer.backoffBase, min(asked, OutboxDeliverer.backoffMax)) }
        try? store.markFailed(row.id, error: reason, nextAttemptAtMs: now + wait.totalMilliseconds)
        let first = stats.withLock { stats -> Bool in
            let first = stats[hook.name]?.lastError == nil
            stats[hook.name, default: HookStats()].failed += 1
            stats[hook.name]!.lastError = reason
            return first
        }
        if first {
            logger.warning(
                "cannot deliver a notification; retrying with backoff",
                metadata: [
                    "hook": "\(hook.name)", "error": "\(reason)", "delivery": "\(row.id)",
                ])
        }
        return false
    }

    /// The request that carries `payload` to `hook`: its provider's URL, the PagerDuty routing key
    /// added now (outbox rows never hold it), the delivery id and, with a secret, the signature.
    package static func request(_ hook: HookConfig, payload: String, delivery: String) -> TransferRequest {
        let provider = NotificationProviders.provider(hook)
        let parts = WebhookProvider.split(payload)
        let body = Array(provider.atDelivery(parts.body, hook).utf8)
        let target = provider.target(hook, delivery: delivery)
        var headers: [(name: String, value: String)] = [
            ("Content-Type", "application/json"), ("X-Lookout-Delivery", delivery), ("User-Agent", LookoutVersion.userAgent),
        ]
        headers += target.headers
        // A template's headers replace the defaults of the same name.
        for (name, value) in parts.headers {
            headers.removeAll { $0.name.lowercased() == name.lowercased() }
            headers.append((name, value))
        }
        if let secret = hook.hmacSecret {
            headers.append(("X-Lookout-Signature", "sha256=" + SHA256.hmacHex(key: Array(secret.utf8), message: body)))
        }
        return TransferRequest(
            url: target.url, method: target.method, headers: headers, body: body, timeout: .seconds(10), freshConnection: false)
    }

    /// 1 s, 2 s, 4 s… up to a minute.
    package static func backoff(afterAttempts attempts: Int) -> Duration {
        let seconds = backoffBase.seconds * pow(2, Double(max(0, attempts - 1)))
        return Duration.clamping(seconds: min(seconds, backoffMax.seconds)) ?? backoffBase
    }

    static func upstream(_ hook: HookConfig) -> String { "hook:\(hook.name)" }

    /// Each hook is an upstream of its own: its own breaker, which a 429 does not trip (the
    /// receiver is up; its Retry-After is waited out); retries inside a try are few, the outbox
    /// backoff does the rest. A 429 is not retried inside the try: the outbox waits what the
    /// receiver said, in its Retry-After or, for Telegram and Matrix, in its body (`askedWait`).
    private func configure(_ hook: HookConfig) {
        var retry = RetryPolicy.standard
        for (category, rule) in retry.rules { retry.rules[category]?.maxAttempts = min(2, rule.maxAttempts) }
        retry.rules[.rateLimited]?.maxAttempts = 1
        client.configure(
            upstream: OutboxDeliverer.upstream(hook),
            policy: UpstreamPolicy(
                retry: retry,
                breaker: CircuitBreakerSettings(
                    failureThreshold: 5, openTimeout: .seconds(30), openTimeoutMax: .seconds(60),
                    rateLimitTrips: false),
                rateLimit: nil))
    }
}

extension String {
    func trimmingSuffix(_ suffix: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) : self
    }
}
