import CronSchedule
import Foundation
import LookoutCore
import ResilientHTTP
import Testing

/// `kind: push`: what its config says, what the job's calls leave in the ledger, and how a probe
/// judges them, driven with times of the test's own.
@Suite("push sources")
struct PushSourceTests {
    static let token = "0123456789abcdef0123"

    func source(_ settings: PushSettings) -> SourceConfig {
        var source = SourceConfig(name: "nightly-export", kind: .push, url: "push://nightly-export")
        source.push = settings
        return source
    }

    func parse(_ text: String, environment: [String: String] = [:]) throws -> LookoutConfig {
        try ConfigLoader.parse(text, file: "t.yml", directory: "/nonexistent", environment: environment)
    }

    func problems(_ text: String) -> [String] {
        do {
            _ = try parse(text, environment: ["PUSH_TOKEN": PushSourceTests.token, "SHORT": "abc"])
            return []
        } catch let error as ConfigError {
            return error.problems.map(\.description)
        } catch {
            return ["\(error)"]
        }
    }

    @Test func readsItsKeys() throws {
        let config = try parse(
            """
            sources:
              - {name: nightly-export, kind: push, expect_every: 24h, grace: 30m, token: "${PUSH_TOKEN}"}
              - {name: report, kind: push, schedule: "0 3 * * *", time_zone: Europe/Berlin, token: "${PUSH_TOKEN}x"}
            """, environment: ["PUSH_TOKEN": PushSourceTests.token])
        let nightly = try #require(config.sources.first?.push)
        #expect(nightly.expectEvery == .seconds(86_400) && nightly.grace == .seconds(1800) && nightly.token == PushSourceTests.token)
        let report = try #require(config.sources.last?.push)
        #expect(report.schedule == (try CronSchedule("0 3 * * *")) && report.timeZone == "Europe/Berlin")
        #expect(config.sources.first?.url == "push://nightly-export")
    }

    @Test(arguments: [
        ("{name: p, kind: push, token: \"${PUSH_TOKEN}\"}", "needs expect_every (e.g. 24h) or schedule"),
        ("{name: p, kind: push, expect_every: 1h, schedule: \"@daily\", token: \"${PUSH_TOKEN}\"}", "give expect_every or schedule, not both"),
        ("{name: p, kind: push, expect_every: 1h}", "needs token_file or token"),
        ("{name: p, kind: push, expect_every: 1h, token: \"${SHORT}\"}", "at least 16 letters"),
        ("{name: p, kind: push, expect_every: 1h, token: \"literal-token-in-config\"}", "write secrets as a ${ENV} reference"),
        ("{name: p, kind: push, schedule: \"0 25 * * *\", token: \"${PUSH_TOKEN}\"}", "\\\"25\\\" is not a hour"),
        ("{name: p, kind: push, schedule: \"@daily\", time_zone: Mars/Olympus, token: \"${PUSH_TOKEN}\"}", "is not a time zone"),
        ("{name: p, kind: push, expect_every: 1h, url: \"http://x/\", token: \"${PUSH_TOKEN}\"}", "a push source has no url"),
        ("{name: p, url: \"http://x/\", expect_every: 1h}", "only applies to kind: push"),
    ])
    func refusesWhatCannotWork(_ item: String, _ message: String) {
        let found = problems("sources:\n  - \(item)\n")
        #expect(found.contains { $0.contains(message.replacingOccurrences(of: "\\\"", with: "\"")) }, "\(found)")
    }

    @Test func aJobLateByMoreThanItsGraceIsDownAtOnceNamingTheSilence() throws {
        var settings = PushSettings(expectEvery: .seconds(86_400), grace: .seconds(1800), token: PushSourceTests.token)
        settings.expectEveryText = "24h"
        let pinged = try #require(Timestamp.parseRFC3339("2026-11-27T02:59:00Z"))
        let entry = PushLedger.Entry(lastSuccessMs: pinged)
        let started = pinged - 3_600_000
        // 24 h 29 min later: on time.
        let onTime = PushProber.judge(source(settings), entry, nowMs: pinged + 88_140_000, startedAtMs: started)
        #expect(onTime.ok)
        // 24 h 31 min later: late, and down at the first probe that says so.
        let late = PushProber.judge(source(settings), entry, nowMs: pinged + 88_260_000, startedAtMs: started)
        #expect(!late.ok && late.decisive)
        #expect(late.failure?.reason == "push_missed")
        #expect(late.failure?.detail == "no ping since 2026-11-27 02:59 UTC (expected every 24h, grace 30m)", "\(late.failure?.detail ?? "")")
        var tracker = OutageTracker()
        #expect(tracker.record(ok: late.ok, atMs: late.timestampMs, policy: OutagePolicy(), decisive: late.decisive) != nil)
    }

