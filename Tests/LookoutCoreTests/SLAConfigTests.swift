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
        ("sla: {exclude: [weekends]}", #"sources[0].sla.exclude[0]: "weekends" is not something to exclude (use maintenance)"#),
        ("sla: {taget: 99%}", #"sources[0].sla.taget: unknown key "taget"; did you mean "target"?"#),
    ])
    func badValuesAreClearErrors(text: String, expected: String) {
        let yaml = "sources:\n  -\n    {name: a, url: \"http://127.0.0.1:1/a\", \(text)}\n"
        let error = #expect(throws: ConfigError.self) { try ConfigLoader.parse(yaml, file: "t.yml") }
        #expect(error?.problems.map(\.line) == [3])
        #expect(error?.problems.map { "\($0.path): \($0.message)" } == [expected])
    }
}
