import Foundation
import GRDB
import LookoutCore
import ResilientHTTP
import TestSupport
import Testing

/// `kill -9` in the middle of failures, then a restart: nothing committed is lost and an open
/// breaker stays open.
@Suite("restart end to end")
struct RestartEndToEndTests {
    let http = CurlTransport()

    /// A config in `directory` with a database beside it; `body` is the YAML after `database`.
    func writeConfig(in directory: URL, _ body: String) throws -> (database: String, config: URL) {
        let database = directory.appendingPathComponent("lookout.sqlite").path
        let config = directory.appendingPathComponent("lookout.yml")
        try "listen: 127.0.0.1:0\ndatabase: \(database)\n\(body)".write(to: config, atomically: true, encoding: .utf8)
        return (database, config)
    }

    /// `/api/v1/status` of the Lookout listening on `port`.
    func status(_ port: String) async throws -> [String: Any] {
        let result = await http.perform(TransferRequest(url: "http://127.0.0.1:\(port)/api/v1/status", timeout: .patient))
        return try #require(try JSONSerialization.jsonObject(with: Data(result.body)) as? [String: Any])
    }

    /// Source `name` in `/api/v1/status`.
    func source(_ name: String, port: String) async throws -> [String: Any] {
        try #require((try await status(port)["sources"] as? [[String: Any]])?.first { $0["name"] as? String == name })
    }

    func counters(_ base: String) async throws -> [String: Int] {
        let result = await http.perform(TransferRequest(url: "\(base)/counters", timeout: .patient))
        return try #require(try JSONSerialization.jsonObject(with: Data(result.body)) as? [String: Int])
    }

