import Foundation
import LookoutCore
import ResilientHTTP
import TestSupport
import Testing

/// `kind: push` through the real binary: a job's calls over HTTP, a silence past its grace told
/// once to a webhook and its end told after the next call, a failure with the job's words, a
/// wrong token, a run's duration, and a restart that keeps the last call; the token shown nowhere.
@Suite("push sources end to end", .serialized)
struct PushEndToEndTests {
    let http = CurlTransport()
    static let token = "push-test-token-0123456789"

    func call(_ url: String, method: String = "GET", body: String? = nil) async -> TransferResult {
        var request = TransferRequest(url: url, method: method, timeout: .patient)
        if let body { request.body = Array(body.utf8) }
        return await http.perform(request)
    }

    /// The SourceDown notifications about `source`, oldest first.
    func notifications(_ simBase: String, _ source: String) async throws -> [(status: String, description: String)] {
        // A notification may carry several of the source's alerts: its SourceDown is the one.
        try await simulatorWebhookLog(simBase).compactMap { entry in
            let alerts = (entry["payload"] as? [String: Any])?["alerts"] as? [[String: Any]] ?? []
            guard
                let alert = alerts.first(where: {
                    let labels = $0["labels"] as? [String: String]
                    return labels?["alertname"] == "SourceDown" && labels?["source"] == source
                })
            else { return nil }
            return (alert["status"] as? String ?? "", (alert["annotations"] as? [String: String])?["description"] ?? "")
        }
    }

    /// Waits until the last notification about `source` is `status` and says `words`.
    func told(_ simBase: String, _ source: String, _ status: String, _ words: String = "") async throws -> String {
        do {
            return try await eventually("\(source) \(status) \(words)") { () -> String? in
                guard let last = try await notifications(simBase, source).last, last.status == status, words.isEmpty || last.description.contains(words) else {
                    return nil
                }
                return last.description
            }
        } catch {
            throw TestFailure("\(error); \(source)'s notifications: \(try await notifications(simBase, source))")
        }
    }

