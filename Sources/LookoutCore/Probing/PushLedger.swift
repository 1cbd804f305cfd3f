import ResilientHTTP
import Synchronization

/// What push sources' jobs have told Lookout (`/push/TOKEN`): each source's last success, last
/// failure and run in progress, found by token in constant time, each token's calls rate-limited.
/// The push prober reads it; a restart takes it back from the database.
package final class PushLedger: Sendable {
    /// One source's calls so far.
    package struct Entry: Sendable, Equatable {
        package var lastSuccessMs: Int64?
        /// The last call that reported a failure (`/fail`, a non-zero exit status).
        package var lastFailureMs: Int64?
        /// The job's own words with the last call, made printable.
        package var message: String?
        /// The exit status of the last failure, when it gave one.
        package var exitStatus: Int?
        /// `/start`: a run began; the next success records how long it took.
        package var startedMs: Int64?
        /// How long the last run took, from `/start` to its success.
        package var durationSeconds: Double?

        package init(lastSuccessMs: Int64? = nil, lastFailureMs: Int64? = nil, message: String? = nil, exitStatus: Int? = nil) {
            self.lastSuccessMs = lastSuccessMs
            self.lastFailureMs = lastFailureMs
            self.message = message
            self.exitStatus = exitStatus
        }

        /// The last call was a failure.
        package var failing: Bool {
            guard let lastFailureMs else { return false }
            return lastFailureMs >= (lastSuccessMs ?? .min)
        }
    }

    /// What a job's call says.
    package enum Event: Sendable, Equatable {
        case success(message: String?)
        case failure(message: String?, exitStatus: Int?)
        case start
    }

    /// Whether a call was taken.
    package enum Admission: Sendable, Equatable {
        case recorded(source: String, entry: Entry)
        /// More calls than the token may make: try again after this many seconds.
        case rateLimited(retryAfterSeconds: Int)
    }

    /// A token may make `burst` calls at once and one more every `refillMs`.
    static let burst = 10.0
    static let refillMs = 1000.0

    private struct Token {
        var digest: [UInt8]
        var source: String
    }

    private struct State {
        var tokens: [Token] = []
        var entries: [String: Entry] = [:]
        /// Per source: calls left and when they were counted.
        var buckets: [String: (tokens: Double, atMs: Int64)] = [:]
    }

    private let state = Mutex(State())
    /// When this process started: a source that has never called in is late only once its
    /// whole period and grace have passed since then.
    package let startedAtMs: Int64

    package init(startedAtMs: Int64 = Timestamp.nowMs()) {
        self.startedAtMs = startedAtMs
    }

    /// The configured push sources' tokens; entries of sources no longer configured are dropped.
    package func setSources(_ sources: [SourceConfig]) {
        let tokens = sources.compactMap { source in source.push.map { Token(digest: PushLedger.digest($0.token), source: source.name) } }
        let names = Set(tokens.map(\.source))
        state.withLock { state in
            state.tokens = tokens
            state.entries = state.entries.filter { names.contains($0.key) }
            state.buckets = state.buckets.filter { names.contains($0.key) }
        }
    }

    static func digest(_ token: String) -> [UInt8] {
        let hash = SHA256()
        hash.update(Array(token.utf8))
        return hash.finalize()
    }

    /// The source whose token is `token`, or nil. Every configured token is compared, in
    /// constant time each, so the time taken says nothing of which exist or how close one came.
    package func source(forToken token: String) -> String? {
        let presented = PushLedger.digest(token)
        return state.withLock { state in
            var found: String?
            for entry in state.tokens where SHA256.constantTimeEquals(entry.digest, presented) && found == nil { found = entry.source }
            return found
        }
    }

    /// Records `event` for `source` at `nowMs`, unless the source's calls are over their rate.
    package func record(_ event: Event, source: String, nowMs: Int64) -> Admission {
        state.withLock { state in
            var bucket = state.buckets[source] ?? (PushLedger.burst, nowMs)
            let refilled = Double(max(0, nowMs - bucket.atMs)) / PushLedger.refillMs
            bucket = (min(PushLedger.burst, bucket.tokens + refilled), nowMs)
            guard bucket.tokens >= 1 else {
                state.buckets[source] = bucket
                return .rateLimited(retryAfterSeconds: max(1, Int(((1 - bucket.tokens) * PushLedger.refillMs / 1000).rounded(.up))))
            }
            bucket.tokens -= 1
            state.buckets[source] = bucket
            var entry = state.entries[source] ?? Entry()
            switch event {
            case .start:
                entry.startedMs = nowMs
            case .success(let message):
                entry.lastSuccessMs = nowMs
                entry.message = message
                entry.exitStatus = nil
                entry.durationSeconds = entry.startedMs.map { Double(max(0, nowMs - $0)) / 1000 }
                entry.startedMs = nil
            case .failure(let message, let exitStatus):
                entry.lastFailureMs = nowMs
                entry.message = message
                entry.exitStatus = exitStatus
                entry.durationSeconds = nil
                entry.startedMs = nil
            }
            state.entries[source] = entry
            return .recorded(source: source, entry: entry)
        }
    }

    /// `source`'s calls so far, or nil when it has made none.
    package func entry(_ source: String) -> Entry? {
        state.withLock { $0.entries[source] }
    }

    /// How long the run that just succeeded took (`/start` to success), once: the probe that
    /// tells the success shows it as the latency, later ones do not.
    package func takeRunSeconds(_ source: String) -> Double? {
        state.withLock { state in
            defer { state.entries[source]?.durationSeconds = nil }
            return state.entries[source]?.durationSeconds
        }
    }

    /// Takes back what the database kept of the last calls, for sources that have made none
    /// since this start.
    package func restore(_ saved: [String: Entry]) {
        state.withLock { state in
            for (source, entry) in saved where state.entries[source] == nil { state.entries[source] = entry }
        }
    }
}
