import Foundation
import ResilientHTTP
import Synchronization

/// Decides whether Lookout itself is offline (SPEC section 6): when its canaries fail, or when at
/// least 80% of sources, over at least 3 distinct hosts, last failed with `network_unreachable`.
/// One dead upstream host is an outage of its sources, not of Lookout's network.
///
/// It hears of every attempt (as a `ClientEventSink`), not only of finished probes: a probe that
/// retries reports seconds after its first attempt failed, and meanwhile the sources that do not
/// retry would fail a second time, their outages told one by one.
package final class ConnectivityMonitor: ClientEventSink {
    private struct State {
        var unreachable: [String: String] = [:]  // source → host, for sources whose last probe was network_unreachable
        var hosts: [String: String] = [:]  // source → host, for every source configured
        var sourceCount = 0
        var canariesDown = false
        var offline = false
        var offlineSinceMs: Int64?
    }

    package static let share = 0.8
    package static let minimumHosts = 3

    private let state = Mutex(State())
    private let onChange: @Sendable (Bool) -> Void

    /// - Parameter onChange: called once when Lookout goes offline (true) and once when it is back.
    package init(onChange: @escaping @Sendable (Bool) -> Void = { _ in }) {
        self.onChange = onChange
    }

    package var isOffline: Bool { state.withLock { $0.offline } }
    package var offlineSinceMs: Int64? { state.withLock { $0.offlineSinceMs } }

    /// The sources now configured (sources that left are forgotten).
    package func setSources(_ sources: [SourceConfig]) {
        let hosts = Dictionary(sources.map { ($0.name, $0.host) }) { first, _ in first }
        update { state in
            state.sourceCount = sources.count
            state.hosts = hosts
            state.unreachable = state.unreachable.filter { hosts[$0.key] != nil }
        }
    }

    /// An attempt that found no network marks its source at once, before its retries end.
    package func handle(_ event: ClientEvent) {
        guard case .attemptFinished(let source, let attempt) = event, attempt.failure?.category == .networkUnreachable else { return }
        update { state in
            if let host = state.hosts[source] { state.unreachable[source] = host }
        }
    }

    package func record(_ result: ProbeResult, host: String) {
        update { state in
            if result.failure?.category == .networkUnreachable {
                state.unreachable[result.source] = host
            } else if !result.duringOffline || result.ok {
                state.unreachable.removeValue(forKey: result.source)
            }
        }
    }

    /// The canaries' verdict: true when every canary failed to connect.
    package func recordCanaries(allDown: Bool) {
        update { $0.canariesDown = allDown }
    }

    private func update(_ body: (inout State) -> Void) {
        let changed = state.withLock { state -> Bool? in
            body(&state)
            let hosts = Set(state.unreachable.values).count
            let widespread = state.sourceCount > 0
                && Double(state.unreachable.count) >= ConnectivityMonitor.share * Double(state.sourceCount)
                && hosts >= ConnectivityMonitor.minimumHosts
            let offline = state.canariesDown || widespread
            guard offline != state.offline else { return nil }
            state.offline = offline
            state.offlineSinceMs = offline ? Timestamp.nowMs() : nil
            return offline
        }
        if let changed { onChange(changed) }
    }
}

/// Probes the connectivity canaries: Lookout is offline when none of them can be reached.
package struct CanaryProber: Sendable {
    package let urls: [String]
    package let transport: CurlTransport

    package init(urls: [String], transport: CurlTransport) {
        self.urls = urls
        self.transport = transport
    }

    /// true when every canary failed without an HTTP answer.
    package func allDown() async -> Bool {
        guard !urls.isEmpty else { return false }
        let answered = await withTaskGroup(of: Bool.self) { group in
            for url in urls {
                group.addTask {
                    let result = await transport.perform(TransferRequest(url: url, timeout: .seconds(5), connectTimeout: .seconds(3)))
                    return result.httpStatus != nil
                }
            }
            return await group.reduce(false) { $0 || $1 }
        }
        return !answered
    }
}
