import CronSchedule
import Foundation
import Yams

/// A push source's settings (`kind: push`): when its job must call in — every `expect_every`, or
/// on a cron `schedule` read in `time_zone` — how late it may be (`grace`), and the token its
/// calls carry in the URL (`/push/TOKEN`).
package struct PushSettings: Sendable, Equatable {
    package var expectEvery: Duration?
    /// `expect_every` as written ("24h"), for what a late job's cause says.
    package var expectEveryText: String?
    package var schedule: CronSchedule?
    package var timeZone = "UTC"
    /// Nil: the default, 10 % of the expected period between 1 minute and 1 hour.
    package var grace: Duration?
    /// A secret: never logged, shown or stored.
    package var token: String

    package init(expectEvery: Duration? = nil, schedule: CronSchedule? = nil, timeZone: String = "UTC", grace: Duration? = nil, token: String) {
        self.expectEvery = expectEvery
        self.schedule = schedule
        self.timeZone = timeZone
        self.grace = grace
        self.token = token
    }

    /// The shortest token taken: a guessable one would let anyone report the job's runs.
    package static let minTokenLength = 16

    /// `grace` as given, or 10 % of `period` between 1 minute and 1 hour.
    package func grace(forPeriod period: Duration) -> Duration {
        grace ?? min(.seconds(3600), max(.seconds(60), period / 10))
    }

    /// When the job is late, and in words why it was expected, given its last success at
    /// `lastMs` (or, never having called, Lookout's start): `expect_every` or the schedule's next
    /// run after it, plus the grace.
    package func deadline(afterMs lastMs: Int64) -> (ms: Int64, expected: String) {
        if let every = expectEvery {
            let grace = grace(forPeriod: every)
            return (
                lastMs.addingClamped(every.totalMilliseconds).addingClamped(grace.totalMilliseconds),
                "expected every \(expectEveryText ?? ConfigValues.format(every)), grace \(ConfigValues.format(grace))"
            )
        }
        guard let schedule, let zone = TimeZone(identifier: timeZone) else { return (Int64.max, "") }
        let last = Date(timeIntervalSince1970: Double(lastMs) / 1000)
        guard let next = schedule.next(after: last, in: zone) else { return (Int64.max, "") }
        let after = schedule.next(after: next, in: zone) ?? next.addingTimeInterval(86_400)
        let grace = grace(forPeriod: .milliseconds(Int64(after.timeIntervalSince(next) * 1000)))
        let nextMs = Int64(clamping: Int64((next.timeIntervalSince1970 * 1000).rounded()))
        return (nextMs.addingClamped(grace.totalMilliseconds), "expected \"\(schedule)\" \(timeZone), grace \(ConfigValues.format(grace))")
    }
}

extension ConfigReader {
    /// A push source's keys: `expect_every` or `schedule` (with `time_zone`), `grace`, and the
    /// token as `token: "${ENV}"` or `token_file`. A push source has no `url`: its job calls in.
    mutating func readPush(_ own: ConfigSection<SourceConfig.Key>, into source: inout SourceConfig) {
        if let entry = own[.url] { problem(entry, "a push source has no url: its job calls Lookout at /push/TOKEN") }
        source.url = "push://\(source.name)"
        let every = duration(own[.expectEvery])
        var schedule: CronSchedule?
        if let entry = own[.schedule], let text = string(entry) {
            do throws(CronSchedule.ParseError) {
                schedule = try CronSchedule(text)
            } catch {
                problem(entry, "\(error)")
            }
        }
        switch (own[.expectEvery], own[.schedule]) {
        case (nil, nil): problem(own.node, own.path, "a push source needs expect_every (e.g. 24h) or schedule (e.g. \"0 3 * * *\")")
        case (.some, .some(let entry)): problem(entry, "give expect_every or schedule, not both")
        default: break
        }
        var timeZone = "UTC"
        if let entry = own[.timeZone], let text = string(entry) {
            if TimeZone(identifier: text) == nil {
                problem(entry, "\"\(text)\" is not a time zone (use an IANA name, e.g. Europe/Berlin)")
            } else if own[.schedule] == nil {
                problem(entry, "only applies with schedule")
            } else {
                timeZone = text
            }
        }
        let grace = duration(own[.grace], zeroAllowed: true)
        let token = secret(own, inline: .token, file: .tokenFile)
        if own[.token] == nil && own[.tokenFile] == nil {
            problem(own.node, own.path, "a push source needs token_file or token: \"${ENV}\" (at least \(PushSettings.minTokenLength) characters)")
        }
        if let token, token.count < PushSettings.minTokenLength || !token.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) {
            let entry = own[.tokenFile] ?? own[.token]
            problem(
                entry?.value ?? own.node, entry?.path ?? own.path,
                "the token must be at least \(PushSettings.minTokenLength) letters, digits, '-' or '_' (it goes in a URL; e.g. openssl rand -hex 16)")
        }
        guard let token else { return }
        source.push = PushSettings(expectEvery: every, schedule: schedule, timeZone: timeZone, grace: grace, token: token)
        source.push?.expectEveryText = own[.expectEvery].flatMap { $0.value.scalar?.string }
    }
}
