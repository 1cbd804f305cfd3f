import Foundation

/// Where a source stands against its SLA, as `/metrics` and the rules read it: this period so
/// far, and the last one once it has ended below its target (until the claim deadline).
package struct SLAStanding: Sendable, Equatable {
    /// This period's uptime so far; nil before anything was measured.
    package var uptime: Double?
    /// Of this period's downtime budget, what is left (≤ 0 once spent); nil with no budget and
    /// no downtime.
    package var budgetRemaining: Double?
    /// "payments-api has used its 21m 36s of downtime for November: …".
    package var budgetSentence: String
    package var target: Double
    /// The last period's uptime, once it has ended.
    package var previousUptime: Double?
    /// "payments-api: 99.82% in November against 99.95% promised — …", while the last period
    /// was missed and its claim window is open.
    package var missedSentence: String?
    /// Where the report of the period told is: `/sla?period=2026-11&source=NAME`.
    package var reportPath: String

    package init(current: SLAReport, previous: SLAReport?, nowMs: Int64) {
        uptime = current.uptime
        budgetRemaining = current.budgetRemainingRatio
        budgetSentence = current.budgetSentence
        target = current.settings.target
        previousUptime = previous?.uptime
        let missed = previous.flatMap { $0.complete && !$0.met && $0.uptime != nil && nowMs < $0.claimByMs ? $0 : nil }
        missedSentence = missed?.missedSentence
        let told = missed ?? current
        reportPath = "/sla?period=\(told.period)&source=\(current.source.addingPercentEncoding(withAllowedCharacters: SLAStanding.queryValue) ?? "")"
    }

    /// What a value in a link's query keeps as it is (RFC 3986's unreserved characters).
    package static let queryValue = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
}
