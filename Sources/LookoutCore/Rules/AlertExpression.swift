import Foundation

/// The small language of alert rule conditions, over Lookout's own measurements:
///
/// ```
/// error_rate[2m] > 0.5
/// retry_success_ratio < 0.5 and retries[15m] >= 10
/// burn_rate[1h] > 14.4 and burn_rate[5m] > 14.4
/// not up or breaker_open == 1
/// ```
/// `and`, `or`, `not`, parentheses, comparisons (`> >= < <= == !=`), numbers, and metrics with an
/// optional window in brackets. A metric without data makes its comparison unknown, and an
/// unknown condition keeps an alert as it is (see `verdict`): no data is not health.
package indirect enum AlertExpression: Sendable, Equatable {
    case number(Double)
    case metric(AlertMetric, window: Duration?)
    case compare(AlertExpression, Comparison, AlertExpression)
    case and(AlertExpression, AlertExpression)
    case or(AlertExpression, AlertExpression)
    case not(AlertExpression)

    package enum Comparison: String, Sendable, CaseIterable {
        case greater = ">"
        case greaterOrEqual = ">="
        case less = "<"
        case lessOrEqual = "<="
        case equal = "=="
        case notEqual = "!="
    }

    /// Whether the expression names a per-source metric.
    /// Every metric the expression reads.
    package var metrics: [AlertMetric] {
        switch self {
        case .number: return []
        case .metric(let metric, _): return [metric]
        case .compare(let a, _, let b), .and(let a, let b), .or(let a, let b): return a.metrics + b.metrics
        case .not(let a): return a.metrics
        }
    }

    package var perSource: Bool {
        switch self {
        case .number: return false
        case .metric(let metric, _): return metric.perSource
        case .compare(let a, _, let b), .and(let a, let b), .or(let a, let b): return a.perSource || b.perSource
        case .not(let a): return a.perSource
        }
    }

    /// Evaluates to a number (comparisons and logic give 1 or 0); nil when data is missing.
    package func value(_ lookup: (AlertMetric, Duration?) -> Double?) -> Double? {
        switch self {
        case .number(let value): return value
        case .metric(let metric, let window): return lookup(metric, window)
        case .compare(let a, let comparison, let b):
            guard let left = a.value(lookup), let right = b.value(lookup) else { return 0 }
            let holds: Bool
            switch comparison {
            case .greater: holds = left > right
            case .greaterOrEqual: holds = left >= right
            case .less: holds = left < right
            case .lessOrEqual: holds = left <= right
            case .equal: holds = abs(left - right) < 1e-9
            case .notEqual: holds = abs(left - right) >= 1e-9
            }
            return holds ? 1 : 0
        case .and(let a, let b): return (a.holds(lookup) && b.holds(lookup)) ? 1 : 0
        case .or(let a, let b): return (a.holds(lookup) || b.holds(lookup)) ? 1 : 0
        case .not(let a): return a.holds(lookup) ? 0 : 1
        }
    }

    package func holds(_ lookup: (AlertMetric, Duration?) -> Double?) -> Bool {
        verdict(lookup) == true
    }

    /// True, false, or nil when missing data decides it (three-valued: `false and unknown` is
    /// false, `true or unknown` is true). A source whose breaker holds calls back has no new
    /// samples; its alerts must neither resolve nor fire on that.
    package func verdict(_ lookup: (AlertMetric, Duration?) -> Double?) -> Bool? {
        switch self {
        case .number, .metric:
            return value(lookup).map { $0 != 0 }
        case .compare(let a, _, let b):
            guard a.value(lookup) != nil, b.value(lookup) != nil else { return nil }
            return (value(lookup) ?? 0) != 0
        case .and(let a, let b):
            let left = a.verdict(lookup)
            if left == false { return false }
            let right = b.verdict(lookup)
            if right == false { return false }
            return left == nil || right == nil ? nil : true
        case .or(let a, let b):
            let left = a.verdict(lookup)
            if left == true { return true }
            let right = b.verdict(lookup)
            if right == true { return true }
            return left == nil || right == nil ? nil : false
        case .not(let a):
            return a.verdict(lookup).map { !$0 }
        }
    }
}

