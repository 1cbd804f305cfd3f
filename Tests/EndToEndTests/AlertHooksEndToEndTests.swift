import Foundation
import ResilientHTTP
import TestSupport
import Testing

/// Notifications end to end: lookout-sim's /webhook as a receiver, and a real Alertmanager.
@Suite("alert hooks end to end", .serialized)
struct AlertHooksEndToEndTests {
    let http = CurlTransport()

    func json(_ url: String) async throws -> Any {
        let result = await http.perform(TransferRequest(url: url, timeout: .seconds(10)))
        return try JSONSerialization.jsonObject(with: Data(result.body))
    }

    /// A config whose one rule fires while `flappy` is down; `hooks` is YAML for alerts.hooks.
    func writeConfig(_ directory: URL, upstream: String, hooks: String, failures: Int) throws -> URL {
        try "hook-secret\n".write(to: directory.appendingPathComponent("hook.key"), atomically: true, encoding: .utf8)
        let config = directory.appendingPathComponent("lookout.yml")
        try """
        listen: 127.0.0.1:0
        database: \(directory.path)/lookout.sqlite
        external_url: http://lookout.test:9464
        defaults:
          interval: 200ms
          timeout: 2s
          retry: {server_error: {max_attempts: 1}}
          circuit_breaker: {failure_threshold: 1000}
        sources:
          - {name: flappy, url: "\(upstream)/flaky/alert-\(UUID().uuidString.prefix(8))?fail=\(failures)&code=503"}
        alerts:
          evaluation_interval: 200ms
          rules:
            - name: SourceDown
              severity: critical
              expr: up == 0
              labels: {team: ops}
              annotations: {summary: "{source} is down"}
          hooks:
        \(hooks)
        """.write(to: config, atomically: true, encoding: .utf8)
        return config
    }

    @Test func webhookGetsFiringThenResolvedInAlertmanagersFormat() async throws {
        let directory = try makeTemporaryDirectory("hooks")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (sim, base) = try await startSimulator()
        let config = try writeConfig(
            directory, upstream: base,
            hooks: """
                    - {name: chat, type: webhook, url: "\(base)/webhook", severities: [critical], send_resolved: true, hmac_secret_file: hook.key, group_wait: 0s}
                    - {name: quiet, type: webhook, url: "\(base)/webhook", severities: [info]}
                """, failures: 8)
        let lookout = try ChildProcess("lookout", ["serve", "--config", config.path])
        let log = try await eventually("firing and resolved notifications") { () -> [[String: Any]]? in
            let log = try await simulatorWebhookLog(base)
            return log.count >= 2 ? log : nil
        }
        #expect(log.count == 2, "the info-only hook must not be notified")
        let firing = try #require(log[0]["payload"] as? [String: Any])
        let resolved = try #require(log[1]["payload"] as? [String: Any])
        for (payload, status) in [(firing, "firing"), (resolved, "resolved")] {
            #expect(payload["version"] as? String == "4")
            #expect(payload["status"] as? String == status)
            #expect(payload["receiver"] as? String == "chat")
            #expect(payload["externalURL"] as? String == "http://lookout.test:9464")
            // Grouped by source (the default group_by): one broken source, one notification.
            #expect(payload["groupKey"] as? String == #"{}:{source="flappy"}"#)
            #expect((payload["groupLabels"] as? [String: String]) == ["source": "flappy"])
            let common = try #require(payload["commonLabels"] as? [String: String])
            #expect(common == ["alertname": "SourceDown", "severity": "critical", "source": "flappy", "team": "ops"])
            #expect((payload["commonAnnotations"] as? [String: String])?["summary"] == "flappy is down")
            let alert = try #require((payload["alerts"] as? [[String: Any]])?.first)
            #expect(alert["status"] as? String == status)
            #expect((alert["labels"] as? [String: String]) == common)
            let annotations = try #require(alert["annotations"] as? [String: String])
            #expect(annotations["summary"] == "flappy is down")
            #expect(annotations["description"]?.hasPrefix("Error while probing flappy") == true)
            #expect(annotations["recovery"]?.isEmpty == false)
            #expect(annotations["status_page"] == "http://lookout.test:9464/#source-flappy")
            #expect(alert["generatorURL"] as? String == "http://lookout.test:9464/api/v1/sources/flappy")
            #expect((alert["fingerprint"] as? String)?.count == 16)
            #expect((alert["startsAt"] as? String)?.hasSuffix("Z") == true)
        }
        let firingAlert = try #require((firing["alerts"] as? [[String: Any]])?.first)
        let resolvedAlert = try #require((resolved["alerts"] as? [[String: Any]])?.first)
        #expect(firingAlert["endsAt"] as? String == "0001-01-01T00:00:00Z")
        #expect(resolvedAlert["endsAt"] as? String != "0001-01-01T00:00:00Z")
        #expect(firingAlert["fingerprint"] as? String == resolvedAlert["fingerprint"] as? String)
        let deliveries = log.compactMap { ($0["delivery"] as? String).flatMap { Int($0) } }
        #expect(deliveries.count == 2 && deliveries[0] < deliveries[1])
        for entry in log {
            let raw = try #require(entry["raw"] as? String)
            let expected = "sha256=" + SHA256.hmacHex(key: Array("hook-secret".utf8), message: Array(raw.utf8))
            #expect(entry["signature"] as? String == expected)
        }
        #expect(try await lookout.terminate() == 0)
        #expect(try await sim.terminate() == 0)
    }

