import Foundation
import LookoutCore
import ResilientHTTP
import TestSupport
import Testing

/// The default rules, 5-s intervals and two real webhook receivers (lookout-sim's /webhook, as
/// two hooks): what an on-call engineer is told, and when. One Lookout watches every case at once
/// so the observation windows overlap.
@Suite("tell fast, tell once, tell true", .serialized)
struct TellFastEndToEndTests {
    let http = CurlTransport()

    func post(_ url: String) async {
        _ = await http.perform(TransferRequest(url: url, method: "POST", timeout: .seconds(5)))
    }

    func source(_ base: String, _ name: String) async throws -> [String: Any] {
        let result = await http.perform(TransferRequest(url: "\(base)/api/v1/sources/\(name)", timeout: .seconds(5)))
        let document = try #require(try JSONSerialization.jsonObject(with: Data(result.body)) as? [String: Any])
        return try #require(document["source"] as? [String: Any])
    }

    /// Notifications by hook and source: `[(hook, source, status)]`, in arrival order.
    func told(_ simBase: String) async throws -> [(hook: String, source: String, status: String)] {
        try await simulatorWebhookLog(simBase).compactMap { entry in
            guard let payload = entry["payload"] as? [String: Any], let hook = payload["receiver"] as? String,
                let status = payload["status"] as? String, let labels = payload["groupLabels"] as? [String: String]
            else { return nil }
            return (hook, labels["source"] ?? "", status)
        }
    }

    @Test func aBrokenSourceIsToldWithinAMinuteOnceAndItsRecoveryWithinAnInterval() async throws {
        let directory = try makeTemporaryDirectory("tell-fast")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (sim, simBase) = try await startSimulator()
        let run = UUID().uuidString.prefix(8)
        // Down from the start: `dead` for good, `blip` and `tripped` (whose breaker opens at
        // the second failure) for about a minute.
        for name in ["dead", "blip", "tripped"] { await post("\(simBase)/switch/\(name)-\(run)/on") }
        let config = try writeLookoutConfig(
            in: directory,
            """
            defaults: {interval: 5s, timeout: 2s}
            sources:
              - {name: healthy, url: "\(simBase)/ok"}
              - {name: dead, url: "\(simBase)/switch/dead-\(run)?code=503&detail=card%20processor%20unavailable"}
              - {name: blip, url: "\(simBase)/switch/blip-\(run)?code=502"}
              - {name: tripped, url: "\(simBase)/switch/tripped-\(run)?code=503", circuit_breaker: {failure_threshold: 2, open_timeout: 5m, open_timeout_max: 10m}}
              - {name: limited, url: "\(simBase)/status/429?retry_after=30"}
            alerts:
              hooks:
                - {name: chat, type: webhook, url: "\(simBase)/webhook", send_resolved: true}
                - {name: pager, type: webhook, url: "\(simBase)/webhook", send_resolved: true}
            """)
        let started = ContinuousClock.now
        let (lookout, base) = try await startLookout(config: config)

        // A hard-down source reaches both hooks within 60 s of the start (two failed probes,
        // an evaluation, group_wait 30 s).
        _ = try await eventually(deadline: .seconds(60), "dead told to both hooks") { () -> Bool? in
            let firing = try await told(simBase).filter { $0.source == "dead" && $0.status == "firing" }
            return Set(firing.map(\.hook)) == ["chat", "pager"] ? true : nil
        }

        // About a minute in, `blip` and `tripped` are fixed.
        try await Task.sleep(until: started + .seconds(60))
        let tripped = try await source(base, "tripped")
        let breakerState = (tripped["breaker"] as? [String: Any])?["state"] as? String
        #expect(breakerState == "open" || breakerState == "half_open", "the breaker never opened: \(tripped)")
        let fixedAt = Timestamp.nowMs()
        for name in ["blip", "tripped"] { await post("\(simBase)/switch/\(name)-\(run)/off") }

        // The open breaker does not stretch the outage: the next scheduled probe is its trial,
        // so the first success comes within one interval plus the timeout of the fix (its
        // open period is 5 minutes).
        let seen = Locked("")
        let upAt: Int64
        do {
            upAt = try await eventually(deadline: .seconds(30), "tripped up again") { () -> Int64? in
                let detail = try await source(base, "tripped")
                seen.mutate { $0 = "\(detail)" }
                guard detail["state"] as? String == "up", let text = detail["last_success_at"] as? String else { return nil }
                return Timestamp.parseRFC3339(text)
            }
        } catch {
            Issue.record("tripped never came up; the API said \(seen.value)")
            throw error
        }
        #expect(upAt - fixedAt <= 5_000 + 2_000 + 1_000, "first success \(upAt - fixedAt) ms after the fix")

        // Three quiet minutes after the recovery: exactly one firing and one resolved per hook
        // for each fixed source, nothing after it; `dead` was told once and still fires.
        try await Task.sleep(until: ContinuousClock.now + .seconds(180))
        let log = try await told(simBase)
        for name in ["blip", "tripped"] {
            for hook in ["chat", "pager"] {
                let statuses = log.filter { $0.source == name && $0.hook == hook }.map(\.status)
                #expect(statuses == ["firing", "resolved"], "\(hook) was told of \(name): \(statuses)")
            }
        }
        for hook in ["chat", "pager"] {
            #expect(log.filter { $0.source == "dead" && $0.hook == hook }.map(\.status) == ["firing"])
            #expect(log.filter { $0.source == "healthy" && $0.hook == hook }.isEmpty)
        }

        // Told to wait 30 s, `limited` was probed at most once per 30 s, not every 5 s, and the
        // API says why.
        let elapsed = (ContinuousClock.now - started).seconds
        let requests = try #require(try await FailureReasonsEndToEndTests.counters(simBase)["/status/429"])
        #expect(requests >= 2 && Double(requests) <= elapsed / 30 + 1, "\(requests) requests in \(elapsed) s")
        // (Between the end of a wait and the next tick on the interval's grid there is none.)
        let message = try await eventually(deadline: .seconds(15), "the wait in the API") { () -> String? in
            try await (source(base, "limited")["wait"] as? [String: Any])?["message"] as? String
        }
        #expect(message.hasPrefix("rate-limited until ") && message.hasSuffix("as the upstream asked; no probe before then"))
        _ = lookout
        _ = sim
    }
}
