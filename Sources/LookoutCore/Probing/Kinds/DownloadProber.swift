import Foundation
import ResilientHTTP

extension SourceKind {
    package static let download = SourceKind(declaring: "download")
}

/// `kind: download`: downloads a source's file without keeping it: hashed on the fly, resumed with `Range` and
/// `If-Range` after a dropped connection, stopped past `max_bytes`, verified by SHA-256.
package struct DownloadProber: Sendable, Prober {
    package static let kind = SourceKind.download
    package static let summary = "a whole file, resumed with Range and verified by SHA-256"
    package static let ownKeys = ["sha256"]
    package static let isHTTPRequest = false

    package static func probe(_ source: SourceConfig, with prober: SourceProber, breakerCountsFailures: Bool) async -> ProbeResult {
        await prober.downloads.probe(source, deadline: SourceProber.deadline(for: source))
    }

    package let client: ResilientClient
    /// Called as the download moves (throttled), for the status board.
    package let progress: @Sendable (String, DownloadProgress) -> Void
    /// Resumes tried before giving up.
    package static let maxResumes = 5

    package init(client: ResilientClient, progress: @escaping @Sendable (String, DownloadProgress) -> Void = { _, _ in }) {
        self.client = client
        self.progress = progress
    }

    package func probe(_ source: SourceConfig, deadline: Duration) async -> ProbeResult {
        let sink = DownloadSink(maxBytes: source.maxBytes) { progress(source.name, $0) }
        sink.move(to: .inProgress)
        var outcome: CallOutcome
        var attempts = 0
        let clock = ContinuousClock()
        let started = clock.now
        while true {
            var headers = source.headers.map { (name: $0.name, value: $0.value) }
            let (offset, etag) = sink.resumePoint
            if offset > 0 {
                headers.append(("Range", "bytes=\(offset)-"))
                if let etag { headers.append(("If-Range", etag)) }
            }
            let remaining = deadline - (clock.now - started)
            let transfer = TransferRequest(
                url: source.url, method: source.method, headers: headers, timeout: source.timeout, maxResponseBytes: 1 << 20,
                bodySink: sink)
            outcome = await client.call(
                upstream: source.name, CallRequest(transfer, acceptedStatuses: [200, 206], deadline: max(.milliseconds(1), remaining), singleFlight: false))
            attempts += outcome.attempts.count
            if outcome.cancelled {
                sink.move(to: .cancelled)
                break
            }
            guard let failure = outcome.failure else { break }
            if outcome.final?.exceededSizeLimit == true {
                outcome.failure = Failure(
                    category: .invalidResponse, reason: "too_large", httpStatus: failure.httpStatus,
                    detail: "the download passed max_bytes (\(source.maxBytes ?? 0) bytes)")
                break
            }
            let dropped = ["truncated", "recv_error", "connection_reset", "empty_reply", "response_timeout"].contains(failure.reason)
            let resumesLeft = sink.progressSnapshot.resumes < DownloadProber.maxResumes
            guard dropped, sink.advancedSinceLastResume(), resumesLeft, clock.now - started < deadline else { break }
            sink.move(to: .paused)
            sink.noteResume()
            sink.move(to: .inProgress)
        }
        if outcome.ok {
            sink.move(to: .verifying)
            let digest = sink.finish()
            if let expected = source.sha256 {
                if digest != expected {
                    outcome.failure = Failure(
                        category: .invalidResponse, reason: "checksum_mismatch",
                        detail: "the SHA-256 of the download is \(digest.prefix(16))…, not the expected \(expected.prefix(16))…")
                    sink.setVerified(false)
                    sink.move(to: .failed)
                } else {
                    sink.setVerified(true)
                    sink.move(to: .completed)
                }
            } else {
                sink.move(to: .completed)
            }
        } else if !outcome.cancelled {
            sink.move(to: .failed)
        }
        var result = ProbeResult(outcome: outcome, source: source.name)
        result.durationSeconds = (clock.now - started).seconds
        result.attempts = attempts
        let final = sink.progressSnapshot
        result.bytes = Int(final.bytes)
        result.download = final
        progress(source.name, final)
        return result
    }
}