/// What alert expressions can read, resolved when a rule is parsed (so evaluating 10,000
/// sources switches on a case instead of comparing names).
package enum AlertMetric: String, Sendable, CaseIterable {
    // Per source: a rule that names one fires per source.
    /// Failed probes ÷ probes over the window (default 5m).
    case errorRate = "error_rate"
    /// Probes over the window.
    case probes
    /// Failed probes over the window.
    case failures
    /// Calls retried over the window.
    case retries
    /// Retried calls that then succeeded ÷ retried calls over the window (default 15m).
    case retrySuccessRatio = "retry_success_ratio"
    /// 1 − error rate over the window (default 24h).
    case availability
    /// Error-budget burn over the window: error rate ÷ (1 − 0.999).
    case burnRate = "burn_rate"
    /// 1 when the last probe succeeded.
    case up
    /// 1 while the source is down: its failed probes opened an outage (`outage` policy: two
    /// failed probes in a row by default) and its successes have not ended it yet.
    case down
    /// 1 while the circuit breaker is open, half-open or forced open.
    case breakerOpen = "breaker_open"
    /// Times the breaker opened from closed over the window (default 15m): counted from the
    /// events, so a breaker that opens and closes between two evaluations still counts.
    case breakerOpens = "breaker_opens"
    /// 1 when the last probe was refused as plain http.
    case insecureBlocked = "insecure_blocked"
    /// Days until the TLS certificate the last probe saw expires (negative once it has); no
    /// value for a source without one.
    case certificateDaysLeft = "cert_days_left"
    /// Days until the registration of the source's domain expires (`domain_expiry`); no value
    /// when it is not watched or not known (an address, a registry without RDAP).
    case domainDaysLeft = "domain_days_left"
    /// Of this SLA period's downtime budget, the share left (≤ 0 once spent); no value for a
    /// source without an `sla`.
    case slaBudgetLeft = "sla_budget_left"
    /// 1 from the end of an SLA period below its target until its claim deadline; 0 otherwise.
    case slaPreviousMissed = "sla_previous_missed"
    /// 1 when a probe succeeded only after retries within the window (default 1m), counted as it
    /// happened: a recovery between two evaluations is not missed.
    case recoveredAfterRetries = "recovered_after_retries"
    // Across all sources.
    /// Share of sources whose last probe failed.
    case sourcesFailingRatio = "sources_failing_ratio"
    /// Share of sources whose breaker is open.
    case circuitsOpenRatio = "circuits_open_ratio"
    /// Share of the last 15 one-minute rounds in which some but not all sources failed.
    case partialFailureRatio = "partial_failure_ratio"
    /// 1 while Lookout itself is offline.
    case networkOffline = "network_offline"

    /// Whether a paging rule on it tells of an outage (and so fires only while the source is
    /// down); a certificate's days are told whatever the source's state.
    package var followsOutage: Bool {
        self != .certificateDaysLeft && self != .domainDaysLeft && self != .slaBudgetLeft && self != .slaPreviousMissed
    }

    /// Measured per source (otherwise across all sources).
    package var perSource: Bool {
        switch self {
        case .sourcesFailingRatio, .circuitsOpenRatio, .partialFailureRatio, .networkOffline: false
        default: true
        }
    }
}

/// A problem in an expression, at a character offset.
package struct AlertExpressionError: Error, Equatable, CustomStringConvertible {
    package var offset: Int
    package var message: String
    package var description: String { "at character \(offset + 1): \(message)" }
}

