import Foundation
import ResilientHTTP

extension SourceKind {
    package static let flow = SourceKind(declaring: "flow")
}

/// What one step of a flow did, for the API, the page and `lookout probe --source`.
package struct FlowStepOutcome: Sendable, Equatable {
    package var name: String
    package var isFinally: Bool
    /// nil: not run (an earlier step failed, or a value it needs was never captured).
    package var ok: Bool?
    package var httpStatus: Int?
    package var seconds: Double
    /// The failure's reason, when it failed.
    package var reason: String?
}

/// `kind: flow`: several requests in order — log in, call with the token, check the answer —
/// then `finally`, a clean-up run whatever happened. Each step goes through the resilient client
/// with the source's policies; `{{NAME}}` stands for what an earlier step captured (a JSON path, a
/// header, a regex's first group), and cookies one step is given go with the next. One run is
/// one probe; a failure names its step. Captured values are secrets: never stored, logged or
/// shown, and taken out of what an upstream's answer says before it is kept.
package enum FlowProber: Prober {
    package static let kind = SourceKind.flow
    package static let summary = "steps of requests in order, each with its expectations and captures, then finally"
    package static let ownKeys = ["steps", "finally"]
    package static let isHTTPRequest = false

    package static func urlProblem(_ url: String) -> String? {
        "a flow has no url of its own: each step has one"
    }

    /// What one run knows as it goes: the captured values and the cookies.
    struct Run {
        var values: [String: String] = [:]
        var cookies: [(name: String, value: String)] = []
        var outcomes: [FlowStepOutcome] = []
        var failure: Failure?
        var bytes = 0
    }

    package static func probe(_ source: SourceConfig, with prober: SourceProber, breakerCountsFailures: Bool) async -> ProbeResult {
        let startedMs = Timestamp.nowMs()
        let started = ContinuousClock.now
        guard let flow = source.flow else {
            return ProbeResult(source: source.name, timestampMs: startedMs, ok: false, failure: Failure(category: .clientError, reason: "flow_unconfigured"))
        }
        var run = Run()
        let total = flow.steps.count
        for (index, step) in flow.steps.enumerated() {
            guard run.failure == nil else {
                run.outcomes.append(FlowStepOutcome(name: step.name, isFinally: false, ok: nil, seconds: 0))
                continue
            }
            await perform(step, context: "step \(index + 1) of \(total), \(step.name)", isFinally: false, source, prober, breakerCountsFailures, &run)
        }
        for step in flow.finally {
            await perform(step, context: "finally, \(step.name)", isFinally: true, source, prober, breakerCountsFailures, &run)
        }
        let elapsed = ContinuousClock.now - started
        var result = ProbeResult(source: source.name, timestampMs: startedMs, ok: run.failure == nil, failure: run.failure)
        result.durationSeconds = elapsed.seconds
        result.bytes = run.bytes
        if run.failure == nil { result.attemptSeconds = elapsed.seconds }
        result.httpStatus = run.failure?.httpStatus
        result.callKind = run.failure == nil ? .successfulWithoutRetry : .failedWithoutRetry
        result.steps = run.outcomes
        return result
    }

    /// Runs one step and records what it did in `run`; a failure is kept only if it is the first.
    static func perform(
        _ step: FlowStep, context: String, isFinally: Bool, _ source: SourceConfig, _ prober: SourceProber, _ breakerCountsFailures: Bool,
        _ run: inout Run
    ) async {
        guard let url = step.url.expanded(run.values, transform: percentEncoded),
            let body = step.body.map({ $0.expanded(run.values) }) ?? .some(nil)
        else {
            // Only a finally step can get here: what it needs was never captured.
            run.outcomes.append(FlowStepOutcome(name: step.name, isFinally: isFinally, ok: nil, seconds: 0))
            return
        }
        var headers: [(name: String, value: String)] = []
        for (name, template) in step.headers {
            guard let value = template.expanded(run.values) else {
                run.outcomes.append(FlowStepOutcome(name: step.name, isFinally: isFinally, ok: nil, seconds: 0))
                return
            }
            headers.append((name, value))
        }
        if !run.cookies.isEmpty, !headers.contains(where: { $0.name.lowercased() == "cookie" }) {
            headers.append(("Cookie", run.cookies.map { "\($0.name)=\($0.value)" }.joined(separator: "; ")))
        }
        var transfer = TransferRequest(url: url, method: step.method, headers: headers, timeout: source.timeout)
        transfer.body = body.map { Array($0.utf8) }
        transfer.caFile = source.caFile
        transfer.forwardHeadersOnRedirect = source.forwardHeadersOnRedirect
        var request = CallRequest(
            transfer, acceptedStatuses: step.expect.statuses, deadline: SourceProber.deadline(for: source), validate: validator(for: step))
        request.breakerTrial = true
        request.secrets = Array(run.values.values)
        let outcome = await prober.client.call(upstream: source.name, request, breakerCountsFailures: breakerCountsFailures)
        run.bytes += outcome.final?.bodyBytes ?? 0
        var failure = outcome.failure
        if failure == nil, let final = outcome.final {
            keepCookies(final, into: &run.cookies)
            for capture in step.captures {
                guard let value = captured(capture, from: final) else {
                    failure = Failure(
                        category: .invalidResponse, reason: "capture_missing", httpStatus: final.httpStatus,
                        detail: "the capture \(capture.name) found nothing (\(describe(capture.from)))")
                    break
                }
                run.values[capture.name] = value
            }
        }
        let status = outcome.final?.httpStatus
        run.outcomes.append(
            FlowStepOutcome(
                name: step.name, isFinally: isFinally, ok: failure == nil, httpStatus: status, seconds: outcome.durationSeconds, reason: failure?.reason))
        if var failure, run.failure == nil {
            failure.context = context
            // A flow's credentials come from its steps, not from the source's auth.
            if failure.detail == Failure.noCredentials { failure.detail = "" }
            run.failure = failure.hiding(Array(run.values.values))
        }
    }

    /// The step's expectations on an answer its status accepts: latency, body text, JSON.
    static func validator(for step: FlowStep) -> (@Sendable (TransferResult) -> Failure?)? {
        let expect = step.expect
        let wantsJSON = expect.jsonPath != nil || step.captures.contains { if case .json = $0.from { true } else { false } }
        if expect.maxLatency == nil && expect.bodyContains == nil && !wantsJSON { return nil }
        return { result in
            if let failure = expect.sharedCheck(result) { return failure }
            if wantsJSON, var failure = JSONProber.json(result.body, assertion: expect.jsonPath) {
                failure.httpStatus = result.httpStatus
                return failure
            }
            return nil
        }
    }

    package static func captured(_ capture: FlowCapture, from result: TransferResult) -> String? {
        let value: String?
        switch capture.from {
        case .header(let name): value = result.header(name)
        case .json(let path):
            guard let document = try? JSONSerialization.jsonObject(with: Data(result.body), options: [.fragmentsAllowed]),
                let found = JSONPathCheck.lookup(path, in: document), !(found is NSNull), !(found is [Any]), !(found is [String: Any])
            else { return nil }
            value = JSONPathCheck.text(found)
        case .regex(let pattern): value = RegexCache.regex(pattern)?.firstMatch(in: result.bodyText)?[1].map(String.init)
        }
        guard let value, !value.isEmpty else { return nil }
        return value
    }

    static func describe(_ from: FlowCapture.From) -> String {
        switch from {
        case .json(let path): "json \(path)"
        case .header(let name): "header \(name)"
        case .regex(let pattern): "regex \(pattern)"
        }
    }

    /// `Set-Cookie`'s name and value, kept for the next steps (a later one replaces an earlier).
    package static func keepCookies(_ result: TransferResult, into cookies: inout [(name: String, value: String)]) {
        for header in result.headers where header.name.lowercased() == "set-cookie" {
            let pair = header.value.split(separator: ";", maxSplits: 1).first.map(String.init) ?? ""
            guard let equals = pair.firstIndex(of: "=") else { continue }
            let name = pair[..<equals].trimmingCharacters(in: .whitespaces)
            guard !name.isEmpty else { continue }
            cookies.removeAll { $0.name == name }
            cookies.append((name, String(pair[pair.index(after: equals)...]).trimmingCharacters(in: .whitespaces)))
        }
    }

    /// A value in a URL's path or query, percent-encoded so it stays one part of it.
    static func percentEncoded(_ value: String) -> String {
        value.addingPercentEncoding(withAllowedCharacters: .urlUnreservedCharacters) ?? value
    }
}

extension CharacterSet {
    /// RFC 3986's unreserved characters.
    static let urlUnreservedCharacters = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
}