/// Receives a download on the transport's thread: hashes it, counts it, enforces the limit.
final class DownloadSink: BodySink, @unchecked Sendable {
    // Every access to `state` holds `lock`; the hasher inside it is not Sendable, so a Mutex
    // (which wants sendable regions) does not fit.
    private struct State {
        var hasher = SHA256()
        var progress = DownloadProgress()
        var etag: String?
        var offsetAtLastResume: Int64 = -1
        var startedAt = ContinuousClock.now
        var lastReportedBytes: Int64 = 0
    }

    private var state = State()
    private let lock = NSLock()
    private let maxBytes: Int64?
    private let report: @Sendable (DownloadProgress) -> Void

    init(maxBytes: Int64?, report: @escaping @Sendable (DownloadProgress) -> Void) {
        self.maxBytes = maxBytes
        self.report = report
    }

    func begin(status: Int, headers: [(name: String, value: String)]) -> Bool {
        let snapshot = withState { state -> DownloadProgress in
            let header = { (name: String) in headers.first { $0.name.lowercased() == name }?.value }
            let range = header("content-range").flatMap(DownloadSink.parseContentRange)
            if status == 200 || range?.start != state.progress.bytes {
                // The server sent the whole file (a changed file, or no range support): start over.
                state.hasher = SHA256()
                state.progress.bytes = 0
            }
            if let etag = header("etag") { state.etag = etag }
            if let total = range?.total {
                state.progress.total = total
            } else if status == 200, let length = header("content-length").flatMap(Int64.init) {
                state.progress.total = length
            }
            return state.progress
        }
        report(snapshot)
        return true
    }

    func write(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let (accepted, snapshot) = withState { state -> (Bool, DownloadProgress?) in
            if let maxBytes, state.progress.bytes + Int64(bytes.count) > maxBytes { return (false, nil) }
            state.hasher.update(bytes)
            state.progress.bytes += Int64(bytes.count)
            let elapsed = (ContinuousClock.now - state.startedAt).seconds
            if elapsed > 0 { state.progress.throughputBytesPerSecond = Double(state.progress.bytes) / elapsed }
            guard state.progress.bytes - state.lastReportedBytes >= 1 << 20 else { return (true, nil) }
            state.lastReportedBytes = state.progress.bytes
            return (true, state.progress)
        }
        if let snapshot { report(snapshot) }
        return accepted
    }

    var resumePoint: (offset: Int64, etag: String?) {
        withState { ($0.progress.bytes, $0.etag) }
    }

    var progressSnapshot: DownloadProgress { withState { $0.progress } }

    /// Whether bytes arrived since the last resume (so resuming again can make progress).
    func advancedSinceLastResume() -> Bool {
        withState { $0.progress.bytes > $0.offsetAtLastResume }
    }

    func noteResume() {
        withState {
            $0.progress.resumes += 1
            $0.offsetAtLastResume = $0.progress.bytes
        }
    }

    func move(to next: DownloadState) {
        let snapshot = withState { state -> DownloadProgress in
            state.progress.move(to: next)
            return state.progress
        }
        report(snapshot)
    }

    func setVerified(_ verified: Bool) {
        withState { $0.progress.verified = verified }
    }

    /// The hex SHA-256 of everything received.
    func finish() -> String {
        withState { state in
            let digest = state.hasher.finalizeHex()
            state.progress.sha256 = digest
            return digest
        }
    }

    private func withState<T>(_ body: (inout State) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(&state)
    }

    /// `bytes 100-199/1000` → (100, 1000).
    static func parseContentRange(_ value: String) -> (start: Int64, total: Int64?)? {
        guard value.hasPrefix("bytes ") else { return nil }
        let parts = value.dropFirst("bytes ".count).split(separator: "/")
        guard let range = parts.first, let start = range.split(separator: "-").first.flatMap({ Int64($0) }) else { return nil }
        return (start, parts.count > 1 ? Int64(parts[1]) : nil)
    }
}