    @Test func everyNotificationArrivesInOrderThroughReceiverOutagesAndAHardKill() async throws {
        let directory = try makeTemporaryDirectory("hooks")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (upstream, upstreamBase) = try await startSimulator()
        let receiverPort = closedPort()
        let receiverBase = "http://127.0.0.1:\(receiverPort)"
        let config = try writeConfig(
            directory, upstream: upstreamBase,
            hooks: """
                    - {name: chat, type: webhook, url: "\(receiverBase)/webhook", group_wait: 0s}
                """, failures: 8)

        // The receiver is down while the alert fires and resolves: both wait in the outbox.
        var lookout = try ChildProcess("lookout", ["serve", "--config", config.path])
        let port = try await lookout.waitFor(#"msg=listening address=127\.0\.0\.1:(\d+)"#)
        _ = try await eventually("two notifications waiting") { () -> Bool? in
            let metrics = await http.perform(TransferRequest(url: "http://127.0.0.1:\(port)/metrics", timeout: .patient)).bodyText
            return metrics.contains(#"lookout_alert_outbox_pending{hook="chat"} 2"#) ? true : nil
        }
        lookout.send(SIGKILL)
        let killed = lookout
        _ = try await eventually("the process to die") { killed.isRunning ? nil : true }

        // Restarted with the receiver still down, then the receiver comes back: both arrive, in order.
        lookout = try ChildProcess("lookout", ["serve", "--config", config.path])
        _ = try await lookout.waitFor(#"msg=listening address=127\.0\.0\.1:(\d+)"#)
        let receiver = try ChildProcess("lookout-sim", ["--listen", "127.0.0.1:\(receiverPort)"])
        _ = try await receiver.waitFor(#"listening on (http://127\.0\.0\.1:\d+)/"#)
        let log = try await eventually("both notifications delivered") { () -> [[String: Any]]? in
            let log = try await simulatorWebhookLog(receiverBase)
            return log.count >= 2 ? log : nil
        }
        let statuses = log.compactMap { ($0["payload"] as? [String: Any])?["status"] as? String }
        #expect(statuses == ["firing", "resolved"])
        let deliveries = log.compactMap { $0["delivery"] as? String }
        #expect(Set(deliveries).count == deliveries.count)
        #expect(try await lookout.terminate() == 0)
        #expect(try await receiver.terminate() == 0)
        #expect(try await upstream.terminate() == 0)
    }

    /// A breaker that opens and closes again well before the first evaluation: the sampled state
    /// never shows it, the opening event does.
    @Test func aBreakerOpenBetweenTwoEvaluationsStillFiresCircuitOpened() async throws {
        let directory = try makeTemporaryDirectory("breaker-blip")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (sim, base) = try await startSimulator()
        let config = directory.appendingPathComponent("lookout.yml")
        try """
        listen: 127.0.0.1:0
        database: \(directory.path)/lookout.sqlite
        defaults:
          interval: 100ms
          timeout: 5s
          retry: {server_error: {max_attempts: 1}}
          circuit_breaker: {failure_threshold: 3, open_timeout: 300ms, jitter: 0, success_threshold: 1}
        sources:
          - {name: blip, url: "\(base)/flaky/blip-\(UUID().uuidString.prefix(8))?fail=3&code=503"}
        alerts:
          evaluation_interval: 3s
          rules:
            - {name: CircuitOpened, severity: info, expr: "breaker_open == 1 or breaker_opens[5s] > 0"}
            - {name: SampledBreakerOpen, severity: info, expr: "breaker_open == 1"}
          hooks:
            - {name: feed, type: webhook, url: "\(base)/webhook", severities: [info], group_by: [alertname], group_wait: 0s}
        """.write(to: config, atomically: true, encoding: .utf8)
        let (lookout, lookoutBase) = try await startLookout(config: config)
        let log = try await eventually("CircuitOpened firing and resolved") { () -> [[String: Any]]? in
            let log = try await simulatorWebhookLog(base).compactMap { $0["payload"] as? [String: Any] }
            return log.count >= 2 ? log : nil
        }
        #expect(log.map { $0["status"] as? String ?? "" } == ["firing", "resolved"])
        #expect(log.allSatisfy { ($0["groupLabels"] as? [String: String])?["alertname"] == "CircuitOpened" })
        let metrics = await http.perform(TransferRequest(url: "\(lookoutBase)/metrics", timeout: .patient)).bodyText
        // At least the one opening (a loaded machine's timeouts can open it again later).
        #expect(metricValue(metrics, #"lookout_circuit_breaker_opens_total{source="blip"}"#).map { $0 >= 1 } == true)
        #expect(metrics.contains(#"lookout_circuit_breaker_state{source="blip",state="closed"} 1"#))
        #expect(try await lookout.terminate() == 0)
        #expect(try await sim.terminate() == 0)
    }

    @Test func aRealAlertmanagerGetsTheAlertAndItsResolution() async throws {
        let directory = try makeTemporaryDirectory("hooks")
        defer { try? FileManager.default.removeItem(at: directory) }
        let amPort = closedPort()
        try """
        route: {receiver: blackhole, group_wait: 1s}
        receivers: [{name: blackhole}]
        """.write(to: directory.appendingPathComponent("alertmanager.yml"), atomically: true, encoding: .utf8)
        let alertmanager = try ChildProcess(
            "/usr/bin/prometheus-alertmanager",
            [
                "--config.file=\(directory.path)/alertmanager.yml", "--web.listen-address=127.0.0.1:\(amPort)",
                "--storage.path=\(directory.path)/am", "--cluster.listen-address=",
            ])
        let amBase = "http://127.0.0.1:\(amPort)"
        _ = try await eventually("Alertmanager to be ready") { () -> Bool? in
            await http.perform(TransferRequest(url: "\(amBase)/-/ready", timeout: .patient)).httpStatus == 200 ? true : nil
        }
        let (sim, base) = try await startSimulator()
        let config = try writeConfig(
            directory, upstream: base,
            hooks: """
                    - {name: oncall, type: alertmanager, url: "\(amBase)"}
                """, failures: 25)
        let lookout = try ChildProcess("lookout", ["serve", "--config", config.path])
        let alert = try await eventually("the alert in Alertmanager") { () -> [String: Any]? in
            let alerts = try await json("\(amBase)/api/v2/alerts") as? [[String: Any]] ?? []
            return alerts.first { ($0["labels"] as? [String: String])?["alertname"] == "SourceDown" }
        }
        let labels = try #require(alert["labels"] as? [String: String])
        #expect(labels == ["alertname": "SourceDown", "severity": "critical", "source": "flappy", "team": "ops"])
        let annotations = try #require(alert["annotations"] as? [String: String])
        #expect(annotations["summary"] == "flappy is down")
        #expect(annotations["description"]?.contains("503") == true)
        #expect(alert["generatorURL"] as? String == "http://lookout.test:9464/api/v1/sources/flappy")
        _ = try await eventually("the alert to be resolved in Alertmanager") { () -> Bool? in
            let alerts = try await json("\(amBase)/api/v2/alerts?active=true") as? [[String: Any]] ?? []
            return alerts.contains { ($0["labels"] as? [String: String])?["alertname"] == "SourceDown" } ? nil : true
        }
        #expect(try await lookout.terminate() == 0)
        #expect(try await sim.terminate() == 0)
        _ = try await alertmanager.terminate()
    }
}
