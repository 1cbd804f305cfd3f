import LookoutWeb
import ResilientHTTP
import Testing

/// Shards run twice, never, or with counts that disagree are said plainly; replicas and
/// locations that are set up right say nothing.
@Suite("shard coverage")
struct ShardCoverageTests {
    func member(_ label: String, _ location: String?, _ index: Int, _ count: Int, _ replica: String? = nil) -> ShardCoverage.Member {
        ShardCoverage.Member(label: label, location: location, index: index, count: count, replica: replica)
    }

    @Test func threeShardsTwoReplicasTwoLocationsAreFine() {
        var members: [ShardCoverage.Member] = []
        for location in ["eu", "us"] {
            for index in 0..<3 {
                for replica in ["0", "1"] { members.append(member("\(location)-\(index)-\(replica)", location, index, 3, replica)) }
            }
        }
        #expect(ShardCoverage.problems(members, complete: true).isEmpty)
        // One instance alone, unsharded.
        #expect(ShardCoverage.problems([member("this instance", nil, 0, 1)], complete: true).isEmpty)
    }

    @Test func missingOverlappingAndDisagreeingShardsAreNamed() {
        // Shard 2 of 3 nowhere; shard 1 twice without replica names.
        let gaps = ShardCoverage.problems([member("a", "eu", 0, 3), member("b", "eu", 0, 3), member("c", "eu", 2, 3)], complete: true)
        #expect(
            gaps == [
                "Shard 1 of 3 in eu runs 2 times without a --replica name (a, b): give each copy its own --replica name, or its own --shard.",
                "No instance in eu runs shard 2 of 3: its sources are not probed. Add it to peers, or start it.",
            ])
        // While a peer is unreachable, a missing shard may be that peer's: not said.
        #expect(ShardCoverage.problems([member("a", nil, 0, 3)], complete: false).isEmpty)
        #expect(
            ShardCoverage.problems([member("a", nil, 0, 3)], complete: true) == [
                "No instance runs shards 2, 3 of 3: their sources are not probed. Add it to peers, or start it."
            ])
        let counts = ShardCoverage.problems([member("this instance", "eu", 0, 2), member("b", "eu", 1, 3)], complete: true)
        #expect(
            counts == [
                "The instances in eu disagree on the number of shards (this instance runs 2, b runs 3): some sources are probed twice, others never. Give every instance the same count."
            ])
        let twice = ShardCoverage.problems([member("a", nil, 0, 1, "x"), member("b", nil, 0, 1, "x")], complete: true)
        #expect(twice.count == 1 && twice[0].hasPrefix("Shard 1 of 1 runs 2 times as replica x (a, b)"))
    }

    /// The numbers come from peers: only an index below a count up to 100,000 is taken.
    @Test func aPeersShardIsReadDefensively() throws {
        for body in [
            #""shard":{"index":3,"count":3}"#, #""shard":{"index":-1,"count":3}"#, #""shard":{"index":0,"count":0}"#,
            #""shard":{"index":0,"count":1e20}"#, #""shard":"1/3""#,
        ] {
            let parsed = Peers.parse(TransferResult(httpStatus: 200, body: Array(#"{"status":"ok","sources":[],\#(body)}"#.utf8)), url: "http://p")
            let peer = try parsed.get()
            #expect(peer.shardIndex == nil && peer.shardCount == nil, "\(body)")
        }
        let one = try Peers.parse(
            TransferResult(httpStatus: 200, body: Array(#"{"status":"ok","sources":[],"shard":{"index":0,"count":1}}"#.utf8)), url: "http://p"
        ).get()
        #expect(one.shardIndex == 0 && one.shardCount == 1 && one.shard == nil)
    }
}
