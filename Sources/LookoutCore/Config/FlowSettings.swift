import Foundation
import ResilientHTTP
import Yams

/// A text in which `{{NAME}}` stands for what an earlier step of a flow captured.
package struct FlowTemplate: Sendable, Equatable {
    package enum Part: Sendable, Equatable {
        case text(String)
        case value(String)
    }

    package var parts: [Part]

    /// The names it refers to.
    package var names: [String] {
        parts.compactMap { if case .value(let name) = $0 { name } else { nil } }
    }

    /// Reads `{{NAME}}` references out of `text`; nil for an unclosed `{{` or a name that is not
    /// letters, digits and `_`.
    package init?(_ text: String) {
        var parts: [Part] = []
        var rest = Substring(text)
        while let open = rest.range(of: "{{") {
            if open.lowerBound > rest.startIndex { parts.append(.text(String(rest[..<open.lowerBound]))) }
            guard let close = rest[open.upperBound...].range(of: "}}") else { return nil }
            let name = rest[open.upperBound..<close.lowerBound].trimmingCharacters(in: .whitespaces)
            guard !name.isEmpty, name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }) else { return nil }
            parts.append(.value(name))
            rest = rest[close.upperBound...]
        }
        if !rest.isEmpty { parts.append(.text(String(rest))) }
        self.parts = parts
    }

    /// The text with each reference replaced by its value (`transform` applied to it, e.g.
    /// percent-encoding in a URL); nil when a value is missing.
    package func expanded(_ values: [String: String], transform: (String) -> String = { $0 }) -> String? {
        var out = ""
        for part in parts {
            switch part {
            case .text(let text): out += text
            case .value(let name):
                guard let value = values[name] else { return nil }
                out += transform(value)
            }
        }
        return out
    }
}

/// One request of a flow: what a source's request may say, with `{{NAME}}` in its URL, headers
/// and body, what its answer must be, and what to capture from it for the next steps.
package struct FlowStep: Sendable, Equatable {
    package var name: String
    package var url: FlowTemplate
    package var method = "GET"
    package var headers: [(name: String, value: FlowTemplate)] = []
    package var body: FlowTemplate?
    package var expect = Expectations()
    package var captures: [FlowCapture] = []

    package static func == (lhs: FlowStep, rhs: FlowStep) -> Bool {
        lhs.name == rhs.name && lhs.url == rhs.url && lhs.method == rhs.method && lhs.body == rhs.body && lhs.expect == rhs.expect
            && lhs.captures == rhs.captures && lhs.headers.map(\.name) == rhs.headers.map(\.name) && lhs.headers.map(\.value) == rhs.headers.map(\.value)
    }
}

/// A value a step takes from its answer, by `json` path, `header` or `regex` (its first group).
package struct FlowCapture: Sendable, Equatable {
    package enum From: Sendable, Equatable {
        case json(String)
        case header(String)
        case regex(String)
    }

    package var name: String
    package var from: From

    package init(name: String, from: From) {
        self.name = name
        self.from = from
    }
}

/// `kind: flow`: steps run in order, each only if the ones before passed, then `finally`, run
/// whatever happened (a clean-up).
package struct FlowSettings: Sendable, Equatable {
    package var steps: [FlowStep] = []
    package var finally: [FlowStep] = []

    /// The most steps a flow may have, `finally` included: each is a request per probe.
    package static let maxSteps = 20
}

extension ConfigReader {
    enum FlowStepKey: String, ConfigKey {
        case name, url, method, headers, body, expect, capture
    }

