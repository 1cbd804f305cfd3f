import Foundation
import ResilientHTTP
import TestSupport
import Testing

/// An incident fired and resolved through every provider hook, each checked by lookout-sim the
/// way the provider documents its API; 429s answered with Retry-After are waited out.
@Suite("notification providers end to end")
struct NotificationProvidersEndToEndTests {
    let http = CurlTransport()

    @Test func anIncidentReachesSlackTeamsPagerDutyDiscordAndNtfy() async throws {
        let directory = try makeTemporaryDirectory("providers")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (sim, base) = try await startSimulator()
        try "hooks-admin\n".write(to: directory.appendingPathComponent("admin.token"), atomically: true, encoding: .utf8)
        try "R0UTINGKEY0123456789abcdefABCDEF\n".write(to: directory.appendingPathComponent("pd.key"), atomically: true, encoding: .utf8)
        try "\(base)/slack/T000/B000/secret\n".write(to: directory.appendingPathComponent("slack.url"), atomically: true, encoding: .utf8)
        // The first two notifications are throttled: 429 with Retry-After: 2.
        _ = await http.perform(TransferRequest(url: "\(base)/providers/throttle?count=2&retry_after=2", method: "POST", timeout: .patient))
        let config = directory.appendingPathComponent("lookout.yml")
        try """
        listen: 127.0.0.1:0
        database: \(directory.path)/lookout.sqlite
        external_url: https://status.example.test
        admin_token_file: admin.token
        defaults: {interval: 200ms, timeout: 2s, retry: {server_error: {max_attempts: 1}}, circuit_breaker: {failure_threshold: 1000}}
        sources:
          - {name: payments, url: "\(base)/flaky/providers-\(UUID().uuidString.prefix(8))?fail=15&code=503"}
        alerts:
          evaluation_interval: 200ms
          rules:
            - {name: SourceDown, severity: critical, expr: up == 0, annotations: {summary: "{source} is down"}}
          hooks:
            - {name: slack, type: slack, url_file: slack.url, group_wait: 0s}
            - {name: teams, type: teams, url: "\(base)/teams/workflow", group_wait: 0s}
            - {name: pagerduty, type: pagerduty, url: "\(base)/pagerduty/v2/enqueue", routing_key_file: pd.key, group_wait: 0s}
            - {name: discord, type: discord, url: "\(base)/discord/123/token", group_wait: 0s}
            - {name: ntfy, type: ntfy, url: "\(base)/ntfy/oncall", group_wait: 0s}
        """.write(to: config, atomically: true, encoding: .utf8)
        let (lookout, lookoutBase) = try await startLookout(config: config)
        let paths = ["/slack/T000/B000/secret", "/teams/workflow", "/pagerduty/v2/enqueue", "/discord/123/token", "/ntfy"]
        let entries = try await eventually(deadline: .seconds(90), "a firing and a resolved notification through every provider") { () -> [[String: Any]]? in
            let entries = try await simulatorWebhookLog(base).filter { $0["throttled"] as? Bool != true }
            return paths.allSatisfy { path in entries.filter { $0["path"] as? String == path }.count >= 2 } ? entries : nil
        }
        for entry in entries {
            #expect(entry["problem"] is NSNull, "\(entry["path"] ?? "") refused: \(entry["problem"] ?? "") — \(entry["raw"] ?? "")")
        }
        func payloads(_ path: String) -> [[String: Any]] {
            entries.filter { $0["path"] as? String == path }.compactMap { $0["payload"] as? [String: Any] }
        }
        // The README's rendered samples are rewritten only when asked, like the screenshots.
        if ProcessInfo.processInfo.environment["LOOKOUT_UPDATE_SCREENSHOTS"] == "1" {
            let samples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("docs/notifications")
            try FileManager.default.createDirectory(at: samples, withIntermediateDirectories: true)
            for (name, path) in zip(["slack", "teams", "pagerduty", "discord", "ntfy"], paths) {
                for (index, received) in entries.filter({ $0["path"] as? String == path }).compactMap({ $0["payload"] as? [String: Any] }).prefix(2)
                    .enumerated()
                {
                    var payload = received
                    if payload["routing_key"] != nil { payload["routing_key"] = "<the routing key, added at delivery>" }
                    let data = try JSONSerialization.data(withJSONObject: payload, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
                    try data.write(to: samples.appendingPathComponent("\(name)-\(index == 0 ? "firing" : "resolved").json"))
                }
            }
        }
        // Slack: red then green, the cause and the status page link.
        let slack = payloads("/slack/T000/B000/secret")
        #expect(slack.count == 2)
        let colors = slack.compactMap { (($0["attachments"] as? [[String: Any]])?.first?["color"]) as? String }
        #expect(colors == ["#cf222e", "#1a7f37"])
        #expect((slack.first?["text"] as? String)?.contains("payments down since") == true)
        #expect((slack.first?["text"] as? String)?.contains("503") == true)
        #expect(String(describing: slack.first ?? [:]).contains("https://status.example.test/#source-payments"))
        // PagerDuty: trigger then resolve with one dedup_key; the routing key is in the request.
        let pagerDuty = payloads("/pagerduty/v2/enqueue")
        #expect(pagerDuty.map { $0["event_action"] as? String ?? "" } == ["trigger", "resolve"])
        #expect(Set(pagerDuty.compactMap { $0["dedup_key"] as? String }).count == 1)
        #expect(pagerDuty.allSatisfy { $0["routing_key"] as? String == "R0UTINGKEY0123456789abcdefABCDEF" })
        #expect(((pagerDuty.first?["payload"] as? [String: Any])?["severity"]) as? String == "critical")
        // Teams: an Adaptive Card, "Attention" then "Good".
        let teams = payloads("/teams/workflow").compactMap {
            (($0["attachments"] as? [[String: Any]])?.first?["content"] as? [String: Any])?["body"] as? [[String: Any]]
        }
        #expect(teams.map { $0.first?["color"] as? String ?? "" } == ["Attention", "Good"])
        // Discord and ntfy.
        #expect(payloads("/discord/123/token").compactMap { ($0["embeds"] as? [[String: Any]])?.first?["color"] as? Int } == [0xCF222E, 0x1A7F37])
        let ntfy = payloads("/ntfy")
        #expect(ntfy.map { $0["topic"] as? String ?? "" } == ["oncall", "oncall"])
        #expect(ntfy.first?["priority"] as? Int == 5)

        // The routing key and the Slack URL's secret are never stored.
        let stored = try String(contentsOf: directory.appendingPathComponent("lookout.sqlite"), encoding: .isoLatin1)
        #expect(!stored.contains("R0UTINGKEY0123456789abcdefABCDEF"))

        // Throttled requests were retried no sooner than Retry-After asked.
        let all = try await simulatorWebhookLog(base)
        for (index, entry) in all.enumerated() where entry["throttled"] as? Bool == true {
            let path = entry["path"] as? String
            let next = all[(index + 1)...].first { $0["path"] as? String == path }
            let waited = ((next?["received_at_ms"] as? Int) ?? 0) - ((entry["received_at_ms"] as? Int) ?? 0)
            #expect(waited >= 2000, "\(path ?? "") was retried after \(waited) ms")
        }
        #expect(all.filter { $0["throttled"] as? Bool == true }.count == 2)

        // A test notification, from the command line and from the admin API.
        let binary = ChildProcess.binDirectory.appendingPathComponent("lookout").path
        let tested = try await runTool(binary, ["hooks", "test", "slack", "--config", config.path])
        #expect(tested.status == 0, "\(tested.output)")
        #expect(tested.output.contains("hook slack (slack): HTTP 200\nok"))
        #expect(try await runTool(binary, ["hooks", "test", "nope", "--config", config.path]).status == 2)
        _ = await http.perform(TransferRequest(url: "\(base)/providers/throttle?count=1&retry_after=1", method: "POST", timeout: .patient))
        let refused = try await runTool(binary, ["hooks", "test", "discord", "--config", config.path])
        #expect(refused.status == 1)
        #expect(refused.output.contains("HTTP 429"))
        let viaAPI = await http.perform(
            TransferRequest(
                url: "\(lookoutBase)/api/v1/hooks/pagerduty/test", method: "POST", headers: [("Authorization", "Bearer hooks-admin")], timeout: .patient))
        let answer = try JSONSerialization.jsonObject(with: Data(viaAPI.body)) as? [String: Any]
        #expect(answer?["delivered"] as? Bool == true)
        #expect(answer?["http_status"] as? Int == 202)
        let testEvent = try await simulatorWebhookLog(base).last { $0["path"] as? String == "/pagerduty/v2/enqueue" }?["payload"] as? [String: Any]
        #expect(((testEvent?["payload"] as? [String: Any])?["summary"] as? String)?.hasPrefix("Test: a notification from Lookout") == true)
        #expect(try await lookout.terminate() == 0)
        #expect(try await sim.terminate() == 0)
    }

    /// The receiver is down for a minute (the outbox's backoff, then the hook's breaker, open
    /// after five failed tries), then answers 429 twice, then takes everything: nothing is lost,
    /// the order holds, and Retry-After is waited out (from the receiver's log).
    @Test func aReceiverDownThenThrottlingGetsEverythingInOrder() async throws {
        let directory = try makeTemporaryDirectory("receiver-down")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (sim, base) = try await startSimulator()
        let receiverPort = closedPort()
        let config = directory.appendingPathComponent("lookout.yml")
        try """
        listen: 127.0.0.1:0
        database: \(directory.path)/lookout.sqlite
        defaults: {interval: 200ms, timeout: 2s, retry: {server_error: {max_attempts: 1}}, circuit_breaker: {failure_threshold: 1000}}
        sources:
          - {name: payments, url: "\(base)/flaky/down-\(UUID().uuidString.prefix(8))?fail=10&code=503"}
        alerts:
          evaluation_interval: 200ms
          rules:
            - {name: SourceDown, severity: critical, expr: up == 0}
          hooks:
            - {name: slack, type: slack, url: "http://127.0.0.1:\(receiverPort)/slack/T/B/secret", group_wait: 0s}
        """.write(to: config, atomically: true, encoding: .utf8)
        let (lookout, lookoutBase) = try await startLookout(config: config)
        let clock = ContinuousClock()
        let started = clock.now
        func failures() async -> Double {
            let text = await http.perform(TransferRequest(url: "\(lookoutBase)/metrics", timeout: .patient)).bodyText
            let line = text.split(separator: "\n").first { $0.hasPrefix(#"lookout_alert_notifications_total{hook="slack",result="failed"} "#) }
            return line.flatMap { Double($0.split(separator: " ").last ?? "") } ?? 0
        }
        // Failed tries at 0, 1, 3, 7 and 15 s (the breaker opens), then one per open period (30 s,
        // then 60 s, ±30%): by the time the receiver has been down a minute, at least six.
        _ = try await eventually(deadline: .seconds(150), "a minute of failed tries") { () -> Bool? in
            guard clock.now - started >= .seconds(60) else { return nil }
            return await failures() >= 6 ? true : nil
        }
        let pending = await http.perform(TransferRequest(url: "\(lookoutBase)/metrics", timeout: .patient)).bodyText
        #expect(pending.contains(#"lookout_alert_outbox_pending{hook="slack"} 2"#))  // firing and resolved, waiting

        let receiver = try ChildProcess("lookout-sim", ["--listen", "127.0.0.1:\(receiverPort)"])
        let receiverBase = try await receiver.waitFor(#"listening on (http://127\.0\.0\.1:\d+)/"#)
        _ = await http.perform(TransferRequest(url: "\(receiverBase)/providers/throttle?count=2&retry_after=3", method: "POST", timeout: .patient))
        // The breaker's next trial comes within 78 s (a minute ±30%); the 429s do not reopen it.
        let entries = try await eventually(deadline: .seconds(150), "both notifications accepted") { () -> [[String: Any]]? in
            let entries = try await simulatorWebhookLog(receiverBase)
            return entries.filter { $0["throttled"] as? Bool == false }.count >= 2 ? entries : nil
        }
        let accepted = entries.filter { $0["throttled"] as? Bool == false }
        #expect(accepted.count == 2)
        let colors = accepted.compactMap { (($0["payload"] as? [String: Any])?["attachments"] as? [[String: Any]])?.first?["color"] as? String }
        #expect(colors == ["#cf222e", "#1a7f37"])  // firing, then resolved
        #expect(entries.filter { $0["throttled"] as? Bool == true }.count == 2)
        for (index, entry) in entries.enumerated() where entry["throttled"] as? Bool == true && index + 1 < entries.count {
            let waited = ((entries[index + 1]["received_at_ms"] as? Int) ?? 0) - ((entry["received_at_ms"] as? Int) ?? 0)
            #expect(waited >= 3000, "retried \(waited) ms after a 429 asking for 3 s")
        }
        #expect(try await lookout.terminate() == 0)
        #expect(try await receiver.terminate() == 0)
        #expect(try await sim.terminate() == 0)
    }
}