    @Test func aHardKillLosesNoCommittedRecordAndKeepsTheBreakerOpen() async throws {
        let directory = try makeTemporaryDirectory("restart")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (sim, simBase) = try await startSimulator()
        let (database, config) = try writeConfig(
            in: directory,
            """
            defaults:
              interval: 1s
              timeout: 2s
              retry: {server_error: {max_attempts: 2, base: 10ms, max: 10ms}}
              circuit_breaker: {failure_threshold: 3, open_timeout: 10m}
            sources:
              - {name: down, url: "\(simBase)/status/503"}
              - {name: sentinel, url: "\(simBase)/ok"}
            """)
        let reader = try DatabaseQueue(path: database)
        func errorRows() throws -> Int {
            try reader.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM error_records WHERE source = 'down' AND category != 'circuit_open'") ?? 0 }
        }

        var lookout = try ChildProcess("lookout", ["serve", "--config", config.path])
        _ = try await lookout.waitFor(#"msg=listening address=127\.0\.0\.1:(\d+)"#)
        // Every failed attempt reaches the simulator once and becomes one error record; wait
        // until the breaker has opened and every record is committed, then kill without warning.
        // (While it is open each scheduled probe is its trial, one attempt.)
        let requests = try await eventually("the breaker to open and its records to be committed") { () -> Int? in
            let state = try await reader.read { db in try String.fetchOne(db, sql: "SELECT state FROM breaker_state WHERE source = 'down'") }
            let seen = try await counters(simBase)["/status/503"] ?? 0
            let rows = try errorRows()
            return state == "open" && seen > 0 && rows == seen ? seen : nil
        }
        lookout.send(SIGKILL)
        let killed = lookout
        _ = try await eventually("the process to die") { killed.isRunning ? nil : true }

        // Nothing committed is lost (a trial in flight at the kill may have added one).
        #expect(try errorRows() >= requests)
        let probeRows = try await reader.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM probe_results WHERE source = 'down'") ?? 0 }
        #expect(probeRows >= 2)

        let restartedAt = Int64(Date().timeIntervalSince1970 * 1000)
        lookout = try ChildProcess("lookout", ["serve", "--config", config.path])
        let port = try await lookout.waitFor(#"msg=listening address=127\.0\.0\.1:(\d+)"#)
        let sentinelBefore = try await counters(simBase)["/ok"] ?? 0
        _ = try await eventually("the sentinel to be probed five more times") { () -> Bool? in
            let seen = try await counters(simBase)["/ok"] ?? 0
            return seen >= sentinelBefore + 5 ? true : nil
        }
        // The breaker came back open and stays open: each probe since is one trial attempt,
        // no retries, and the outage and its cause are shown as before the kill.
        let attempts = try await reader.read { db in
            try Int.fetchOne(db, sql: "SELECT MAX(attempts) FROM probe_results WHERE source = 'down' AND ts_ms > ?", arguments: [restartedAt])
        }
        #expect(attempts == 1, "the open breaker let retries through after the restart")
        let down = try await source("down", port: port)
        let incident = try #require(down["incident"] as? [String: Any], "\(down)")
        #expect((incident["cause"] as? [String: Any])?["reason"] as? String == "http_503")
        #expect((incident["failed_probes"] as? Int ?? 0) >= 2)
        _ = try await eventually("the breaker shown open") { () -> Bool? in
            let metrics = await http.perform(TransferRequest(url: "http://127.0.0.1:\(port)/metrics", timeout: .patient)).bodyText
            return metrics.contains(#"lookout_circuit_breaker_state{source="down",state="open"} 1"#) ? true : nil
        }
        // No call was refused, and none counts as an error of the upstream.
        let metrics = await http.perform(TransferRequest(url: "http://127.0.0.1:\(port)/metrics", timeout: .patient)).bodyText
        #expect(!metrics.contains(#"category="circuit_open""#))
        let refusedRows = try await reader.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM error_records WHERE category = 'circuit_open'") ?? 0 }
        #expect(refusedRows == 0)
        #expect(try await lookout.terminate() == 0)
        #expect(try await sim.terminate() == 0)
    }

    /// A stop of two hours, then a start: the log, the JSON API and the page say that nothing was
    /// probed from the previous run's clean stop to this start.
    @Test func aStartAfterAStopTellsHowLongNothingWasProbed() async throws {
        let directory = try makeTemporaryDirectory("gap")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (database, config) = try writeConfig(in: directory, #"sources: [{name: nowhere, url: "http://127.0.0.1:9/", interval: 1h}]"#)
        var lookout = try ChildProcess("lookout", ["serve", "--config", config.path])
        _ = try await lookout.waitFor(#"msg=listening address=127\.0\.0\.1:(\d+)"#)
        #expect(try await lookout.terminate() == 0)
        // The clean stop marked the run alive; move the whole run two hours back.
        let reader = try DatabaseQueue(path: database)
        let stoppedAt = try await reader.write { db -> Int64 in
            let run = try #require(try Row.fetchOne(db, sql: "SELECT started_at_ms, alive_at_ms FROM runs"))
            #expect((run["alive_at_ms"] as Int64) >= (run["started_at_ms"] as Int64))
            try db.execute(sql: "UPDATE runs SET started_at_ms = started_at_ms - 7200000, alive_at_ms = alive_at_ms - 7200000")
            return (run["alive_at_ms"] as Int64) - 7_200_000
        }

        lookout = try ChildProcess("lookout", ["serve", "--config", config.path])
        let line = try await lookout.waitFor(#"msg="Lookout was not running; nothing was probed in between" for=(2h\S*)"#)
        let port = try await lookout.waitFor(#"msg=listening address=127\.0\.0\.1:(\d+)"#)
        #expect(line.hasPrefix("2h"))
        let gap = try #require(try await status(port)["monitoring_gap"] as? [String: Any])
        #expect(gap["from"] as? String == Timestamp.rfc3339(stoppedAt))
        #expect((gap["seconds"] as? Int ?? 0) >= 7200)
        let page = await http.perform(TransferRequest(url: "http://127.0.0.1:\(port)/", timeout: .patient)).bodyText
        #expect(page.contains("Lookout was not running for 2h"))
        #expect(try await reader.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM runs") } == 2)
        // `lookout status` says it too (and exits 0: the one source has not been probed yet).
        let shown = try await runTool(ChildProcess.binDirectory.appendingPathComponent("lookout").path, ["status", "--url", "http://127.0.0.1:\(port)"])
        #expect(shown.output.contains("Not running for 2h before its start (\(Timestamp.rfc3339(stoppedAt)) to "), "\(shown.output)")
        #expect(try await lookout.terminate() == 0)
    }

    /// A restart in the middle of an outage: the outage goes on from its first failure, the API
    /// says how long the source has been down, not how long since the restart, and the log does
    /// not tell it down a second time.
    @Test func anOutageGoesOnAcrossARestart() async throws {
        let directory = try makeTemporaryDirectory("outage")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (sim, simBase) = try await startSimulator()
        let (database, config) = try writeConfig(
            in: directory,
            """
            defaults:
              interval: 200ms
              timeout: 2s
              retry: {server_error: {max_attempts: 1}}
              circuit_breaker: {failure_threshold: 1000}
            sources:
              - {name: down, url: "\(simBase)/status/503"}
            """)
        var lookout = try ChildProcess("lookout", ["serve", "--config", config.path])
        _ = try await lookout.waitFor(#"msg=listening address=127\.0\.0\.1:(\d+)"#)
        let reader = try DatabaseQueue(path: database)
        let stored = { () async throws -> (Int64, Int)? in
            try await reader.read { db in
                try Row.fetchOne(db, sql: "SELECT down_since_ms, failed_probes FROM outages").map { ($0["down_since_ms"], $0["failed_probes"]) }
            }
        }
        _ = try await lookout.waitFor(#"msg="source down""#)
        _ = try await eventually("three failed probes of the outage to be stored") { try await stored().flatMap { $0.1 >= 3 ? true : nil } }
        #expect(try await lookout.terminate() == 0)
        let (downSince, failedBefore) = try #require(try await stored())

        lookout = try ChildProcess("lookout", ["serve", "--config", config.path])
        let port = try await lookout.waitFor(#"msg=listening address=127\.0\.0\.1:(\d+)"#)
        // Shown at once, and counted on by the next failures.
        let incident = try #require(try await source("down", port: port)["incident"] as? [String: Any])
        #expect(incident["down_since"] as? String == Timestamp.rfc3339(downSince))
        #expect((incident["failed_probes"] as? Int ?? 0) >= failedBefore)
        _ = try await eventually("the outage to count the failures after the restart") { () -> Bool? in
            let incident = try await source("down", port: port)["incident"] as? [String: Any]
            return (incident?["failed_probes"] as? Int ?? 0) >= failedBefore + 2 ? true : nil
        }
        // Told once before the stop; the same cause is not told again.
        #expect(!lookout.text.contains(#"msg="source down""#))
        #expect(try await lookout.terminate() == 0)
        #expect(try await sim.terminate() == 0)
    }
}
