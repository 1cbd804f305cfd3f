import Foundation
import GRDB
import ResilientHTTP
import TestSupport
import Testing

/// The adversarial pass's inputs against a real `lookout serve` and `lookout probe` on loopback
/// (issue "Hostile input never crashes, leaks or loses anything"): each must get its clear error
/// or correct result, and the server must still answer afterwards.
@Suite("hostile input end to end", .serialized)
struct HostileInputEndToEndTests {
    let http = CurlTransport()

    func get(_ url: String, headers: [(name: String, value: String)] = []) async -> TransferResult {
        await http.perform(TransferRequest(url: url, headers: headers, timeout: .seconds(20)))
    }

    // Rows 1, 4 and 5: hostile scrape timeouts, many distinct targets, secrets in targets.
    @Test func probeSurvivesHostileTimeoutsAndKeepsNothingPerTarget() async throws {
        let directory = try makeTemporaryDirectory("hostile-probe")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (sim, simBase) = try await startSimulator()
        let database = directory.appendingPathComponent("lookout.sqlite")
        let config = directory.appendingPathComponent("lookout.yml")
        try """
        listen: 127.0.0.1:0
        database: \(database.path)
        probe_modules:
          http_2xx: {kind: http, timeout: 5s, allow: ["http://127\\\\.0\\\\.0\\\\.1:[0-9]+/.*"]}
        defaults: {interval: 200ms, timeout: 1s, retry: {transient: {max_attempts: 1}}}
        sources:
          # Its breaker must not open: refused calls write no error records.
          - {name: canary, url: "http://127.0.0.1:\(closedPort())/", circuit_breaker: {failure_threshold: 1000, open_timeout: 100ms}}
        """.write(to: config, atomically: true, encoding: .utf8)
        let (lookout, base) = try await startLookout(config: config)

        for value in ["1e16", "inf", "-inf", "nan", "-5", "0", "9223372036854775807", "1e-300", "0x10"] {
            let result = await get("\(base)/probe?target=\(simBase)/ok&module=http_2xx", headers: [("X-Prometheus-Scrape-Timeout-Seconds", value)])
            #expect(result.httpStatus == 200, "scrape timeout \(value)")
            #expect(result.bodyText.contains("probe_success 1\n"), "scrape timeout \(value)")
        }
        #expect(await get("\(base)/-/healthy").httpStatus == 200)

        // Distinct targets, some failing, each carrying secrets in its query.
        let deadPort = closedPort()
        for index in 0..<300 {
            let target =
                switch index % 3 {
                case 0: "\(simBase)/ok?n=\(index)%26token=tok\(index)%26password=hunter2"
                case 1: "\(simBase)/status/503?n=\(index)%26token=tok\(index)%26password=hunter2"
                default: "http://127.0.0.1:\(deadPort)/x\(index)?token=tok\(index)%26password=hunter2"
                }
            let result = await get("\(base)/probe?module=http_2xx&target=\(target)", headers: [("X-Prometheus-Scrape-Timeout-Seconds", "1")])
            #expect(result.httpStatus == 200)
            #expect(result.bodyText.contains(index % 3 == 0 ? "probe_success 1\n" : "probe_success 0\n"))
        }
        // The canary's records prove the writer flushed after the probes above.
        let reader = try DatabaseQueue(path: database.path)
        let before = try await reader.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM error_records") ?? 0 }
        _ = try await eventually("the writer to flush after the probes") { () -> Bool? in
            let now = try await reader.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM error_records") ?? 0 }
            return now > before + 2 ? true : nil
        }
        let sources = try await reader.read { db in
            try String.fetchAll(
                db,
                sql: """
                    SELECT source FROM breaker_state UNION SELECT source FROM error_records
                    UNION SELECT source FROM breaker_transitions UNION SELECT source FROM probe_results
                    """)
        }
        #expect(Set(sources) == ["canary"])
        let bytes = try Data(contentsOf: database) + ((try? Data(contentsOf: URL(fileURLWithPath: database.path + "-wal"))) ?? Data())
        #expect(bytes.range(of: Data("hunter2".utf8)) == nil)
        let metrics = await get("\(base)/metrics").bodyText
        #expect(!metrics.contains("hunter2"))
        #expect(!metrics.contains("source=\"probe"))
        #expect(try await lookout.terminate() == 0)
        #expect(try await sim.terminate() == 0)
    }

