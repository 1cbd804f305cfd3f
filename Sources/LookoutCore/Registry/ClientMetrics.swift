import ResilientHTTP
import Synchronization

/// Counts what the resilient client reports, per source, for `/metrics`.
public final class ClientMetrics: ClientEventSink {
    /// The counters of one source.
    public struct Counters: Sendable, Equatable {
        /// Failed attempts by "category/reason".
        public var errors: [String: UInt64] = [:]
        /// Retries by category.
        public var retries: [ErrorCategory: UInt64] = [:]
        public var calls: [CallKind: UInt64] = [:]
        public var retryBudgetExhausted: UInt64 = 0
        public var tokenRefreshes: UInt64 = 0
        public var tokenRefreshFailures: UInt64 = 0

        public init() {}
    }

    private let counters = Mutex<[String: Counters]>([:])

    public init() {}

    public func handle(_ event: ClientEvent) {
        switch event {
        case .attemptFinished(let upstream, let attempt):
            guard let failure = attempt.failure else { return }
            update(upstream) { $0.errors["\(failure.category.rawValue)/\(failure.reason)", default: 0] += 1 }
        case .retryScheduled(let upstream, _, let category, _):
            update(upstream) { $0.retries[category, default: 0] += 1 }
        case .callFinished(let outcome):
            guard !outcome.cancelled else { return }
            update(outcome.upstream) { counters in
                counters.calls[outcome.kind, default: 0] += 1
                // Failures decided before any attempt (breaker open, plain http refused) count too.
                if outcome.attempts.isEmpty, let failure = outcome.failure {
                    counters.errors["\(failure.category.rawValue)/\(failure.reason)", default: 0] += 1
                }
            }
        case .retryBudgetExhausted(let upstream):
            update(upstream) { $0.retryBudgetExhausted += 1 }
        case .tokenRefreshed(let upstream, let succeeded):
            update(upstream) {
                $0.tokenRefreshes += 1
                if !succeeded { $0.tokenRefreshFailures += 1 }
            }
        case .breakerTransition, .callNotPermitted:
            return
        }
    }

    /// The counters of `sources`, in their order, in one lock.
    public func snapshot(_ sources: [String]) -> [Counters] {
        counters.withLock { counters in sources.map { counters[$0] ?? Counters() } }
    }

    public func snapshot(_ source: String) -> Counters {
        counters.withLock { $0[source] ?? Counters() }
    }

    /// Forgets sources that left the config.
    public func retain(_ sources: Set<String>) {
        counters.withLock { $0 = $0.filter { sources.contains($0.key) } }
    }

    private func update(_ source: String, _ body: (inout Counters) -> Void) {
        counters.withLock { body(&$0[source, default: Counters()]) }
    }
}