    /// `steps` and `finally` of a flow source. A `{{NAME}}` must be captured by an earlier step
    /// (any step, for `finally`): a reference to nothing is an error with its place.
    mutating func readFlow(_ own: ConfigSection<SourceConfig.Key>, into source: inout SourceConfig) {
        if let entry = own[.url] { problem(entry, "a flow has no url of its own: each step has one") }
        source.url = "flow://\(source.name)"
        guard let stepsEntry = own[.steps] else {
            problem(own.node, own.path, "a flow needs steps: a list of requests, each with a name and a url")
            return
        }
        var flow = FlowSettings()
        var captured: Set<String> = []
        var names: Set<String> = []
        func readList(_ entry: ConfigEntry, finally: Bool) -> [FlowStep] {
            guard let list = sequence(entry) else { return [] }
            var steps: [FlowStep] = []
            for (index, item) in list.enumerated() {
                let path = "\(entry.path)[\(index)]"
                guard flow.steps.count + steps.count < FlowSettings.maxSteps else {
                    problem(item, path, "a flow has at most \(FlowSettings.maxSteps) steps, finally included")
                    break
                }
                guard let step = readStep(item, path, captured: finally ? nil : captured) else { continue }
                if names.contains(step.name) { problem(item, "\(path).name", "\"\(step.name)\" is already the name of a step") }
                names.insert(step.name)
                for capture in step.captures { captured.insert(capture.name) }
                steps.append(step)
            }
            return steps
        }
        flow.steps = readList(stepsEntry, finally: false)
        if flow.steps.isEmpty, sequence(stepsEntry)?.isEmpty == true { problem(stepsEntry, "must list at least one step") }
        if let entry = own[.finally] {
            flow.finally = readList(entry, finally: true)
            // A finally step may use what any step captured; one that was never captured leaves
            // that step out at run time.
            for (index, step) in flow.finally.enumerated() {
                let refs = step.url.names + step.headers.flatMap(\.value.names) + (step.body?.names ?? [])
                for name in refs where !captured.contains(name) {
                    problem(entry.value, "\(entry.path)[\(index)]", "{{\(name)}} is captured by no step")
                }
            }
        }
        source.flow = flow
    }

    private mutating func readStep(_ node: Node, _ path: String, captured: Set<String>?) -> FlowStep? {
        guard let fields = section(node, path, FlowStepKey.self) else { return nil }
        guard let name = string(fields[.name]) else {
            require(fields, .name)
            return nil
        }
        func template(_ raw: String, _ node: Node, _ path: String) -> FlowTemplate? {
            guard let text = expandingEnvironment(raw, node, path) else { return nil }
            guard let parsed = FlowTemplate(text) else {
                problem(node, path, "\"{{\" must be closed by \"}}\" around a name of letters, digits and _")
                return nil
            }
            if let captured {
                for reference in parsed.names where !captured.contains(reference) {
                    problem(node, path, "{{\(reference)}} is not captured by an earlier step")
                }
            }
            return parsed
        }
        func template(_ entry: ConfigEntry?) -> FlowTemplate? {
            guard let entry, let raw = string(entry) else { return nil }
            return template(raw, entry.value, entry.path)
        }
        guard require(fields, .url), let url = template(fields[.url]) else { return nil }
        if let probe = url.expanded(Dictionary(uniqueKeysWithValues: url.names.map { ($0, "x") })), ProbeURL.problem(probe) != nil,
            let entry = fields[.url]
        {
            problem(entry, ProbeURL.problem(probe) ?? "")
        }
        var step = FlowStep(name: name, url: url)
        if let entry = fields[.method], let value = string(entry) {
            let method = value.uppercased()
            if ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"].contains(method) {
                step.method = method
            } else {
                problem(entry, "\"\(value)\" is not supported (use GET, HEAD, POST, PUT, PATCH or DELETE)")
            }
        }
        if let entry = fields[.headers], let values = stringMap(entry) {
            for name in values.keys.sorted() {
                guard let raw = values[name] else { continue }
                if let value = template(raw, entry.value, "\(entry.path).\(name)") { step.headers.append((name, value)) }
            }
        }
        step.body = template(fields[.body])
        read(fields[.expect], into: &step.expect)
        if let entry = fields[.capture], let map = entry.value.mapping {
            for (key, value) in map {
                guard let captureName = key.scalar?.string else { continue }
                let capturePath = "\(entry.path).\(captureName)"
                guard captureName.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }), !captureName.isEmpty else {
                    problem(key, capturePath, "a capture's name is letters, digits and _")
                    continue
                }
                guard let how = mapping(value, capturePath, known: ["json", "header", "regex"]), how.count == 1, let (kind, found) = how.first,
                    let text = string(found.value, "\(capturePath).\(kind)")
                else {
                    problem(value, capturePath, "capture one of {json: PATH}, {header: NAME} or {regex: PATTERN}")
                    continue
                }
                switch kind {
                case "json": step.captures.append(FlowCapture(name: captureName, from: .json(text)))
                case "header": step.captures.append(FlowCapture(name: captureName, from: .header(text)))
                default:
                    if let pattern = pattern(found.value, "\(capturePath).regex") {
                        if RegexCache.regex(pattern)?.groupCount == 0 {
                            problem(found.value, "\(capturePath).regex", "has no group: the first group, ( … ), is what is captured")
                        } else {
                            step.captures.append(FlowCapture(name: captureName, from: .regex(pattern)))
                        }
                    }
                }
            }
        } else if let entry = fields[.capture] {
            problem(entry, "must be a mapping of names to {json: PATH}, {header: NAME} or {regex: PATTERN}")
        }
        return step
    }
}
