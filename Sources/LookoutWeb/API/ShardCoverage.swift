import LookoutCore

/// What the instances of one view (this one and its `peers`) say about their shards, per
/// location: one shard count, every shard run, none run twice as the same replica. A mistake
/// here means sources probed twice or never, and nothing else would say so.
package enum ShardCoverage {
    package struct Member: Sendable, Equatable {
        /// How to name it ("this instance", or a peer's label).
        package var label: String
        package var location: String?
        package var index: Int
        package var count: Int
        package var replica: String?

        package init(label: String, location: String?, index: Int, count: Int, replica: String?) {
            self.label = label
            self.location = location
            self.index = index
            self.count = count
            self.replica = replica
        }
    }

    /// The problems, in words for the page and the status JSON. Missing shards are named only
    /// when `complete` (every peer answered): an unreachable peer has its own banner.
    package static func problems(_ members: [Member], complete: Bool) -> [String] {
        var problems: [String] = []
        let locations = Dictionary(grouping: members, by: { $0.location ?? "" })
        for location in locations.keys.sorted() {
            let group = locations[location]!
            let place = location.isEmpty ? "" : " in \(location)"
            let counts = Set(group.map(\.count))
            guard counts.count == 1, let count = counts.first else {
                let said = group.map { "\($0.label) runs \($0.count)" }.joined(separator: ", ")
                problems.append(
                    "The instances\(place) disagree on the number of shards (\(said)): some sources are probed twice, others never. Give every instance the same count."
                )
                continue
            }
            let byShard = Dictionary(grouping: group, by: \.index)
            for index in byShard.keys.sorted() {
                let copies = Dictionary(grouping: byShard[index]!, by: { $0.replica ?? "" })
                for replica in copies.keys.sorted() where copies[replica]!.count > 1 {
                    let names = copies[replica]!.map(\.label).joined(separator: ", ")
                    let who = replica.isEmpty ? "without a --replica name" : "as replica \(replica)"
                    problems.append(
                        "Shard \(index + 1) of \(count)\(place) runs \(copies[replica]!.count) times \(who) (\(names)): give each copy its own --replica name, or its own --shard."
                    )
                }
            }
            guard complete else { continue }
            let missing = (0..<count).filter { byShard[$0] == nil }
            if !missing.isEmpty {
                let list = missing.prefix(10).map { "\($0 + 1)" }.joined(separator: ", ") + (missing.count > 10 ? " and \(missing.count - 10) more" : "")
                problems.append(
                    "No instance\(place) runs shard\(missing.count == 1 ? "" : "s") \(list) of \(count): \(missing.count == 1 ? "its" : "their") sources are not probed. Add it to peers, or start it."
                )
            }
        }
        return problems
    }

    /// The problems of this instance and its peers as last fetched.
    package static func problems(_ context: LookoutContext, snapshot: RegistrySnapshot) -> [String] {
        let peers = context.peers.peers
        guard !peers.isEmpty else { return [] }
        var members = [
            Member(
                label: "this instance", location: snapshot.config.location, index: snapshot.shard.index, count: snapshot.shard.count,
                replica: context.replica)
        ]
        for peer in peers where !peer.isSelf && peer.problem == nil && peer.lastSuccessMs != nil {
            guard let index = peer.shardIndex, let count = peer.shardCount else { continue }
            members.append(Member(label: peer.label, location: peer.location, index: index, count: count, replica: peer.replica))
        }
        let complete = peers.allSatisfy { $0.isSelf || ($0.problem == nil && $0.lastSuccessMs != nil) }
        return problems(members, complete: complete)
    }
}
