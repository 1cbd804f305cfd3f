import GRDB
import LookoutCore
import ResilientHTTP

/// One failed attempt, as the `error_records` table keeps it.
package struct ErrorRecord: Sendable, Equatable {
    package var tsMs: Int64
    package var source: String
    package var category: String
    package var reason: String
    package var httpStatus: Int?
    package var curlCode: Int32?
    package var message: String
    package var serverMessage: String?
    package var attempt: Int
    package var wasRetried: Bool
    package var retrySucceeded: Bool

    package init(
        tsMs: Int64, source: String, category: String, reason: String, httpStatus: Int?, curlCode: Int32?, message: String,
        serverMessage: String?, attempt: Int, wasRetried: Bool, retrySucceeded: Bool
    ) {
        self.tsMs = tsMs
        self.source = source
        self.category = category
        self.reason = reason
        self.httpStatus = httpStatus
        self.curlCode = curlCode
        self.message = message
        self.serverMessage = serverMessage
        self.attempt = attempt
        self.wasRetried = wasRetried
        self.retrySucceeded = retrySucceeded
    }

    /// Every failed attempt of a finished call, with the call's outcome filled in.
    package static func from(_ outcome: CallOutcome) -> [ErrorRecord] {
        let succeeded = outcome.ok
        var records = outcome.attempts.compactMap { attempt -> ErrorRecord? in
            guard let failure = attempt.failure else { return nil }
            return ErrorRecord(
                tsMs: attempt.startedAtMs, source: outcome.upstream, category: failure.category.rawValue, reason: failure.reason,
                httpStatus: failure.httpStatus, curlCode: failure.curlCode, message: failure.message(operation: "probing \(outcome.upstream)"),
                serverMessage: failure.serverMessage, attempt: attempt.number, wasRetried: attempt.retried,
                retrySucceeded: attempt.retried && succeeded)
        }
        // A call refused before any attempt (plain http) is one record too; a call the open
        // breaker refused is not: the upstream did nothing wrong in it (it counts in
        // lookout_circuit_breaker_not_permitted_calls_total).
        if outcome.attempts.isEmpty, let failure = outcome.failure, !outcome.cancelled, failure.category != .circuitOpen {
            records.append(
                ErrorRecord(
                    tsMs: outcome.startedAtMs, source: outcome.upstream, category: failure.category.rawValue, reason: failure.reason,
                    httpStatus: nil, curlCode: nil, message: failure.message(operation: "probing \(outcome.upstream)"),
                    serverMessage: nil, attempt: 0, wasRetried: false, retrySucceeded: false))
        }
        return records
    }
}

/// Everything the writer can be asked to store.
package enum StoreRecord: Sendable {
    case probe(ProbeResult)
    case error(ErrorRecord)
    case transition(source: String, BreakerTransition)
    case breakerState(source: String, PersistedBreaker, atMs: Int64)
    /// A failed probe of the source's outage (nil: a success ended it), for the `outages` table:
    /// a restart picks an outage up where it was.
    case outage(source: String, failed: ProbeResult?)
    /// Every stored outage is stale: queued first when they could not be read at the start (a
    /// file read-only or full then), so the first write that works clears them before this run's.
    case forgetOutages
    /// An outage by its source's policy began or ended (`sla_outages`), seen from `location`.
    case outageEdge(OutageEdge, location: String?)

    /// When too many wait for the database, which go first (lowest first, oldest first):
    /// 0, raw results and error records, the many; 1, an outage's failed probes, breaker states
    /// and transitions, which later ones of the same source supersede or only add to (a dropped
    /// first failure moves `down_since` later, a dropped one after it loses a count); 2, outage
    /// ends and forgetting, without which a restart would take back an outage that is over.
    var dropOrder: Int {
        switch self {
        case .probe, .error: 0
        case .transition, .breakerState, .outage(_, .some): 1
        case .outage(_, nil), .forgetOutages, .outageEdge: 2
        }
    }

    static let lastDropOrder = 2
}