    // Row 6: whole-target patterns, and every redirect hop checked before it is requested.
    @Test func allowPatternsMatchWholeTargetsAndEveryRedirectHop() async throws {
        let directory = try makeTemporaryDirectory("hostile-allow")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (sim, simBase) = try await startSimulator()
        let simPort = simBase.split(separator: ":").last!
        let config = directory.appendingPathComponent("lookout.yml")
        try """
        listen: 127.0.0.1:0
        database: ":memory:"
        probe_modules:
          host_only: {kind: http, allow: ["127\\\\.0\\\\.0\\\\.1"]}
          redirects_only: {kind: http, allow: ["http://127\\\\.0\\\\.0\\\\.1:\(simPort)/redirect.*"]}
          whole_sim: {kind: http, allow: ["http://127\\\\.0\\\\.0\\\\.1:\(simPort)/.*"]}
          no_follow: {kind: http, follow_redirects: false, allow: ["http://127\\\\.0\\\\.0\\\\.1:\(simPort)/.*"]}
        sources:
          - {name: a, url: "\(simBase)/ok", interval: 1h}
        """.write(to: config, atomically: true, encoding: .utf8)
        let (lookout, base) = try await startLookout(config: config)
        let check = try await runTool(ChildProcess.binDirectory.appendingPathComponent("lookout").path, ["check-config", "--config", config.path])
        #expect(check.status == 0)

        #expect(await get("\(base)/probe?module=host_only&target=http://other.host/?127.0.0.1").httpStatus == 403)
        #expect(await get("\(base)/probe?module=whole_sim&target=http://other.host/?http://127.0.0.1:\(simPort)/").httpStatus == 403)

        let counters = { () async throws -> Int in
            let object = try JSONSerialization.jsonObject(with: Data(await get("\(simBase)/counters").body)) as? [String: Any]
            return (object?["/ok"] as? Int) ?? 0
        }
        let okBefore = try await counters()
        let refused = await get("\(base)/probe?module=redirects_only&target=\(simBase)/redirect?n=2").bodyText
        #expect(refused.contains("probe_success 0\n"))
        #expect(refused.contains(#"probe_failure_info{category="client_error",reason="redirect_not_allowed"} 1"#))
        #expect(try await counters() == okBefore, "the hop to /ok was requested although no pattern allows it")

        let followed = await get("\(base)/probe?module=whole_sim&target=\(simBase)/redirect?n=2").bodyText
        #expect(followed.contains("probe_success 1\n"))
        #expect(followed.contains("probe_http_redirects 2\n"))
        #expect(try await counters() == okBefore + 1)

        let notFollowed = await get("\(base)/probe?module=no_follow&target=\(simBase)/redirect?n=1").bodyText
        #expect(notFollowed.contains(#"reason="redirect_not_followed""#))
        #expect(notFollowed.contains("probe_http_status_code 302\n"))
        #expect(try await lookout.terminate() == 0)
        #expect(try await sim.terminate() == 0)
    }

