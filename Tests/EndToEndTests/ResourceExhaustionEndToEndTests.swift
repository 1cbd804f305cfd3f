import Foundation
import GRDB
import ResilientHTTP
import Synchronization
import TestSupport
import Testing

/// Running out of disk and of connections (issue "Hostile input…", rows 3 and 7), against a real
/// `lookout serve` on loopback.
@Suite("resource exhaustion end to end", .serialized)
struct ResourceExhaustionEndToEndTests {
    let http = CurlTransport()

    func get(_ url: String, timeout: Duration = .seconds(20)) async -> TransferResult {
        await http.perform(TransferRequest(url: url, timeout: timeout))
    }

    /// A small tmpfs is filled while three sources go down and come back: the six alert changes
    /// wait in memory, and once there is space again every firing and resolved notification
    /// arrives, firing before resolved for each source.
    @Test func alertChangesDuringAFullDiskAreAllNotifiedInOrder() async throws {
        let directory = try makeTemporaryDirectory("disk-full")
        defer { try? FileManager.default.removeItem(at: directory) }
        let disk = try mountTmpfs(in: directory)
        defer { _ = try? runToolBlocking("/bin/umount", ["-l", disk.path]) }

        let (receiver, receiverBase) = try await startSimulator()
        let upstreamPort = closedPort()
        var upstream = try ChildProcess("lookout-sim", ["--listen", "127.0.0.1:\(upstreamPort)"])
        _ = try await upstream.waitFor(#"listening on (http://127\.0\.0\.1:\d+)/"#)
        let config = directory.appendingPathComponent("lookout.yml")
        try """
        listen: 127.0.0.1:0
        database: \(disk.path)/lookout.sqlite
        defaults:
          interval: 200ms
          timeout: 5s
          retry: {transient: {max_attempts: 1}}
          circuit_breaker: {failure_threshold: 1000}
        sources:
          - {name: one, url: "http://127.0.0.1:\(upstreamPort)/ok?s=1"}
          - {name: two, url: "http://127.0.0.1:\(upstreamPort)/ok?s=2"}
          - {name: three, url: "http://127.0.0.1:\(upstreamPort)/ok?s=3"}
        alerts:
          evaluation_interval: 200ms
          rules:
            - {name: SourceDown, severity: critical, expr: up == 0}
          hooks:
            - {name: chat, type: webhook, url: "\(receiverBase)/webhook", group_wait: 0s}
        """.write(to: config, atomically: true, encoding: .utf8)
        let (lookout, base) = try await startLookout(config: config)
        _ = try await eventually("the first round") { await get("\(base)/-/ready").httpStatus == 200 ? true : nil }

        // Fill the disk: every later write to the database fails with "database or disk is full".
        let filler = disk.appendingPathComponent("filler")
        #expect(FileManager.default.createFile(atPath: filler.path, contents: nil))
        let handle = try FileHandle(forWritingTo: filler)
        let block = Data(count: 256 * 1024)
        while (try? handle.write(contentsOf: block)) != nil {}
        try? handle.close()

        _ = try await upstream.terminate()
        _ = try await eventually("three alert changes waiting for the disk") { () -> Bool? in
            await get("\(base)/metrics").bodyText.contains("lookout_alert_changes_unstored 3\n") ? true : nil
        }
        upstream = try ChildProcess("lookout-sim", ["--listen", "127.0.0.1:\(upstreamPort)"])
        _ = try await upstream.waitFor(#"listening on (http://127\.0\.0\.1:\d+)/"#)
        _ = try await eventually("six alert changes waiting for the disk") { () -> Bool? in
            await get("\(base)/metrics").bodyText.contains("lookout_alert_changes_unstored 6\n") ? true : nil
        }
        let webhooks = try JSONSerialization.jsonObject(with: Data(await get("\(receiverBase)/webhook/log").body)) as? [Any]
        #expect(webhooks?.isEmpty == true)
        #expect(await get("\(base)/-/healthy").httpStatus == 200)

        try FileManager.default.removeItem(at: filler)
        let log = try await eventually("six notifications") { () -> [[String: Any]]? in
            let log = try JSONSerialization.jsonObject(with: Data(await get("\(receiverBase)/webhook/log").body)) as? [[String: Any]] ?? []
            return log.count >= 6 ? log : nil
        }
        #expect(log.count == 6)
        var seen: [String: [String]] = [:]
        for entry in log {
            let payload = try #require(entry["payload"] as? [String: Any])
            let alert = try #require((payload["alerts"] as? [[String: Any]])?.first)
            let source = try #require((alert["labels"] as? [String: String])?["source"])
            seen[source, default: []].append(try #require(alert["status"] as? String))
        }
        #expect(seen == ["one": ["firing", "resolved"], "two": ["firing", "resolved"], "three": ["firing", "resolved"]])
        #expect(await get("\(base)/metrics").bodyText.contains("lookout_alert_changes_unstored 0\n"))
        #expect(try await lookout.terminate() == 0)
        #expect(try await upstream.terminate() == 0)
        #expect(try await receiver.terminate() == 0)
    }

    /// stderr is a pipe that nobody reads, then one whose reader has gone. A failed probe's log
    /// line was written by the transfer thread, so a full pipe stopped every probe; a reader that
    /// had gone killed the service (SIGPIPE).
    @Test func aLogNobodyReadsStopsNoProbeAndAGoneReaderKillsNothing() async throws {
        let directory = try makeTemporaryDirectory("lookout-log")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (sim, simURL) = try await startSimulator()
        defer { sim.send(SIGKILL) }
        let port = closedPort()
        let config = directory.appendingPathComponent("lookout.yml")
        // 100 failing sources every 200 ms, each failure a debug line: 500 lines a second.
        try
            (["listen: 127.0.0.1:\(port)", "database: \(directory.path)/lookout.sqlite", "defaults: {interval: 200ms, timeout: 150ms}", "sources:"]
            + (1...100).map { "  - {name: failing\($0), url: \"\(simURL)/status/500\"}" })
            .joined(separator: "\n").write(to: config, atomically: true, encoding: .utf8)
        let stderr = Pipe()
        // Full after some twenty lines.
        #expect(shrinkToOnePage(pipe: stderr.fileHandleForWriting.fileDescriptor))
        let lookout = try ChildProcess("lookout", ["serve", "--config", config.path, "--log-level", "debug"], standardError: stderr)
        defer { lookout.send(SIGKILL) }
        let base = "http://127.0.0.1:\(port)"

        /// Probes started and log lines dropped, from /metrics. Every probe logs a line at debug
        /// level (a 500, or the open breaker's refusal), and a probe starts only with one of 512
        /// permits, which probes held up on the transfer thread would keep.
        func counts() async -> (started: Double, dropped: Double)? {
            let scrape = await get("\(base)/metrics", timeout: .seconds(5))
            guard scrape.httpStatus == 200 else { return nil }
            guard let started = metricValue(scrape.bodyText, "lookout_scheduler_probes_started_total"),
                let dropped = metricValue(scrape.bodyText, "lookout_log_lines_dropped_total")
            else { return nil }
            return (started, dropped)
        }

        // Nobody reads: the pipe and the 1,000 lines that may wait fill, and probing goes on,
        // well past the point where the permits would all be held.
        let stalled = try await eventually("lines dropped and probing past 3,000 starts") { () -> (started: Double, dropped: Double)? in
            guard let now = await counts(), now.dropped > 0, now.started >= 3000 else { return nil }
            return now
        }
        // The reader goes: writes fail (EPIPE), and the service lives on, probing and counting.
        try stderr.fileHandleForReading.close()
        let last = Mutex<(started: Double, dropped: Double)?>(nil)
        do {
            _ = try await eventually("probing and dropping after the reader has gone") { () -> Bool? in
                guard let now = await counts() else { return nil }
                last.withLock { $0 = now }
                return now.dropped > stalled.dropped + 1000 && now.started > stalled.started + 1000 ? true : nil
            }
        } catch {
            // Whether it stopped probing, stopped counting, or stopped answering at all.
            let seen = last.withLock { $0 }.map { "started \($0.started), dropped \($0.dropped)" } ?? "no answer from /metrics"
            throw TestFailure(
                "\(error); at the close: started \(stalled.started), dropped \(stalled.dropped); last seen: \(seen); running: \(lookout.isRunning); its stdout: \(lookout.text.suffix(1500))"
            )
        }
        #expect(lookout.isRunning)
        #expect(try await lookout.terminate() == 0)
    }

    /// A database on a read-only mount at start: probing and serving go on, records wait in
    /// memory, and they are written once the mount is writable again.
    @Test func aReadOnlyDatabaseAtStartDoesNotStopProbing() async throws {
        let directory = try makeTemporaryDirectory("read-only")
        defer { try? FileManager.default.removeItem(at: directory) }
        let disk = try mountTmpfs(in: directory)
        defer { _ = try? runToolBlocking("/bin/umount", ["-l", disk.path]) }
        let config = directory.appendingPathComponent("lookout.yml")
        try """
        listen: 127.0.0.1:0
        database: \(disk.path)/lookout.sqlite
        defaults: {interval: 200ms, timeout: 1s, retry: {transient: {max_attempts: 1}}, circuit_breaker: {failure_threshold: 1000}}
        sources:
          - {name: a, url: "http://127.0.0.1:\(closedPort())/"}
        """.write(to: config, atomically: true, encoding: .utf8)
        var (lookout, base) = try await startLookout(config: config)
        #expect(try await lookout.terminate() == 0)
        let rowsBefore = try countRows(disk.appendingPathComponent("lookout.sqlite").path)
        #expect(try await runTool("/bin/mount", ["-o", "remount,ro", disk.path]).status == 0)

        (lookout, base) = try await startLookout(config: config)
        _ = try await eventually("probes while the file cannot be written") { () -> Bool? in
            let metrics = await get("\(base)/metrics").bodyText
            return metrics.contains("lookout_db_writable 0\n") && metrics.contains(#"lookout_probes_total{source="a",result="failure"} 3"#) ? true : nil
        }
        // The gauge of rollups held in memory is exported (with this minute's at least; that it
        // grows while writes fail, and is all counted once they succeed, is RecordWriter's own
        // test with a fake clock: minutesWaitingForHoursAreFoldedIntoTheirHourAndAllCounted).
        let waiting = await get("\(base)/metrics").bodyText.split(separator: "\n").first { $0.hasPrefix("lookout_db_pending_rollups ") }
        #expect(waiting.flatMap { Double($0.split(separator: " ")[1]) }.map { $0 >= 1 } == true)
        let ready = await get("\(base)/-/ready")
        #expect(ready.httpStatus == 503)
        #expect(ready.bodyText.contains("the database cannot be written"))

        #expect(try await runTool("/bin/mount", ["-o", "remount,rw", disk.path]).status == 0)
        _ = try await eventually(deadline: .seconds(30), "the file to be opened for writing") { () -> Bool? in
            await get("\(base)/metrics").bodyText.contains("lookout_db_writable 1\n") ? true : nil
        }
        _ = try await eventually("the waiting records to be written") { () -> Bool? in
            try countRows(disk.appendingPathComponent("lookout.sqlite").path) > rowsBefore + 3 ? true : nil
        }
        _ = try await eventually("ready again") { await get("\(base)/-/ready").httpStatus == 200 ? true : nil }
        #expect(try await lookout.terminate() == 0)
    }

    /// Random bytes written into the middle of the database before a start: the damage is found,
    /// logged, shown by `/-/ready` and a metric, and probing and `/metrics` go on.
    @Test func aDamagedDatabaseIsReportedAndProbingGoesOn() async throws {
        let directory = try makeTemporaryDirectory("damaged")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("lookout.sqlite").path
        let config = directory.appendingPathComponent("lookout.yml")
        try """
        listen: 127.0.0.1:0
        database: \(path)
        defaults: {interval: 200ms, timeout: 1s, retry: {transient: {max_attempts: 1}}, circuit_breaker: {failure_threshold: 1000}}
        sources:
          - {name: a, url: "http://127.0.0.1:\(closedPort())/"}
        """.write(to: config, atomically: true, encoding: .utf8)
        var (lookout, base) = try await startLookout(config: config)
        #expect(try await lookout.terminate() == 0)
        let filler = try DatabaseQueue(path: path)
        try await filler.write { db in
            for index in 0..<20_000 {
                try db.execute(
                    sql:
                        "INSERT INTO error_records (ts_ms, source, category, reason, message, attempt, was_retried, retry_succeeded) VALUES (?, 'a', 'transient', 'connection_refused', 'refused', 1, 0, 0)",
                    arguments: [index])
            }
        }
        try await filler.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        try filler.close()
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        let size = try handle.seekToEnd()
        try handle.seek(toOffset: size / 2)
        try handle.write(contentsOf: Data((0..<16_384).map { _ in UInt8.random(in: 0...255) }))
        try handle.close()

        (lookout, base) = try await startLookout(config: config)
        _ = try await lookout.waitFor(#"msg="the database is damaged; probing and serving go on"#)
        // The gauge of rollups held in memory is exported (with this minute's at least; that it
        // grows while writes fail, and is all counted once they succeed, is RecordWriter's own
        // test with a fake clock: minutesWaitingForHoursAreFoldedIntoTheirHourAndAllCounted).
        let waiting = await get("\(base)/metrics").bodyText.split(separator: "\n").first { $0.hasPrefix("lookout_db_pending_rollups ") }
        #expect(waiting.flatMap { Double($0.split(separator: " ")[1]) }.map { $0 >= 1 } == true)
        let ready = await get("\(base)/-/ready")
        #expect(ready.httpStatus == 503)
        #expect(ready.bodyText.hasPrefix("Lookout is not ready: the database is damaged (quick_check: "))
        _ = try await eventually("probing to go on") { () -> Bool? in
            let metrics = await get("\(base)/metrics").bodyText
            return metrics.contains("lookout_db_damaged 1\n") && metrics.contains(#"lookout_probes_total{source="a",result="failure"} 3"#) ? true : nil
        }
        #expect(try await lookout.terminate() == 0)
    }

    /// A 16 MB tmpfs mounted at `directory/disk` (needs root); the caller unmounts it.
    func mountTmpfs(in directory: URL) throws -> URL {
        let disk = directory.appendingPathComponent("disk")
        try FileManager.default.createDirectory(at: disk, withIntermediateDirectories: true)
        let mounted = try runToolBlocking("/bin/mount", ["-t", "tmpfs", "-o", "size=16m", "tmpfs", disk.path])
        try #require(mounted.status == 0, "this test mounts a tmpfs and needs root: \(mounted.output)")
        return disk
    }

    func countRows(_ path: String) throws -> Int {
        try DatabaseQueue(path: path).read { db in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM probe_results") ?? 0
        }
    }

    /// 1,000 connections that send a header line every second and never finish their request,
    /// reopened as the server closes them, for 15 s: `/metrics`, `/-/healthy` and `/-/ready`
    /// answer within a second throughout.
    @Test func theServerAnswersThroughASlowlorisOfAThousandConnections() async throws {
        let directory = try makeTemporaryDirectory("slowloris")
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = directory.appendingPathComponent("lookout.yml")
        try """
        listen: 127.0.0.1:0
        database: ":memory:"
        sources:
          - {name: a, url: "http://127.0.0.1:\(closedPort())/", interval: 1s}
        """.write(to: config, atomically: true, encoding: .utf8)
        let (lookout, base) = try await startLookout(config: config)
        let port = UInt16(base.split(separator: ":").last!)!
        _ = try await eventually("the first round") { await get("\(base)/-/ready").httpStatus == 200 ? true : nil }

        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        limit.rlim_cur = min(limit.rlim_max, 4096)
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        let attackers = (0..<1000).map { _ in DrippingClient(port: port) }
        defer { for attacker in attackers { attacker.close() } }
        #expect(attackers.allSatisfy { $0.openFailures == 0 }, "the test could not open its 1,000 connections")

        var reopened = 0
        var answered = 0
        let end = ContinuousClock.now + .seconds(15)
        while ContinuousClock.now < end {
            for attacker in attackers where !attacker.drip() {
                attacker.reopen()
                reopened += 1
            }
            for path in ["/metrics", "/-/healthy", "/-/ready"] {
                let result = await get("\(base)\(path)", timeout: .seconds(1))
                #expect(result.httpStatus == 200, "\(path) did not answer within 1 s: \(result.curlMessage)")
                answered += 1
            }
            try await Task.sleep(for: .milliseconds(500))
        }
        #expect(answered >= 30)
        #expect(attackers.reduce(0) { $0 + $1.openFailures } == 0, "reopening failed: the count of closed connections would mean nothing")
        #expect(reopened >= 1000, "the server must close connections that never finish their request")
        let metrics = await get("\(base)/metrics").bodyText
        #expect(metrics.contains("lookout_http_slow_connections_closed_total "))
        #expect(try await lookout.terminate() == 0)
    }
}

/// One slowloris connection: sends a request line, then a header line per `drip()`, never the end.
final class DrippingClient {
    private var fd: Int32 = -1
    let port: UInt16
    /// Sockets this client could not create (file limit): the test checks there were none.
    private(set) var openFailures = 0

    init(port: UInt16) {
        self.port = port
        reopen()
    }

    func reopen() {
        if fd >= 0 { Glibc.close(fd) }
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        if fd < 0 { openFailures += 1 }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        _ = withLoopbackAddress(port: port) { connect(fd, $0, $1) }
        pending = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    }

    private var pending = ""

    /// Sends one more header line; false when the server has closed the connection.
    func drip() -> Bool {
        var probe = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        if poll(&probe, 1, 0) > 0 {
            var byte: UInt8 = 0
            if recv(fd, &byte, 1, Int32(MSG_DONTWAIT)) <= 0 { return false }
        }
        let line = pending.isEmpty ? "X-Slow: 1\r\n" : pending
        let sent = line.withCString { send(fd, $0, strlen($0), Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
        if sent > 0 { pending = "" }
        return sent > 0 || errno == EAGAIN || errno == EINPROGRESS || errno == ENOTCONN
    }

    func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }
}
