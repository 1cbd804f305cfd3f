import ResilientHTTP

extension SourceKind {
    package static let push = SourceKind(declaring: "push")
}

/// `kind: push`: a job that must call in — the nightly export, a partner's batch, a vendor's
/// webhooks — rather than an endpoint to ask. Its job calls `/push/TOKEN` (or `/fail`, `/start`,
/// an exit status); each probe on the interval reads what it last said (`PushLedger`), and a call
/// is judged at once. The source is down when the job reports a failure, and when it has not
/// called within `expect_every` (or after its `schedule`'s next run) and `grace`: at once, since
/// the grace already is the patience a threshold would add.
package enum PushProber: Prober {
    package static let kind = SourceKind.push
    package static let summary = "a call from the job itself (/push/TOKEN) within expect_every or after its schedule, plus grace"
    package static let ownKeys = ["expect_every", "schedule", "time_zone", "grace", "token", "token_file"]
    package static let isHTTPRequest = false
    package static let usesTransferThreads = false

    package static func urlProblem(_ url: String) -> String? {
        "a push source has no url: its job calls Lookout at /push/TOKEN"
    }

    package static func probe(_ source: SourceConfig, with prober: SourceProber, breakerCountsFailures: Bool) async -> ProbeResult {
        var result = judge(source, prober.pushes.entry(source.name), nowMs: Timestamp.nowMs(), startedAtMs: prober.pushes.startedAtMs)
        // A run timed from /start to its success: its length is the latency, once.
        if result.ok, let seconds = prober.pushes.takeRunSeconds(source.name) {
            result.attemptSeconds = seconds
            result.durationSeconds = seconds
        }
        if !result.ok { prober.report(result, for: source) }
        return result
    }

    /// What the job's last calls say at `nowMs`.
    package static func judge(_ source: SourceConfig, _ entry: PushLedger.Entry?, nowMs: Int64, startedAtMs: Int64) -> ProbeResult {
        var result = ProbeResult(source: source.name, timestampMs: nowMs, ok: true)
        guard let settings = source.push else {
            result.ok = false
            result.failure = Failure(category: .clientError, reason: "push_unconfigured", detail: "the source has no push settings")
            return result
        }
        if let entry, entry.failing {
            result.ok = false
            if let status = entry.exitStatus {
                result.failure = Failure(
                    category: .serverError, reason: "push_exit_status", detail: "the job exited with status \(status)", serverMessage: entry.message)
            } else {
                result.failure = Failure(category: .serverError, reason: "push_failed", detail: "the job reported a failure", serverMessage: entry.message)
            }
        } else {
            let lastMs = entry?.lastSuccessMs
            // Calls made while Lookout was not running were lost: a whole period and grace from
            // its start before they are missed.
            let (deadlineMs, expected) = settings.deadline(afterMs: max(lastMs ?? startedAtMs, startedAtMs))
            if nowMs > deadlineMs {
                result.ok = false
                let since =
                    lastMs.map { "no ping since \(PushProber.when($0, nowMs: nowMs))" }
                    ?? "no ping since Lookout started at \(PushProber.when(startedAtMs, nowMs: nowMs))"
                result.failure = Failure(category: .serverError, reason: "push_missed", detail: "\(since) (\(expected))")
            }
        }
        if !result.ok {
            result.decisive = true
            result.callKind = .failedWithoutRetry
        }
        return result
    }

    /// `02:59 UTC` today, `2026-11-27 02:59 UTC` before.
    static func when(_ ms: Int64, nowMs: Int64) -> String {
        let clock = Timestamp.clock(ms)
        return Timestamp.rfc3339(ms).prefix(10) == Timestamp.rfc3339(nowMs).prefix(10) ? clock : "\(Timestamp.rfc3339(ms).prefix(10)) \(clock)"
    }
}