    /// Two sources, so that no step hangs on the machine's speed: `quick` (2 s + 1 s) for the
    /// silence, `steady` (an hour) for everything a call says.
    @Test func aJobsCallsSilenceAndFailureReachAPerson() async throws {
        let directory = try makeTemporaryDirectory("push")
        defer { try? FileManager.default.removeItem(at: directory) }
        try "\(PushEndToEndTests.token)\n".write(to: directory.appendingPathComponent("push.token"), atomically: true, encoding: .utf8)
        try "steady-\(PushEndToEndTests.token)\n".write(to: directory.appendingPathComponent("steady.token"), atomically: true, encoding: .utf8)
        let (sim, simBase) = try await startSimulator()
        let config = try writeLookoutConfig(
            in: directory,
            """
            defaults: {interval: 300ms}
            sources:
              - {name: quick, kind: push, expect_every: 2s, grace: 1s, token_file: push.token}
              - {name: steady, kind: push, expect_every: 1h, token_file: steady.token}
            alerts:
              evaluation_interval: 200ms
              hooks:
                - {name: chat, type: webhook, url: "\(simBase)/webhook", group_wait: 0s, send_resolved: true}
            """)
        var (lookout, base) = try await startLookout(config: config)
        let quick = "\(base)/push/\(PushEndToEndTests.token)"
        let push = "\(base)/push/steady-\(PushEndToEndTests.token)"
        #expect(await call(quick + "?msg=exported%2012%20files").bodyText == "OK\n")
        // Silent past 2 s + 1 s: one notification naming the silence; the next call ends it.
        let silence = try await told(simBase, "quick", "firing", "no ping since")
        #expect(silence.contains("(expected every 2s, grace 1s)"), "\(silence)")
        #expect(await call(quick, method: "POST").httpStatus == 200)
        // Told once, then its end: the second notification (a later silence may follow).
        let second = try await eventually("quick's recovery") { () -> (status: String, description: String)? in
            let notes = try await notifications(simBase, "quick")
            return notes.count >= 2 ? notes[1] : nil
        }
        let all = try await notifications(simBase, "quick")
        #expect(second.status == "resolved", "\(all)")
        // A failure with the job's words: down at the call, whatever failure_threshold says.
        #expect(await call(push + "/fail", method: "POST", body: "disk full on /export\n").httpStatus == 200)
        _ = try await told(simBase, "steady", "firing", "The server said: disk full on /export")
        // An exit status 0 is a success; a run timed from /start gives the probe its latency.
        #expect(await call(push + "/start").httpStatus == 200)
        #expect(await call(push + "/0").httpStatus == 200)
        _ = try await told(simBase, "steady", "resolved")
        let scrape = await call("\(base)/metrics").bodyText
        #expect(metricValue(scrape, #"lookout_probe_latency_seconds_count{source="steady"}"#).map { $0 >= 1 } == true, "no latency recorded")
        // A non-zero exit status is a failure naming it; the next success ends it.
        #expect(await call(push + "/3").httpStatus == 200)
        _ = try await told(simBase, "steady", "firing", "the job exited with status 3")
        #expect(await call(push).httpStatus == 200)
        _ = try await told(simBase, "steady", "resolved")
        // A wrong token, an unknown action, an exit status past 255: 404, the token never echoed,
        // and nothing recorded: the job's failure stands.
        #expect(await call(push + "/fail?msg=marker%20failure").httpStatus == 200)
        _ = try await told(simBase, "steady", "firing", "marker failure")
        for wrong in ["\(base)/push/not-the-token-0123456789", push + "/reboot", push + "/256", push + "/1/2", "\(base)/push/not-the-token-0123456789/0"] {
            let answer = await call(wrong)
            #expect(answer.httpStatus == 404, "\(wrong)")
            #expect(!answer.bodyText.contains(PushEndToEndTests.token) && !answer.bodyText.contains("not-the-token"), "\(answer.bodyText)")
        }
        // A body past the server's 1 MiB limit is refused whole (413) and records nothing; a
        // thousand unknown tokens are each a 404 that names nothing.
        let huge = await call(push + "/0", method: "POST", body: String(repeating: "x", count: 2 << 20))
        #expect(huge.httpStatus == 413, "\(huge.httpStatus ?? 0)")
        for index in 0..<1000 {
            let answer = await call("\(base)/push/unknown-token-\(String(format: "%06d", index))")
            guard answer.httpStatus == 404, answer.bodyText == "no push source has this token\n" else {
                Issue.record("unknown token \(index): \(answer.httpStatus ?? 0) \(answer.bodyText)")
                break
            }
        }
        #expect(await call("\(base)/-/healthy").httpStatus == 200)
        let state = await call("\(base)/api/v1/sources/steady").bodyText
        #expect(state.contains("marker failure") && state.contains(#""state":"down""#), "\(state)")
        // A flood is refused with Retry-After once the token's burst is spent.
        var limited: TransferResult?
        for _ in 0..<30 where limited == nil {
            let answer = await call(push)
            if answer.httpStatus == 429 { limited = answer }
        }
        #expect(limited?.header("Retry-After") != nil)
        _ = try await told(simBase, "steady", "resolved")
        // Nowhere to be read: the log, the metrics, the page, the API, the notifications.
        let shown = [
            lookout.text, await call("\(base)/metrics").bodyText, await call("\(base)/").bodyText, await call("\(base)/api/v1/status").bodyText,
            try String(data: JSONSerialization.data(withJSONObject: try await simulatorWebhookLog(simBase)), encoding: .utf8) ?? "",
        ]
        for text in shown { #expect(!text.contains(PushEndToEndTests.token)) }
        // A restart keeps the last call: once the start's grace has passed, the silence is
        // counted from that call, not from the start.
        #expect(try await lookout.terminate() == 0)
        let restarted = Date()
        (lookout, base) = try await startLookout(config: config)
        // A probe of the new process (not a cause restored from before the stop) that says so.
        let afterRestart = try await eventually("the silence after the restart") { () -> String? in
            let body = await call("\(base)/api/v1/sources/quick").body
            guard let json = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any],
                let last = (json["source"] as? [String: Any])?["last_result"] as? [String: Any], let at = last["at"] as? String,
                let ms = Timestamp.parseRFC3339(at), Double(ms) / 1000 > restarted.timeIntervalSince1970, let message = last["message"] as? String,
                message.contains("no ping since")
            else { return nil }
            return message
        }
        #expect(!afterRestart.contains("Lookout started"), "\(afterRestart)")
        #expect(try await lookout.terminate() == 0)
        #expect(try await sim.terminate() == 0)
    }

