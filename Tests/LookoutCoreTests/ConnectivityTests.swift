import LookoutCore
import ResilientHTTP
import Synchronization
import Testing

@Suite("ConnectivityMonitor")
struct ConnectivityTests {
    func result(_ source: String, unreachable: Bool) -> ProbeResult {
        ProbeResult(
            source: source, timestampMs: 0, ok: !unreachable,
            failure: unreachable ? Failure(category: .networkUnreachable, reason: "network_unreachable") : nil)
    }

    /// `count` sources over four hosts, or on the hosts `host` gives.
    func sources(_ count: Int, host: (Int) -> String = { "host\($0 % 4).example" }) -> [SourceConfig] {
        (0..<count).map { SourceConfig(name: "s\($0)", url: "http://\(host($0))/") }
    }

    @Test func eightyPercentOverThreeHostsIsOffline() {
        let changes = Mutex<[Bool]>([])
        let monitor = ConnectivityMonitor { changed in changes.withLock { $0.append(changed) } }
        monitor.setSources(sources(10))
        for index in 0..<7 { monitor.record(result("s\(index)", unreachable: true)) }
        #expect(!monitor.isOffline)
        // The probe that tips it hears so, to count itself as during offline.
        #expect(monitor.record(result("s7", unreachable: true)))
        #expect(monitor.isOffline)
        monitor.record(result("s8", unreachable: true))
        #expect(changes.withLock { $0 } == [true])
        for index in 0..<9 { monitor.record(result("s\(index)", unreachable: false)) }
        #expect(!monitor.isOffline)
        #expect(changes.withLock { $0 } == [true, false])
    }

    @Test func oneDeadHostIsAnOutageNotOffline() {
        let monitor = ConnectivityMonitor()
        monitor.setSources(sources(10) { $0 < 9 ? "dead.example" : "other.example" })
        for index in 0..<10 { monitor.record(result("s\(index)", unreachable: true)) }
        #expect(!monitor.isOffline)
    }

    /// An attempt that finds no network counts at once, before its probe's retries end; attempts
    /// that fail otherwise, succeed, or belong to no source (an alert hook's) do not.
    @Test func anAttemptThatFindsNoNetworkCountsBeforeItsProbeEnds() {
        let monitor = ConnectivityMonitor()
        monitor.setSources(sources(10))
        func attempt(_ upstream: String, _ failure: Failure?) -> ClientEvent {
            .attemptFinished(upstream: upstream, AttemptRecord(number: 1, startedAtMs: 0, failure: failure, httpStatus: nil, durationSeconds: 0))
        }
        let noRoute = Failure(category: .networkUnreachable, reason: "network_unreachable")
        for index in 0..<7 { monitor.handle(attempt("s\(index)", noRoute)) }
        monitor.handle(attempt("s7", Failure(category: .timeout, reason: "connect_timeout")))
        monitor.handle(attempt("s8", nil))
        monitor.handle(attempt("hook:pager", noRoute))
        #expect(!monitor.isOffline)
        monitor.handle(attempt("s9", noRoute))
        #expect(monitor.isOffline)
        // Probes that end well bring it back.
        for index in 0..<10 { monitor.record(result("s\(index)", unreachable: false)) }
        #expect(!monitor.isOffline)
    }

    /// The hosts are counted as sources come and go: a host whose last unreachable source
    /// recovers, or whose sources leave the config, no longer counts toward the three.
    @Test func theHostsCountFollowsRecoveriesAndReloads() {
        let monitor = ConnectivityMonitor()
        // Twenty sources over five hosts, four a host; all unreachable is offline.
        monitor.setSources(sources(20) { "host\($0 % 5).example" })
        for index in 0..<20 { monitor.record(result("s\(index)", unreachable: true)) }
        #expect(monitor.isOffline)
        // A source of host 0 recovers, so 95% are still down over five hosts.
        monitor.record(result("s0", unreachable: false))
        #expect(monitor.isOffline)
        // Hosts 0 and 1 recover entirely (the same source twice counts once): 60%, not offline.
        for index in [0, 5, 10, 15, 1, 6, 11, 16, 1] { monitor.record(result("s\(index)", unreachable: false)) }
        #expect(!monitor.isOffline)
        // A reload to the twelve sources of hosts 2, 3 and 4, all still down: offline again.
        monitor.setSources(sources(20) { "host\($0 % 5).example" }.filter { Int($0.name.dropFirst())! % 5 >= 2 })
        #expect(monitor.isOffline)
        // Host 4's sources move to host 2: two hosts left, so one dead network path, not offline.
        monitor.setSources(sources(20) { $0 % 5 == 4 ? "host2.example" : "host\($0 % 5).example" }.filter { Int($0.name.dropFirst())! % 5 >= 2 })
        #expect(!monitor.isOffline)
    }