    @Test func aRestartWaitsAWholePeriodForCallsItCouldNotHear() {
        let settings = PushSettings(expectEvery: .seconds(3600), grace: .seconds(60), token: PushSourceTests.token)
        let entry = PushLedger.Entry(lastSuccessMs: 0)
        // Last ping long before the start: not missed until an hour and a minute after it.
        let started: Int64 = 100_000_000
        #expect(PushProber.judge(source(settings), entry, nowMs: started + 3_600_000, startedAtMs: started).ok)
        #expect(!PushProber.judge(source(settings), entry, nowMs: started + 3_661_000, startedAtMs: started).ok)
        // Never called: the same, from the start, and said so.
        let never = PushProber.judge(source(settings), nil, nowMs: started + 3_661_000, startedAtMs: started)
        #expect(never.failure?.detail.hasPrefix("no ping since Lookout started at") == true)
    }

    @Test func aScheduleIsLateAfterItsNextRunAndGraceInItsTimeZone() throws {
        let settings = PushSettings(schedule: try CronSchedule("0 3 * * *"), timeZone: "Europe/Berlin", grace: .seconds(600), token: PushSourceTests.token)
        // Pinged at 03:01 Berlin (02:01 UTC) on the 27th; the next run is 03:00 on the 28th.
        let pinged = try #require(Timestamp.parseRFC3339("2026-11-27T02:01:00Z"))
        let next = try #require(Timestamp.parseRFC3339("2026-11-28T02:00:00Z"))
        let entry = PushLedger.Entry(lastSuccessMs: pinged)
        #expect(PushProber.judge(source(settings), entry, nowMs: next + 599_000, startedAtMs: 0).ok)
        let late = PushProber.judge(source(settings), entry, nowMs: next + 601_000, startedAtMs: 0)
        #expect(late.failure?.detail.contains("expected \"0 3 * * *\" Europe/Berlin, grace 10m") == true, "\(late.failure?.detail ?? "")")
    }

    @Test func failuresAndExitStatusesSayWhatTheJobSaid() {
        let ledger = PushLedger(startedAtMs: 0)
        var settings = source(PushSettings(expectEvery: .seconds(3600), token: PushSourceTests.token))
        settings.name = "job"
        ledger.setSources([settings])
        #expect(ledger.source(forToken: PushSourceTests.token) == "job")
        #expect(ledger.source(forToken: PushSourceTests.token + "x") == nil)
        #expect(ledger.source(forToken: "") == nil)
        _ = ledger.record(.failure(message: "disk full", exitStatus: nil), source: "job", nowMs: 1000)
        let failed = PushProber.judge(settings, ledger.entry("job"), nowMs: 1001, startedAtMs: 0)
        #expect(!failed.ok && failed.decisive && failed.failure?.reason == "push_failed" && failed.failure?.serverMessage == "disk full")
        _ = ledger.record(.failure(message: nil, exitStatus: 3), source: "job", nowMs: 2000)
        let exited = PushProber.judge(settings, ledger.entry("job"), nowMs: 2001, startedAtMs: 0)
        #expect(exited.failure?.reason == "push_exit_status" && exited.failure?.detail == "the job exited with status 3")
        // /start then a success: the run's length, told once.
        _ = ledger.record(.start, source: "job", nowMs: 3000)
        _ = ledger.record(.success(message: nil), source: "job", nowMs: 10_500)
        #expect(PushProber.judge(settings, ledger.entry("job"), nowMs: 10_501, startedAtMs: 0).ok)
        #expect(ledger.takeRunSeconds("job") == 7.5)
        #expect(ledger.takeRunSeconds("job") == nil)
    }

    @Test func aTokensCallsAreRateLimited() {
        let ledger = PushLedger(startedAtMs: 0)
        var accepted = 0
        var refused: Int?
        for _ in 0..<100 {
            switch ledger.record(.success(message: nil), source: "job", nowMs: 5000) {
            case .recorded: accepted += 1
            case .rateLimited(let seconds): refused = seconds
            }
        }
        #expect(accepted == 10 && refused == 1)
        // A second later, one more.
        if case .recorded = ledger.record(.success(message: nil), source: "job", nowMs: 6000) {} else { Issue.record("refused after a second") }
    }
}