/// Parses `AlertExpression` text.
package struct AlertExpressionParser {
    private enum Token: Equatable {
        case number(Double)
        case identifier(String)
        case window(Duration)
        case comparison(AlertExpression.Comparison)
        case open, close, end
    }

    /// Brackets and `not`s nested deeper than this are refused: the parser recurses once per
    /// level, and a hostile config must not be able to exhaust the stack.
    package static let maxDepth = 64
    /// Expressions longer than this many tokens are refused (see `tokenize`).
    package static let maxTokens = 1000

    private var tokens: [(token: Token, offset: Int)] = []
    private var position = 0
    private var depth = 0

    package static func parse(_ text: String) throws(AlertExpressionError) -> AlertExpression {
        var parser = AlertExpressionParser()
        try parser.tokenize(Array(text))
        let expression = try parser.parseOr()
        guard parser.current.token == .end else {
            throw AlertExpressionError(offset: parser.current.offset, message: "unexpected text after the expression")
        }
        return expression
    }

    private var current: (token: Token, offset: Int) { tokens[position] }

    private mutating func tokenize(_ characters: [Character]) throws(AlertExpressionError) {
        var index = 0
        while index < characters.count {
            let character = characters[index]
            if character.isWhitespace {
                index += 1
            } else if character == "(" {
                tokens.append((.open, index))
                index += 1
            } else if character == ")" {
                tokens.append((.close, index))
                index += 1
            } else if character == "[" {
                guard let close = characters[index...].firstIndex(of: "]") else {
                    throw AlertExpressionError(offset: index, message: "\"[\" is not closed")
                }
                let text = String(characters[(index + 1)..<close])
                guard let duration = ConfigValues.duration(text), duration > .zero else {
                    throw AlertExpressionError(offset: index + 1, message: "\"\(text)\" is not a duration (use 5m, 1h)")
                }
                tokens.append((.window(duration), index))
                index = close + 1
            } else if "<>=!".contains(character) {
                let two = index + 1 < characters.count ? String(characters[index...(index + 1)]) : String(character)
                if let comparison = AlertExpression.Comparison(rawValue: two) {
                    tokens.append((.comparison(comparison), index))
                    index += 2
                } else if let comparison = AlertExpression.Comparison(rawValue: String(character)) {
                    tokens.append((.comparison(comparison), index))
                    index += 1
                } else {
                    throw AlertExpressionError(offset: index, message: "\"\(two)\" is not a comparison (use > >= < <= == !=)")
                }
            } else if character.isNumber || character == "." {
                var end = index
                while end < characters.count, characters[end].isNumber || characters[end] == "." { end += 1 }
                guard let value = Double(String(characters[index..<end])) else {
                    throw AlertExpressionError(offset: index, message: "\"\(String(characters[index..<end]))\" is not a number")
                }
                tokens.append((.number(value), index))
                index = end
            } else if character.isLetter || character == "_" {
                var end = index
                while end < characters.count, characters[end].isLetter || characters[end].isNumber || characters[end] == "_" { end += 1 }
                tokens.append((.identifier(String(characters[index..<end])), index))
                index = end
            } else {
                throw AlertExpressionError(offset: index, message: "unexpected \"\(character)\"")
            }
        }
        tokens.append((.end, characters.count))
        // Chains like `a and b and c …` nest to the left as they parse; bounding the tokens bounds
        // the tree that evaluation and deallocation walk recursively.
        guard tokens.count <= AlertExpressionParser.maxTokens else {
            throw AlertExpressionError(offset: tokens[AlertExpressionParser.maxTokens].offset, message: "longer than \(AlertExpressionParser.maxTokens) terms")
        }
    }

    private mutating func parseOr() throws(AlertExpressionError) -> AlertExpression {
        var left = try parseAnd()
        while current.token == .identifier("or") {
            position += 1
            left = .or(left, try parseAnd())
        }
        return left
    }

    private mutating func parseAnd() throws(AlertExpressionError) -> AlertExpression {
        var left = try parseUnary()
        while current.token == .identifier("and") {
            position += 1
            left = .and(left, try parseUnary())
        }
        return left
    }

    /// Counts one level of nesting for the duration of `body`.
    private mutating func nested<T>(at offset: Int, _ body: (inout Self) throws(AlertExpressionError) -> T) throws(AlertExpressionError) -> T {
        guard depth < AlertExpressionParser.maxDepth else {
            throw AlertExpressionError(offset: offset, message: "nested more than \(AlertExpressionParser.maxDepth) levels deep")
        }
        depth += 1
        defer { depth -= 1 }
        return try body(&self)
    }

    private mutating func parseUnary() throws(AlertExpressionError) -> AlertExpression {
        if current.token == .identifier("not") {
            let offset = current.offset
            position += 1
            return .not(try nested(at: offset) { parser throws(AlertExpressionError) in try parser.parseUnary() })
        }
        let left = try parseOperand()
        if case .comparison(let comparison) = current.token {
            position += 1
            return .compare(left, comparison, try parseOperand())
        }
        return left
    }

    private mutating func parseOperand() throws(AlertExpressionError) -> AlertExpression {
        let (token, offset) = current
        switch token {
        case .number(let value):
            position += 1
            return .number(value)
        case .open:
            position += 1
            let inner = try nested(at: offset) { parser throws(AlertExpressionError) in try parser.parseOr() }
            guard current.token == .close else { throw AlertExpressionError(offset: current.offset, message: "expected \")\"") }
            position += 1
            return inner
        case .identifier(let name) where !["and", "or", "not"].contains(name):
            guard let metric = AlertMetric(rawValue: name) else {
                var message = "unknown metric \"\(name)\""
                let known = AlertMetric.allCases.map(\.rawValue).sorted()
                if let suggestion = ConfigReader.suggestion(for: name, among: known) { message += "; did you mean \"\(suggestion)\"?" }
                throw AlertExpressionError(offset: offset, message: message)
            }
            position += 1
            if case .window(let window) = current.token {
                position += 1
                return .metric(metric, window: window)
            }
            return .metric(metric, window: nil)
        case .end:
            throw AlertExpressionError(offset: offset, message: "the expression ends too early")
        default:
            throw AlertExpressionError(offset: offset, message: "expected a number, a metric or \"(\"")
        }
    }
}