    @Test func failingCanariesAreOffline() {
        let monitor = ConnectivityMonitor()
        monitor.setSources(sources(3))
        monitor.recordCanaries(allDown: true)
        #expect(monitor.isOffline)
        monitor.recordCanaries(allDown: false)
        #expect(!monitor.isOffline)
    }
}

@Suite("SourceRegistry")
struct BoardTests {
    @Test func showsAHealthyFallbackWhileASourceIsDown() {
        var primary = SourceConfig(name: "primary", url: "http://127.0.0.1/a")
        primary.fallback = "backup"
        let backup = SourceConfig(name: "backup", url: "http://127.0.0.1/b")
        let board = SourceRegistry(sources: [primary, backup])
        #expect(board.healthyFallback(for: primary) == nil)
        board.record(ProbeResult(source: "backup", timestampMs: 1, ok: true))
        #expect(board.healthyFallback(for: primary) == "backup")
        board.record(ProbeResult(source: "backup", timestampMs: 2, ok: false, failure: Failure(category: .timeout, reason: "response_timeout")))
        #expect(board.healthyFallback(for: primary) == nil)
    }

    @Test func keepsHistoryOfSourcesThatStayAcrossAReload() {
        let a = SourceConfig(name: "a", url: "http://127.0.0.1/a")
        let b = SourceConfig(name: "b", url: "http://127.0.0.1/b")
        let board = SourceRegistry(sources: [a, b])
        board.record(ProbeResult(source: "a", timestampMs: 1, ok: true))
        var changed = a
        changed.interval = .seconds(5)
        board.apply([changed, SourceConfig(name: "c", url: "http://127.0.0.1/c")])
        let names = board.snapshot().names
        #expect(names == ["a", "c"])
        #expect(board.snapshot().records[0].successes == 1)
        #expect(board.snapshot().records[0].source.interval == .seconds(5))
    }

    func moved(_ progress: inout DownloadProgress, _ state: DownloadState) -> Bool {
        progress.move(to: state)
    }

    @Test func downloadStatesMoveOnlyAlongTheMachine() {
        var progress = DownloadProgress()
        #expect(!moved(&progress, .completed))
        #expect(moved(&progress, .inProgress))
        #expect(moved(&progress, .paused))
        #expect(!moved(&progress, .verifying))
        #expect(moved(&progress, .inProgress))
        #expect(moved(&progress, .verifying))
        #expect(moved(&progress, .completed))
        #expect(progress.state == .completed)
    }
}

@Suite("HealthStats")
struct HealthStatsTests {
    @Test func oneWalkGivesTheSameSumsAsSeparateOnes() {
        var ring = CountRing(widthMs: 60_000, count: 61)
        for minute in 0..<90 {
            ring.add(BucketCounts(probes: UInt32(minute + 1), failures: UInt32(minute % 3)), atMs: Int64(minute) * 60_000 + 500)
        }
        let now: Int64 = 89 * 60_000 + 30_000
        let windows: [Int64] = [60_000, 120_000, 300_000, 900_000, 1_800_000, 3_600_000]
        let together = ring.sums(windowsMs: windows, nowMs: now)
        for (index, window) in windows.enumerated() {
            #expect(together[index] == ring.sum(windowMs: window, nowMs: now), "window \(window)")
        }
        #expect(together[0].probes == 90 + 89)  // the bucket of minute 88 still overlaps the last 60 s
        #expect(together[1].probes == 90 + 89 + 88)
    }

    @Test func errorRatesRecoveryAndBurn() {
        var health = SourceHealth()
        let start: Int64 = 10_000_000
        for second in 0..<60 {
            let failed = second >= 20 && second < 30
            health.record(
                ProbeResult(
                    source: "s", timestampMs: start + Int64(second) * 1000, ok: !failed,
                    failure: failed ? Failure(category: .timeout, reason: "response_timeout") : nil))
        }
        let now = start + 59_000
        #expect(health.errorRate(windowMs: 300_000, nowMs: now) == 10.0 / 60.0)
        #expect(health.lastRecoveryMs == 10_000)
        #expect(health.burnRate(windowMs: 300_000, nowMs: now)! > 100)
        let summary = health.summary(nowMs: now)
        #expect(summary.errorRate(windowMs: 300_000) == health.errorRate(windowMs: 300_000, nowMs: now))
    }
}