    // Rows 2 and 8: what kills a parser kills neither check-config nor a running server's reload.
    @Test func hostileConfigsAreRefusedByCheckConfigAndByAReload() async throws {
        let directory = try makeTemporaryDirectory("hostile-config")
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = directory.appendingPathComponent("lookout.yml")
        let good = """
            listen: 127.0.0.1:0
            database: ":memory:"
            sources:
              - {name: a, url: "http://127.0.0.1:\(closedPort())/", interval: 1h}

            """
        try good.write(to: config, atomically: true, encoding: .utf8)
        let (lookout, base) = try await startLookout(config: config)
        let lookoutPath = ChildProcess.binDirectory.appendingPathComponent("lookout").path
        let deep = String(repeating: "(", count: 50_000) + "up" + String(repeating: ")", count: 50_000)
        let hostile: [(String, String)] = [
            ("    timeout: 9223372036854775807ms\n", #"sources[1].timeout (source "b"): "9223372036854775807ms" is too large (at most 100 years)"#),
            ("    interval: 99999999999999999999999h\n", #"sources[1].interval (source "b"): "99999999999999999999999h" is too large (at most 100 years)"#),
            ("    kind: download\n    max_bytes: 9999999999GiB\n", #"sources[1].max_bytes (source "b"): "9999999999GiB" is too large (at most 1EiB)"#),
        ]
        for (lines, expected) in hostile {
            try (good + "  - name: b\n    url: \"http://127.0.0.1:1/\"\n" + lines).write(to: config, atomically: true, encoding: .utf8)
            let checked = try await runTool(lookoutPath, ["check-config", "--config", config.path])
            #expect(checked.status == 1)
            #expect(checked.output.contains(expected), "\(checked.output)")
            lookout.send(SIGHUP)
            _ = try await eventually("the reload to be refused") { () -> Bool? in
                await get("\(base)/metrics").bodyText.contains("lookout_config_last_reload_successful 0\n") ? true : nil
            }
            try good.write(to: config, atomically: true, encoding: .utf8)
            lookout.send(SIGHUP)
            _ = try await eventually("the good config to load again") { () -> Bool? in
                await get("\(base)/metrics").bodyText.contains("lookout_config_last_reload_successful 1\n") ? true : nil
            }
        }
        try (good + "alerts:\n  rules:\n    - {name: x, expr: \"\(deep)\"}\n").write(to: config, atomically: true, encoding: .utf8)
        let checked = try await runTool(lookoutPath, ["check-config", "--config", config.path])
        #expect(checked.status == 1)
        #expect(checked.output.contains("alerts.rules[0].expr: longer than 1000 terms"))
        #expect(checked.output.count < 1000, "the message must not repeat a 100 KB expression")
        lookout.send(SIGHUP)
        _ = try await eventually("the deep expression to be refused") { () -> Bool? in
            await get("\(base)/metrics").bodyText.contains("lookout_config_last_reload_successful 0\n") ? true : nil
        }
        #expect(await get("\(base)/-/healthy").httpStatus == 200)
        #expect(try await lookout.terminate() == 0)
    }

    // Rows 9 and 12: control bytes stay spelled out in the terminal, JSON and HTML; HTTP/0.9 is
    // a protocol violation.
    @Test func controlBytesAreEscapedAndHTTP09IsAnInvalidResponse() async throws {
        let directory = try makeTemporaryDirectory("hostile-text")
        defer { try? FileManager.default.removeItem(at: directory) }
        let lookoutPath = ChildProcess.binDirectory.appendingPathComponent("lookout").path
        let body: [UInt8] = Array("bad".utf8) + [0x00, 0x1B] + Array("[31mred".utf8) + [0xFF, 0x07]
        let upstream = RawResponder(
            Array("HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n".utf8) + body)
        defer { upstream.stop() }
        let hostile = "http://127.0.0.1:\(upstream.port)/"
        func rawControls(_ text: String) -> Bool { text.unicodeScalars.contains { ($0.value < 0x20 && $0 != "\n") || $0.value == 0x7F } }

        let human = try await runTool(lookoutPath, ["probe", "--timeout", "1s", hostile])
        #expect(human.status == 1)
        #expect(human.output.contains(#"bad\u0000^[[31mred\#u{FFFD}\u0007"#), "\(human.output)")
        #expect(!rawControls(human.output))
        let json = try await runTool(lookoutPath, ["probe", "--json", "--timeout", "1s", hostile])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
        let serverMessage = try #require(object["server_message"] as? String)
        #expect(serverMessage == #"bad\u0000^[[31mred\#u{FFFD}\u0007"#)

        let config = directory.appendingPathComponent("lookout.yml")
        try """
        listen: 127.0.0.1:0
        database: ":memory:"
        defaults: {interval: 200ms, timeout: 1s, retry: {server_error: {max_attempts: 1}}}
        sources:
          - {name: hostile, url: "\(hostile)"}
        """.write(to: config, atomically: true, encoding: .utf8)
        let (lookout, base) = try await startLookout(config: config)
        let page = try await eventually("the page to show the server's message") { () -> String? in
            let page = await get("\(base)/").bodyText
            return page.contains("31mred") ? page : nil
        }
        #expect(page.contains(#"bad\u0000^[[31mred"#))
        #expect(!rawControls(page.replacingOccurrences(of: "\t", with: " ")))
        let status = await get("\(base)/api/v1/status").bodyText
        #expect(status.contains(#"bad\\u0000^[[31mred"#), "\(status)")
        #expect(!rawControls(status))
        #expect(try await lookout.terminate() == 0)

        let ancient = RawResponder(Array("hello from 1991\r\n".utf8))
        defer { ancient.stop() }
        let answer = try await runTool(lookoutPath, ["probe", "--json", "--timeout", "2s", "http://127.0.0.1:\(ancient.port)/"])
        let verdict = try #require(try JSONSerialization.jsonObject(with: Data(answer.output.utf8)) as? [String: Any])
        #expect(verdict["category"] as? String == "invalid_response", "\(answer.output)")
        #expect(verdict["reason"] as? String == "http09_response")
    }

    /// A database damaged or edited by hand: the extreme and ill-typed values the stores now
    /// check, in every table they are read back from. The server starts on it, every page and
    /// API answers, and it is still running (before, a recurring window with a negative
    /// duration trapped on every probe, and a breaker or alert time of Int64.min on every scrape).
    @Test func aDamagedDatabaseCrashesNoPage() async throws {
        let directory = try makeTemporaryDirectory("hostile-db")
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = directory.appendingPathComponent("lookout.sqlite").path
        let config = directory.appendingPathComponent("lookout.yml")
        try """
        listen: 127.0.0.1:0
        database: \(database)
        defaults: {interval: 1h}
        sources:
          - {name: a, url: "http://127.0.0.1:1/"}
        """.write(to: config, atomically: true, encoding: .utf8)
        let first = try ChildProcess("lookout", ["serve", "--config", config.path])
        _ = try await first.waitFor(#"msg=listening address=127\.0\.0\.1:(\d+)"#)
        #expect(try await first.terminate() == 0)

        let (min, max) = (Int64.min, Int64.max)
        let recurring = #"{"weekdays": [8], "minute_of_day": 60, "duration_ms": -172800000, "time_zone": "UTC"}"#
        try await DatabaseQueue(path: database).write { db in
            for sql in [
                "INSERT INTO maintenance_windows (sources, matchers, starts_at_ms, ends_at_ms, note, recurring) VALUES ('[]', '{}', 0, \(max), 'n', '\(recurring)')",
                "INSERT INTO maintenance_windows (sources, matchers, starts_at_ms, ends_at_ms, note) VALUES (1, 2, 'x', \(max), 3)",
                "INSERT OR REPLACE INTO breaker_state VALUES ('a', 'forced_open', \(max), \(max), \(min), \(min), \(max), \(min), 0)",
                "INSERT INTO alerts (fingerprint, rule, severity, state, started_at_ms, summary, labels, annotations) VALUES ('f', 'R', 'page', 'firing', \(min), '', '{}', '{}')",
                "INSERT INTO alerts (fingerprint, rule, severity, state, started_at_ms, summary, labels, annotations) VALUES ('g', 'R', 'page', 'firing', 'x', '', 1, 2)",
                "INSERT INTO announcements (id, title, sources) VALUES (1, 't', '[]')",
                "INSERT INTO announcement_updates (announcement_id, at_ms, state, message) VALUES (1, \(min), 'investigating', 'm')",
                "INSERT INTO silences (matchers, starts_at_ms, ends_at_ms, comment) VALUES ('{}', \(max - 1), \(max), 'c')",
                "INSERT INTO error_records (ts_ms, source, category, reason, message, attempt, was_retried, retry_succeeded, curl_code) VALUES (\(min), 'a', 'transient', 'r', 'm', \(max), 1, 0, \(max))",
                "INSERT INTO alert_outbox (hook, alert_id, payload, created_at_ms, attempts, next_attempt_at_ms) VALUES ('h', 1, 'p', 0, \(max), \(min))",
                "INSERT OR REPLACE INTO rollup_progress VALUES ('hour', \(min)), ('day', 'x')",
                "INSERT INTO minute_rollups SELECT \(max), id, 1, 0, 0, 0, 1, 1, x'' FROM sources WHERE name = 'a'",
                "INSERT INTO minute_rollups SELECT \(min), id, 1, 0, 0, 0, 1, 1, x'' FROM sources WHERE name = 'a'",
            ] { try db.execute(sql: sql) }
        }

        let lookout = try ChildProcess("lookout", ["serve", "--config", config.path])
        let port = try await lookout.waitFor(#"msg=listening address=127\.0\.0\.1:(\d+)"#)
        let base = "http://127.0.0.1:\(port)"
        for path in [
            "/", "/public", "/oncall", "/metrics", "/api/v1/status", "/api/v1/alerts", "/api/v1/silences", "/api/v1/maintenance",
            "/api/v1/announcements", "/api/v1/sources/a", "/api/v1/sources/a/errors?since=\(min)", "/api/v1/availability?days=90",
            "/api/v1/sources/a/availability", "/badge/a/status", "/badge/a/uptime/30d",
        ] {
            let answer = await get(base + path)
            #expect(answer.httpStatus.map { (200..<500).contains($0) } == true, "\(path): \(String(describing: answer.httpStatus))")
        }
        #expect(lookout.isRunning)
        #expect(try await lookout.terminate() == 0)
    }
}

/// A listener on 127.0.0.1 that answers every connection with the same bytes and closes it:
/// for upstreams no real server would imitate (raw control bytes, no status line).
final class RawResponder: Sendable {
    let port: UInt16
    private let fd: Int32

    init(_ answer: [UInt8]) {
        let (fd, address) = boundLoopbackSocket()
        listen(fd, 64)
        self.fd = fd
        self.port = UInt16(bigEndian: address.sin_port)
        Thread {
            while true {
                let client = accept(fd, nil, nil)
                guard client >= 0 else { return }
                var buffer = [UInt8](repeating: 0, count: 4096)
                _ = recv(client, &buffer, buffer.count, 0)
                _ = answer.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                close(client)
            }
        }.start()
    }

    func stop() {
        shutdown(fd, Int32(SHUT_RDWR))
        close(fd)
    }
}