/// An outage in progress when Lookout stopped, as the `outages` table keeps it.
package struct StoredOutage: Sendable, Equatable {
    package var source: String
    /// The first failed probe since the source's last success.
    package var downSinceMs: Int64
    package var failedProbes: Int
    /// The last failure the upstream caused, rebuilt from its stored fields.
    package var cause: ProbeResult

    /// nil for a row this version cannot read: a category it does not know, a value of the wrong
    /// type, or times not before `nowMs` (a damaged file may hold anything; every value is read
    /// as it may be, and counts are kept within a billion).
    init?(source: String, _ row: Row, nowMs: Int64) {
        guard let category = row.text("category").flatMap(ErrorCategory.init(rawValue:)), let reason = row.text("reason"),
            let downSinceMs = row.integer("down_since_ms"), let lastFailedMs = row.integer("last_failed_ms"),
            downSinceMs >= 0, downSinceMs <= lastFailedMs, lastFailedMs <= nowMs
        else { return nil }
        self.source = source
        self.downSinceMs = downSinceMs
        failedProbes = row.boundedCount("failed_probes") ?? 0
        let failure = Failure(
            category: category, reason: reason, httpStatus: row.integer("http_status").flatMap { (100...999).contains($0) ? Int($0) : nil },
            curlCode: row.integer("curl_code").flatMap { Int32(exactly: $0) }, detail: row.text("detail") ?? "", serverMessage: row.text("server_message"))
        cause = ProbeResult(source: source, timestampMs: lastFailedMs, ok: false, failure: failure, httpStatus: failure.httpStatus)
    }
}

/// One source's probes in one minute, hour or day (a row of the rollup tables).
package struct Rollup: Sendable, Equatable {
    package var probes = 0
    package var failures = 0
    package var retried = 0
    package var retrySucceeded = 0
    package var durationUsSum: Int64 = 0
    package var durationUsMax: Int64 = 0
    /// Counts per `Histogram.latencyBuckets` bound, then +Inf (not cumulative).
    package var latencyBuckets = [Int](repeating: 0, count: Histogram.latencyBuckets.count + 1)

    package init() {}

    /// Adds one result; saturating, since the counts may have come from a stored row.
    mutating func add(_ result: ProbeResult) {
        probes = probes.addingClamped(1)
        if !result.ok { failures = failures.addingClamped(1) }
        if result.attempts > 1 {
            retried = retried.addingClamped(1)
            if result.ok { retrySucceeded = retrySucceeded.addingClamped(1) }
        }
        let microseconds = Microseconds.from(seconds: result.durationSeconds)
        durationUsSum = durationUsSum.addingClamped(microseconds)
        durationUsMax = max(durationUsMax, microseconds)
        // The latency buckets (the page's chart after a restart) count one attempt's latency,
        // as the page does; duration_ms is the whole call.
        if let latency = result.attemptSeconds {
            let index = Histogram.latencyBuckets.firstIndex { latency <= $0 } ?? Histogram.latencyBuckets.count
            if latencyBuckets.indices.contains(index) { latencyBuckets[index] = latencyBuckets[index].addingClamped(1) }
        }
    }

    /// Adds another stretch's counts, saturating (stored rows are outside input too).
    package mutating func add(_ other: Rollup) {
        probes = probes.addingClamped(other.probes)
        failures = failures.addingClamped(other.failures)
        retried = retried.addingClamped(other.retried)
        retrySucceeded = retrySucceeded.addingClamped(other.retrySucceeded)
        durationUsSum = durationUsSum.addingClamped(other.durationUsSum)
        durationUsMax = max(durationUsMax, other.durationUsMax)
        for (index, count) in other.latencyBuckets.prefix(latencyBuckets.count).enumerated() {
            latencyBuckets[index] = latencyBuckets[index].addingClamped(count)
        }
    }
}
