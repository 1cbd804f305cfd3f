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
        /// Every configured source's URL.
        var urls: [String: String] = [:]
        /// The host (and port) of each URL asked about, parsed when one of its sources first
        /// fails: parsing every source's URL at each start and reload cost 4,100 instructions
        /// a source, for hosts only an outage needs.
        var hostOfURL: [String: String] = [:]
        /// The sources whose last attempt was network_unreachable.
        var unreachable: Set<String> = []
        /// How many of them each host has: the hosts counted in O(1) an event (this is asked
        /// on every attempt, thousands a second, exactly when the network is down).
        var unreachableByHost: [String: Int] = [:]
        var canariesDown = false
        var offline = false
        var offlineSinceMs: Int64?

        mutating func host(of source: String) -> String? {
            guard let url = urls[source] else { return nil }
            if let host = hostOfURL[url] { return host }
            let host = SourceConfig.hostAndPort(of: url)
            hostOfURL[url] = host
            return host
        }

        mutating func markUnreachable(_ source: String) {
            guard let host = host(of: source), unreachable.insert(source).inserted else { return }
            unreachableByHost[host, default: 0] += 1
        }

        mutating func markReachable(_ source: String) {
            guard unreachable.remove(source) != nil, let host = host(of: source) else { return }
            let left = (unreachableByHost[host] ?? 1) - 1
            unreachableByHost[host] = left > 0 ? left : nil
        }
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
        let urls = Dictionary(sources.map { ($0.name, $0.url) }) { first, _ in first }
        update { state in
            let unreachable = state.unreachable
            (state.urls, state.hostOfURL, state.unreachable, state.unreachableByHost) = (urls, [:], [], [:])
            for source in unreachable { state.markUnreachable(source) }
        }
    }

    /// An attempt that found no network marks its source at once, before its retries end.
    package func handle(_ event: ClientEvent) {
        guard case .attemptFinished(let source, let attempt) = event, attempt.failure?.category == .networkUnreachable else { return }
        update { $0.markUnreachable(source) }
    }

    /// Takes a finished probe into account; returns whether Lookout is offline now.
    @discardableResult
    package func record(_ result: ProbeResult) -> Bool {
        update { state in
            if result.failure?.category == .networkUnreachable {
                state.markUnreachable(result.source)
            } else if !result.duringOffline || result.ok {
                state.markReachable(result.source)
            }
        }
    }

    /// The canaries' verdict: true when every canary failed to connect.
    package func recordCanaries(allDown: Bool) {
        update { $0.canariesDown = allDown }
    }

    /// Changes the state by `body` and decides again; returns whether Lookout is offline now.
    @discardableResult
    private func update(_ body: (inout State) -> Void) -> Bool {
        let (offline, changed) = state.withLock { state -> (Bool, Bool) in
            body(&state)
            let sourceCount = state.urls.count
            let widespread =
                sourceCount > 0
                && Double(state.unreachable.count) >= ConnectivityMonitor.share * Double(sourceCount)
                && state.unreachableByHost.count >= ConnectivityMonitor.minimumHosts
            let offline = state.canariesDown || widespread
            guard offline != state.offline else { return (offline, false) }
            state.offline = offline
            state.offlineSinceMs = offline ? Timestamp.nowMs() : nil
            return (offline, true)
        }
        if changed { onChange(offline) }
        return offline
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
