import Foundation
import LookoutCore
import ResilientHTTP
import Synchronization

/// The other Lookout instances of `peers` (other shards, other locations), read every 15 s from
/// their `/api/v1/status?local=1` with a 5-s timeout, for one view over all of them on this
/// instance's page and status JSON. `local=1` asks a peer for its own sources only, so peers that
/// list each other (A lists B, B lists A) never ask around in circles. A peer that does not
/// answer, or answers something that is not Lookout's status, is shown as unreachable since the
/// first failure — never as healthy sources — and its last good sources are not shown.
package final class Peers: Sendable {
    package struct Source: Sendable, Equatable {
        package var name: String
        package var state: String
        package var downSinceMs: Int64?
        package var cause: String?
        package var group: String?
    }

    package struct Peer: Sendable, Equatable {
        package var url: String
        package var location: String?
        /// The peer's shard, 0-based, and how many there are (checked: index below count).
        package var shardIndex: Int?
        package var shardCount: Int?
        /// "2 of 3" for people; nil unsharded.
        package var shard: String? {
            guard let index = shardIndex, let count = shardCount, count > 1 else { return nil }
            return "\(index + 1) of \(count)"
        }
        package var replica: String?
        /// The peer is this instance (one peer list for every instance): not shown.
        package var isSelf = false
        /// The peer's process id, as it answered.
        package var instance: String?
        package var overall: String?
        package var sources: [Source] = []
        package var lastSuccessMs: Int64?
        /// Why the last fetch failed; nil when it worked.
        package var problem: String?
        package var failingSinceMs: Int64?

        /// How people name it: its location and shard where known, else its address.
        package var label: String {
            let parts = [location, shard.map { "shard \($0)" }, replica.map { "replica \($0)" }].compactMap { $0 }
            return parts.isEmpty ? url : parts.joined(separator: " · ")
        }
    }

    static let timeout: Duration = .seconds(5)
    static let period: Duration = .seconds(15)
    static let retryPeriod: Duration = .seconds(3)
    /// A status document bigger than this is not read (10,000 sources are about 8 MB).
    static let maxBytes = 16 << 20
    /// More JSON objects than this are not parsed: a hostile peer's `[{},{},…]` would otherwise
    /// cost gigabytes once parsed (a real document has a few objects per source).
    static let maxObjects = 1_000_000

    private let urls: @Sendable () -> [String]
    private let instanceID: String
    private let state = Mutex<[String: Peer]>([:])
    /// How instances reach each other: the peers' status, and push calls forwarded to them.
    package let transport = CurlTransport.lookout()

    package init(urls: @escaping @Sendable () -> [String], instanceID: String = "") {
        self.urls = urls
        self.instanceID = instanceID
    }

    /// The configured peers, in config order, as last fetched (not fetched yet: no problem, no
    /// sources).
    package var peers: [Peer] {
        let known = state.withLock { $0 }
        return urls().map { known[$0] ?? Peer(url: $0) }
    }

    /// Fetches every peer once (or only `only`), at the same time.
    package func refresh(nowMs: Int64 = Timestamp.nowMs(), only: Set<String>? = nil) async {
        let configured = urls()
        let list = only.map { wanted in configured.filter { wanted.contains($0) } } ?? configured
        await withTaskGroup(of: (String, Result<Peer, PeerProblem>).self) { group in
            for url in list {
                group.addTask { [transport] in
                    let result = await transport.perform(
                        TransferRequest(
                            url: url + "/api/v1/status?local=1", headers: [("Accept", "application/json")], timeout: Peers.timeout,
                            maxResponseBytes: Peers.maxBytes))
                    return (url, Peers.parse(result, url: url))
                }
            }
            for await (url, outcome) in group {
                state.withLock { state in
                    var peer = state[url] ?? Peer(url: url)
                    switch outcome {
                    case .success(let fetched):
                        peer = fetched
                        peer.lastSuccessMs = nowMs
                        peer.isSelf = !instanceID.isEmpty && fetched.instance == instanceID
                    case .failure(let problem):
                        peer.problem = problem.message
                        peer.failingSinceMs = peer.failingSinceMs ?? nowMs
                        peer.sources = []
                    }
                    state[url] = peer
                }
            }
        }
        // Forget peers no longer configured.
        state.withLock { state in state = state.filter { configured.contains($0.key) } }
    }

    /// Refreshes every 15 s until cancelled; every 3 s while a peer fails, so one that was
    /// merely starting (a StatefulSet's pods come up together) is seen as soon as it answers.
    package func run() async {
        var sinceFull = Peers.period
        while !Task.isCancelled {
            if sinceFull >= Peers.period {
                if !urls().isEmpty { await refresh() }
                sinceFull = .zero
            } else {
                // Between full rounds only the failing peers are asked again.
                let failing = Set(state.withLock { $0.values.filter { $0.problem != nil }.map(\.url) })
                if !failing.isEmpty { await refresh(only: failing) }
            }
            do { try await Task.sleep(for: Peers.retryPeriod) } catch { return }
            sinceFull += Peers.retryPeriod
        }
    }

    package struct PeerProblem: Error {
        package var message: String
    }

    /// A peer's answer, read defensively: anything but a 200 with Lookout's status document is a
    /// problem named for people.
    package static func parse(_ result: TransferResult, url: String) -> Result<Peer, PeerProblem> {
        if let failure = FailureClassifier.classify(result) {
            return .failure(PeerProblem(message: "\(failure.title.lowercased()) (\(failure.category.rawValue)/\(failure.reason))"))
        }
        guard result.httpStatus == 200 else { return .failure(PeerProblem(message: "answered HTTP \(result.httpStatus ?? 0)")) }
        guard result.body.reduce(0, { $0 + ($1 == UInt8(ascii: "{") ? 1 : 0) }) <= maxObjects else {
            return .failure(PeerProblem(message: "answered a document with more than \(maxObjects) objects"))
        }
        guard let object = try? JSONSerialization.jsonObject(with: Data(result.body)) as? [String: Any],
            let overall = object["status"] as? String, let sources = object["sources"] as? [[String: Any]]
        else {
            return .failure(PeerProblem(message: "answered something that is not Lookout's status JSON"))
        }
        var peer = Peer(url: url, location: object["location"] as? String, replica: object["replica"] as? String, overall: overall)
        peer.instance = object["instance"] as? String
        // Numbers from a peer are hostile: an index past the count is not shown (and never +1'd).
        if let shard = object["shard"] as? [String: Any], let index = shard["index"] as? Int, let count = shard["count"] as? Int,
            count >= 1, count <= 100_000, (0..<count).contains(index)
        {
            peer.shardIndex = index
            peer.shardCount = count
        }
        peer.sources = sources.prefix(100_000).compactMap { source in
            guard let name = source["name"] as? String, let state = source["state"] as? String else { return nil }
            let cause = ((source["incident"] as? [String: Any])?["cause"] as? [String: Any])?["title"] as? String
            return Source(
                name: name, state: state, downSinceMs: (source["down_since"] as? String).flatMap(Timestamp.parseRFC3339), cause: cause,
                group: source["group"] as? String)
        }
        return .success(peer)
    }
}
