import Foundation
import ResilientHTTP
import TestSupport
import Testing

/// One view over several instances: `peers` shows every source of every shard and location on
/// one page and in one status document; a peer that is down, answers garbage or hangs is a
/// banner, never healthy sources; peers that list each other do not ask around in circles.
@Suite("peers end to end")
struct PeersEndToEndTests {
    let http = CurlTransport()

    func status(_ base: String, local: Bool = false) async -> [String: Any] {
        let result = await http.perform(TransferRequest(url: "\(base)/api/v1/status\(local ? "?local=1" : "")", timeout: .patient))
        return (try? JSONSerialization.jsonObject(with: Data(result.body)) as? [String: Any]) ?? [:]
    }

    @Test func onePageOverEveryInstance() async throws {
        let directory = try makeTemporaryDirectory("peers")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (sim, simBase) = try await startSimulator()
        let (portA, portB, dead) = (closedPort(), closedPort(), closedPort())
        let eu = directory.appendingPathComponent("eu.yml")
        let us = directory.appendingPathComponent("us.yml")
        try """
        listen: 127.0.0.1:\(portA)
        database: ":memory:"
        location: eu
        defaults: {interval: 1s, timeout: 2s, retry: {server_error: {max_attempts: 1}}}
        sources:
          - {name: web, url: "\(simBase)/ok"}
          - {name: shared, url: "\(simBase)/ok"}
        peers:
          - http://127.0.0.1:\(portB)
          - http://127.0.0.1:\(dead)
          - \(simBase)/json/valid?
          - \(simBase)/slow?ms=20000&
        """.write(to: eu, atomically: true, encoding: .utf8)
        try """
        listen: 127.0.0.1:\(portB)
        database: ":memory:"
        location: us
        shard: {index: 0, count: 1}
        defaults: {interval: 1s, timeout: 2s, retry: {server_error: {max_attempts: 1}}}
        sources:
          - {name: api, url: "\(simBase)/ok"}
          - {name: shared, url: "\(simBase)/status/503"}
        peers: ["http://127.0.0.1:\(portA)"]
        """.write(to: us, atomically: true, encoding: .utf8)
        let (a, baseA) = try await startLookout(config: eu)
        let (b, baseB) = try await startLookout(config: us)

        // eu shows us's sources, and the three broken peers as unreachable with why.
        let peers = try await eventually(deadline: .seconds(40), "every peer answered or failed") { () -> [[String: Any]]? in
            let peers = await status(baseA)["peers"] as? [[String: Any]] ?? []
            let settled = peers.count == 4 && peers.allSatisfy { $0["reachable"] as? Bool == true || $0["problem"] is String }
            let usSeen =
                (peers.first?["sources"] as? [[String: Any]])?.contains { $0["name"] as? String == "shared" && $0["state"] as? String == "down" } == true
            return settled && usSeen ? peers : nil
        }
        #expect(peers[0]["reachable"] as? Bool == true && peers[0]["location"] as? String == "us")
        #expect(Set((peers[0]["sources"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }) == ["api", "shared"])
        #expect((peers[1]["problem"] as? String)?.contains("refused") == true, "\(peers[1])")
        #expect((peers[2]["problem"] as? String)?.contains("not Lookout's status JSON") == true, "\(peers[2])")
        #expect((peers[3]["problem"] as? String)?.contains("timed out") == true, "\(peers[3])")
        for peer in peers.dropFirst() { #expect(peer["status"] as? String == "unreachable" && (peer["sources"] as? [Any])?.isEmpty == true) }
        // local=1 is what peers ask for: no peers in it, so a loop (us lists eu) ends there.
        #expect(await status(baseA, local: true)["peers"] == nil)
        let usPeers = await status(baseB)["peers"] as? [[String: Any]] ?? []
        #expect(usPeers.count == 1)

        let page = await http.perform(TransferRequest(url: "\(baseA)/", timeout: .patient)).bodyText
        #expect(page.contains("<h2>Other instances (4)</h2>"))
        #expect(page.components(separatedBy: #"data-peer="unreachable""#).count - 1 == 3)
        #expect(page.contains("<strong>shared</strong> <span class=\"state down\">down</span>"))  // us's view of it
        #expect(page.contains(#"Elsewhere: us <span class="state down">down</span>"#))  // beside eu's own row for shared
        let publicPage = await http.perform(TransferRequest(url: "\(baseA)/public", timeout: .patient)).bodyText
        #expect(publicPage.contains("Other instances (4)") && !publicPage.contains("127.0.0.1"))

        // A stopped shard is marked unreachable at the next look, never shown as healthy.
        #expect(try await b.terminate() == 0)
        _ = try await eventually(deadline: .seconds(40), "us marked unreachable") { () -> Bool? in
            let first = (await status(baseA)["peers"] as? [[String: Any]] ?? []).first
            return first?["reachable"] as? Bool == false && first?["unreachable_since"] is String ? true : nil
        }
        let after = await http.perform(TransferRequest(url: "\(baseA)/", timeout: .patient)).bodyText
        #expect(after.components(separatedBy: #"data-peer="unreachable""#).count - 1 == 4)
        #expect(!after.contains("Elsewhere:"))
        #expect(try await a.terminate() == 0)
        #expect(try await sim.terminate() == 0)
    }
}