    /// `lookout push-url` prints what to give the job; for a source of another kind it says so.
    @Test func printsTheURLToGiveTheJob() async throws {
        let directory = try makeTemporaryDirectory("push-url")
        defer { try? FileManager.default.removeItem(at: directory) }
        try "\(PushEndToEndTests.token)\n".write(to: directory.appendingPathComponent("push.token"), atomically: true, encoding: .utf8)
        let config = try writeLookoutConfig(
            in: directory,
            """
            external_url: https://lookout.example.com/
            sources:
              - {name: nightly, kind: push, schedule: "0 3 * * *", time_zone: Europe/Berlin, token_file: push.token}
              - {name: api, url: "http://127.0.0.1:1/"}
            """)
        let binary = ChildProcess.binDirectory.appendingPathComponent("lookout").path
        let printed = try await runTool(binary, ["push-url", "nightly", "--config", config.path])
        #expect(printed.status == 0)
        #expect(printed.output.hasPrefix("https://lookout.example.com/push/\(PushEndToEndTests.token)\n"), "\(printed.output)")
        #expect(printed.output.contains(#"curl -fsS -m 10 --retry 5 -o /dev/null "https://lookout.example.com/push/\#(PushEndToEndTests.token)/$?""#))
        let other = try await runTool(binary, ["push-url", "api", "--config", config.path])
        #expect(other.status == 1 && other.output.contains("api is a http source, not kind: push"), "\(other.output)")
    }

    /// Two replicas of one shard, each listing both as peers: a call that reaches one counts on
    /// the other too.
    @Test func aCallToOneReplicaCountsForItsPeer() async throws {
        let directory = try makeTemporaryDirectory("push-replicas")
        defer { try? FileManager.default.removeItem(at: directory) }
        try "\(PushEndToEndTests.token)\n".write(to: directory.appendingPathComponent("push.token"), atomically: true, encoding: .utf8)
        let ports = [closedPort(), closedPort()]
        let config = try writeLookoutConfig(
            in: directory,
            """
            peers: [\(ports.map { "\"http://127.0.0.1:\($0)\"" }.joined(separator: ", "))]
            sources:
              - {name: nightly, kind: push, expect_every: 1h, token_file: push.token}
            """)
        var replicas: [(ChildProcess, String)] = []
        for (index, port) in ports.enumerated() {
            let database = directory.appendingPathComponent("replica-\(index).sqlite").path
            let process = try ChildProcess(
                "lookout", ["serve", "--config", config.path, "--listen", "127.0.0.1:\(port)", "--replica", index == 0 ? "a" : "b", "--db", database])
            _ = try await process.waitFor(#"msg=listening address=127\.0\.0\.1:(\d+)"#)
            replicas.append((process, "http://127.0.0.1:\(port)"))
        }
        #expect(await call(replicas[0].1 + "/push/\(PushEndToEndTests.token)/fail?msg=export%20failed%20on%20a").httpStatus == 200)
        for (_, base) in replicas {
            let message = try await eventually("the failure on \(base)") { () -> String? in
                let text = await call("\(base)/api/v1/sources/nightly").bodyText
                return text.contains("export failed on a") ? text : nil
            }
            #expect(message.contains(#""state":"down""#), "\(message)")
        }
        for (process, _) in replicas { #expect(try await process.terminate() == 0) }
    }
}
