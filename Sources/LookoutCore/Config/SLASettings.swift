import Foundation
import Yams

/// What a vendor promised for a source (`sla:`): the uptime a period must reach, the service
/// credits below it, what time does not count, and how long after the period a claim can be
/// made. Read in `defaults`, a group, or the source; each level overrides only the keys it gives.
package struct SLASettings: Sendable, Equatable {
    package enum Period: String, Sendable, CaseIterable {
        /// A calendar month in `timeZone`.
        case month
        /// Monday to Monday in `timeZone` (ISO weeks).
        case week
    }

    /// A tier of the credit schedule: uptime below `below` earns `credit` (both ratios).
    package struct Credit: Sendable, Equatable {
        package var below: Double
        package var credit: Double

        package init(below: Double, credit: Double) {
            self.below = below
            self.credit = credit
        }
    }

    /// Time left out of the measure.
    package enum Exclusion: String, Sendable, CaseIterable {
        /// Our own maintenance windows (config and admin API).
        case maintenance
        /// Maintenance the source's vendor announced on its status page (`vendor_status`), as
        /// Lookout read it while running.
        case vendorMaintenance = "vendor_maintenance"
    }

    /// The promised uptime, a ratio (0.9995 for `99.95%`).
    package var target: Double = 0.999
    package var period: Period = .month
    /// An IANA time zone: where the period's calendar is read (the vendor's billing zone).
    package var timeZone = "UTC"
    /// Lowest `below` last; empty: no credits promised.
    package var credits: [Credit] = []
    package var exclude: Set<Exclusion> = []
    /// How long after the period's end a claim can be filed; raw results of its outages are
    /// kept until then.
    package var claimWithin: Duration = .seconds(60 * 86_400)

    package init() {}

    /// The credit `uptime` earns: the tier with the lowest `below` it is under; nil above them all.
    package func credit(forUptime uptime: Double) -> Credit? {
        credits.last { uptime < $0.below }
    }

    /// `99.95%`, `100%`, `0%`: a ratio as a percentage, at most four decimals, no trailing zeros.
    package static func percent(_ ratio: Double) -> String {
        guard ratio.isFinite else { return "–" }
        var text = String(format: "%.4f", ratio * 100)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text + "%"
    }
}

extension SLASettings: ConfigReadable {
    enum Key: String, ConfigKey {
        case target, period, credits, exclude
        case timeZone = "time_zone"
        case claimWithin = "claim_within"
    }

    enum CreditKey: String, ConfigKey { case below, credit }

    mutating func read(_ fields: ConfigSection<Key>, _ reader: inout ConfigReader) {
        if let entry = fields[.target], let value = reader.percent(entry) { target = value }
        if let period: Period = reader.choice(fields[.period], "a period") { self.period = period }
        if let entry = fields[.timeZone], let text = reader.string(entry) {
            if TimeZone(identifier: text) == nil {
                reader.problem(entry, "\"\(text)\" is not a time zone this machine knows (use an IANA name such as Europe/Berlin, or UTC)")
            } else {
                timeZone = text
            }
        }
        if let entry = fields[.claimWithin] {
            if let text = entry.value.scalar?.string, text.hasPrefix("-") {
                reader.problem(entry, "\"\(text)\" must be above zero: the days after the period in which a claim can be filed")
            } else if let value = reader.duration(entry) {
                if value > .seconds(3 * 366 * 86_400) {
                    reader.problem(entry, "\(ConfigValues.format(value)) is too long (at most 3 years)")
                } else {
                    claimWithin = value
                }
            }
        }
        if let entry = fields[.exclude], let names = reader.strings(entry) {
            var exclude = Set<Exclusion>()
            for (index, name) in names.enumerated() {
                if let exclusion = Exclusion(rawValue: name) {
                    exclude.insert(exclusion)
                } else {
                    reader.problem(
                        entry.value.sequence?[index], "\(entry.path)[\(index)]",
                        "\"\(name)\" is not something to exclude (use \(Exclusion.allCases.map(\.rawValue).joined(separator: " or ")))")
                }
            }
            self.exclude = exclude
        }
        if let entry = fields[.credits] { readCredits(entry, &reader) }
    }

    /// `[{below: 99.95%, credit: 10%}, {below: 99%, credit: 25%}]`: each tier below the one
    /// before it and earning more.
    private mutating func readCredits(_ entry: ConfigEntry, _ reader: inout ConfigReader) {
        guard let list = reader.sequence(entry) else { return }
        var credits: [Credit] = []
        for (index, item) in list.enumerated() {
            let path = "\(entry.path)[\(index)]"
            guard let fields = reader.section(item, path, CreditKey.self) else { continue }
            guard reader.require(fields, .below), reader.require(fields, .credit) else { continue }
            guard let below = fields[.below].flatMap({ reader.percent($0) }), let credit = fields[.credit].flatMap({ reader.percent($0) }) else {
                continue
            }
            if let previous = credits.last {
                if below >= previous.below {
                    reader.problem(
                        item, "\(path).below",
                        "\(SLASettings.percent(below)) is not below the tier before it (\(SLASettings.percent(previous.below))): list the tiers from the highest uptime down"
                    )
                    continue
                }
                if credit < previous.credit {
                    reader.problem(
                        item, "\(path).credit",
                        "\(SLASettings.percent(credit)) is less than the tier before it (\(SLASettings.percent(previous.credit))): a lower uptime earns at least as much"
                    )
                    continue
                }
            }
            credits.append(Credit(below: below, credit: credit))
        }
        self.credits = credits
    }
}

extension ConfigReader {
    /// `sla: {…}` over what `sla` holds (the defaults' or a group's), or `sla: off`.
    mutating func readSLA(_ entry: ConfigEntry, into sla: inout SLASettings?) {
        if entry.value.scalar?.string == "off" {
            sla = nil
            return
        }
        var settings = sla ?? SLASettings()
        read(entry, into: &settings)
        sla = settings
    }

    /// `99.95%` (or a ratio such as `0.9995`) as a ratio from 0 to 1.
    mutating func percent(_ entry: ConfigEntry) -> Double? {
        guard let text = string(entry) else { return nil }
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let value: Double?
        if trimmed.hasSuffix("%") {
            // 99.99 / 100 is 0.9998999…: rounded to 12 places, the ratio the text means.
            value = Double(trimmed.dropLast().trimmingCharacters(in: .whitespaces)).map { ($0 / 100 * 1e12).rounded() / 1e12 }
        } else {
            value = Double(trimmed).flatMap { $0 <= 1 ? $0 : nil }
        }
        guard let value, value.isFinite else {
            problem(entry, "\"\(text)\" is not a percentage (use 99.95%, or a ratio such as 0.9995)")
            return nil
        }
        guard (0...1).contains(value) else {
            problem(entry, "\"\(text)\" must be from 0% to 100%")
            return nil
        }
        return value
    }
}
