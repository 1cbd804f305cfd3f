import Foundation
import LookoutCore
import Testing

/// `sla:` read from defaults, a group and a source, and refused with its position when wrong.
@Suite("SLA config")
struct SLAConfigTests {
    @Test func defaultsAGroupAndASourceEachGiveOnlyWhatTheySay() throws {
        let config = try ConfigLoader.parse(
            """
            defaults:
              sla: {target: 99.95%, period: month, time_zone: Europe/Berlin, exclude: [maintenance]}
            groups:
              payments: {sla: {target: 99.99%, claim_within: 30d}}
            sources:
              - {name: plain, url: "http://127.0.0.1:1/a"}
              - {name: card, url: "http://127.0.0.1:1/b", group: payments}
              - name: own
                url: "http://127.0.0.1:1/c"
                group: payments
                sla:
                  target: "0.999"
                  credits: [{below: 99.9%, credit: 10%}, {below: 99%, credit: 25%}, {below: 95%, credit: 100%}]
              - {name: none, url: "http://127.0.0.1:1/d", sla: off}
            """, file: "t.yml")
        let sla = config.sources.map(\.sla)
        #expect(sla[0]?.target == 0.9995 && sla[0]?.timeZone == "Europe/Berlin" && sla[0]?.exclude == [.maintenance])
        #expect(sla[1]?.target == 0.9999 && sla[1]?.claimWithin == .seconds(30 * 86_400) && sla[1]?.timeZone == "Europe/Berlin")
        // A source's own sla wins over its group's, and keeps the defaults' other keys.
        #expect(sla[2]?.target == 0.999 && sla[2]?.claimWithin == .seconds(60 * 86_400))
        #expect(sla[2]?.credits.map(\.credit) == [0.10, 0.25, 1])
        #expect(sla[2]?.credit(forUptime: 0.985) == SLASettings.Credit(below: 0.99, credit: 0.25))
        #expect(sla[2]?.credit(forUptime: 0.9995) == nil)
        #expect(sla[3] == nil)
    }

    @Test(arguments: [
        ("sla: {target: 101%}", #"sources[0].sla.target: "101%" must be from 0% to 100%"#),
        ("sla: {target: 99.9}", #"sources[0].sla.target: "99.9" is not a percentage (use 99.95%, or a ratio such as 0.9995)"#),
        ("sla: {target: lots}", #"sources[0].sla.target: "lots" is not a percentage (use 99.95%, or a ratio such as 0.9995)"#),
        (
            "sla: {credits: [{below: 99%, credit: 25%}, {below: 99.9%, credit: 10%}]}",
            #"sources[0].sla.credits[1].below: 99.9% is not below the tier before it (99%): list the tiers from the highest uptime down"#
        ),
        (
            "sla: {credits: [{below: 99.9%, credit: 25%}, {below: 99%, credit: 10%}]}",
            #"sources[0].sla.credits[1].credit: 10% is less than the tier before it (25%): a lower uptime earns at least as much"#
        ),
        ("sla: {credits: [{below: 99.9%}]}", #"sources[0].sla.credits[0].credit: is missing"#),
        ("sla: {claim_within: -1d}", #"sources[0].sla.claim_within: "-1d" must be above zero: the days after the period in which a claim can be filed"#),
        ("sla: {period: quarter}", #"sources[0].sla.period: "quarter" is not a period (use month or week)"#),
        (
            "sla: {time_zone: Mars/Olympus}",
            #"sources[0].sla.time_zone: "Mars/Olympus" is not a time zone this machine knows (use an IANA name such as Europe/Berlin, or UTC)"#
        ),
        ("sla: {exclude: [weekends]}", #"sources[0].sla.exclude[0]: "weekends" is not something to exclude (use maintenance or vendor_maintenance)"#),
        ("sla: {taget: 99%}", #"sources[0].sla.taget: unknown key "taget"; did you mean "target"?"#),
    ])
    func badValuesAreClearErrors(text: String, expected: String) {
        let yaml = "sources:\n  -\n    {name: a, url: \"http://127.0.0.1:1/a\", \(text)}\n"
        let error = #expect(throws: ConfigError.self) { try ConfigLoader.parse(yaml, file: "t.yml") }
        #expect(error?.problems.map(\.line) == [3])
        #expect(error?.problems.map { "\($0.path): \($0.message)" } == [expected])
    }
}

/// What the rules read of a source's SLA, and what they say: a missed period is told once with
/// its credit and deadline; a spent budget on a source that is up.
@Suite("SLA rules")
struct SLARuleTests {
    static let utc = TimeZone(identifier: "UTC")!

    func report(_ period: String, downMs: Int64, nowMs: Int64, settings: SLASettings) throws -> SLAReport {
        let bounds = try SLAPeriod(parsing: period).bounds(in: Self.utc)
        let outage = SLAOutage(
            startedMs: bounds.startMs + 86_400_000, endedMs: bounds.startMs + 86_400_000 + downMs, failedProbes: 10, category: "server_error",
            reason: "http_503")
        return SLAReport(
            source: "payments-api", settings: settings, period: try SLAPeriod(parsing: period), nowMs: nowMs, outages: [outage], unmeasured: Intervals(),
            excluded: Intervals())
    }

    @Test func aMissedPeriodAndASpentBudgetAreTold() throws {
        var sla = SLASettings()
        sla.target = 0.9995
        sla.credits = [.init(below: 0.9995, credit: 0.10), .init(below: 0.99, credit: 0.25)]
        var source = SourceConfig(name: "payments-api", url: "http://127.0.0.1:1/")
        source.sla = sla
        // 1 December 2026, 10:00 UTC: November had 1h 18m down (99.82 %); December 30 minutes so far.
        let now = try SLAPeriod(parsing: "2026-12").bounds(in: Self.utc).startMs + 2 * 86_400_000
        let november = try report("2026-11", downMs: 4_680_000, nowMs: now, settings: sla)
        let december = try report("2026-12", downMs: 1_800_000, nowMs: now, settings: sla)
        #expect(november.missedSentence == "payments-api: 99.8194% in November against 99.95% promised — a 10% credit; claim by 2027-01-30")
        let standing = SLAStanding(current: december, previous: november, nowMs: now)
        #expect(standing.missedSentence == november.missedSentence)
        #expect(standing.reportPath == "/sla?period=2026-11&source=payments-api")
        #expect(standing.budgetRemaining.map { $0 < 0 } == true)

        let registry = SourceRegistry(sources: [source])
        registry.record(ProbeResult(source: "payments-api", timestampMs: now, ok: true, httpStatus: 200))
        registry.setSLA(["payments-api": standing])
        var evaluator = AlertEvaluator(rules: AlertRule.defaults)
        _ = evaluator.evaluate(nowMs: now, AlertEvaluator.Inputs(registry.snapshot(nowMs: now)))
        let firing = Dictionary(uniqueKeysWithValues: evaluator.firing.map { ($0.rule, $0) })
        // Both fire on a source that is up, and say what they are.
        #expect(firing["SLAPeriodMissed"]?.annotations["summary"] == november.missedSentence)
        #expect(firing["SLAPeriodMissed"]?.annotations["description"]?.contains("/sla?period=2026-11&source=payments-api") == true)
        #expect(firing["SLABudgetExhausted"]?.annotations["summary"]?.hasPrefix("payments-api has used its 22m 19s of downtime for December") == true)
        #expect(firing["SourceDown"] == nil)
        // Past the claim deadline the missed period is no longer told.
        let late = SLAStanding(current: december, previous: november, nowMs: november.claimByMs + 1)
        #expect(late.missedSentence == nil)
    }
}
