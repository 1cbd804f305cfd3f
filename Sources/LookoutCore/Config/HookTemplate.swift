import Mustache

/// Mustache templates of a webhook's body and headers (swift-mustache), over the fields of a
/// grouped notification. Each string field `x` also comes as `x_json`, a quoted JSON string, for
/// JSON bodies: `{"text": {{{cause_json}}}}`.
///
/// A template is outside input: before the library parses it (its parser recurses once per
/// nested section, and a deep one overflowed the stack), its size and nesting are checked; before
/// it renders, the repetitions its nested list sections would make are counted, and its output is
/// capped, so a template can neither crash Lookout nor keep a core busy.
package enum HookTemplate {
    /// The longest template, in bytes.
    package static let maxBytes = 16_384
    /// The deepest nesting of sections (`{{#x}}`, `{{^x}}`).
    package static let maxDepth = 8
    /// The most times one rendering may repeat a section over a list (`{{#alerts}}` in
    /// `{{#alerts}}`… multiplies).
    package static let maxRepetitions = 100_000
    /// The largest rendered text, in bytes.
    package static let maxOutputBytes = 262_144

    /// Why `text` cannot be used ("unfinished name at template line 1, column 9", "sections
    /// nested 9 deep"); nil when it can.
    package static func problem(_ text: String) -> String? {
        if text.utf8.count > maxBytes { return "the template is \(text.utf8.count) bytes (at most \(maxBytes))" }
        switch outline(text) {
        case .failure(let problem): return problem.message
        case .success: break
        }
        do {
            _ = try MustacheTemplate(string: text)
            return nil
        } catch let error as MustacheTemplate.ParserError {
            return "the template does not compile: \(describe(error.error)) at template line \(error.context.lineNumber), column \(error.context.columnNumber)"
        } catch {
            return "the template does not compile: \(error)"
        }
    }

    static func describe(_ error: Error) -> String {
        guard let error = error as? MustacheTemplate.Error else { return "\(error)" }
        switch error {
        case .sectionCloseNameIncorrect: return "a section is closed with another name"
        case .unfinishedName: return "a tag is not closed ({{ without }})"
        case .expectedSectionEnd: return "a section is not closed ({{#x}} without {{/x}})"
        case .invalidSetDelimiter: return "an invalid set-delimiter tag"
        default: return "\(error)"
        }
    }

    /// Why a template cannot be used, from `outline`.
    package struct Problem: Error {
        package var message: String
    }

    /// A section and the sections inside it.
    struct Section {
        var name: String
        var children: [Section] = []
    }

    /// The tree of sections, read by a linear scan of `{{#name}}`, `{{^name}}` and `{{/name}}`
    /// without recursion; set-delimiter tags are refused (they would hide sections from it).
    static func outline(_ text: String) -> Result<[Section], Problem> {
        var stack: [Section] = [Section(name: "")]
        var rest = Substring(text)
        while let open = rest.range(of: "{{") {
            rest = rest[open.upperBound...]
            guard let close = rest.range(of: "}}") else { break }  // the parser says what is wrong
            let tag = rest[..<close.lowerBound]
            rest = rest[close.upperBound...]
            guard let kind = tag.first else { continue }
            let name = String(tag.dropFirst().trimmingCharacters(in: .whitespaces))
            switch kind {
            case "=":
                return .failure(Problem(message: "set-delimiter tags ({{=…=}}) are not supported in hook templates"))
            case "#", "^":
                guard stack.count <= maxDepth else {
                    return .failure(Problem(message: "sections are nested more than \(maxDepth) deep"))
                }
                stack.append(Section(name: name))
            case "/":
                guard stack.count > 1 else { continue }  // the parser says what is wrong
                let done = stack.removeLast()
                stack[stack.count - 1].children.append(done)
            default:
                continue
            }
        }
        return .success(stack[0].children)
    }

    /// How many times rendering `sections` over `fields` repeats a section at most: along each
    /// path of nested sections, the product of the lengths of the lists they name (a name is
    /// looked up in the fields and in a list's items, as Mustache looks it up in its context).
    static func repetitions(_ sections: [Section], _ fields: [String: Any]) -> Int {
        var lengths: [String: Int] = [:]
        func note(_ object: [String: Any]) {
            for (key, value) in object {
                guard let list = value as? [Any] else { continue }
                lengths[key] = max(lengths[key] ?? 0, list.count)
                for case let item as [String: Any] in list.prefix(100) { note(item) }
            }
        }
        note(fields)
        // Iterative, like the scan: (sections, repetitions so far) to visit.
        var worst = 1
        var pending: [([Section], Int)] = [(sections, 1)]
        while let (level, so) = pending.popLast() {
            for section in level {
                let times = so.multipliedClamped(max(1, lengths[section.name] ?? 1))
                worst = max(worst, times)
                if !section.children.isEmpty { pending.append((section.children, times)) }
            }
        }
        return worst
    }

    /// Renders `text` with `fields`, or says why not: a template that does not compile (checked
    /// at config time), one whose lists would repeat it more than `maxRepetitions` times, or an
    /// output over `maxOutputBytes`.
    package static func render(_ text: String, _ fields: [String: Any]) -> Result<String, Problem> {
        guard text.utf8.count <= maxBytes, case .success(let sections) = outline(text), let template = try? MustacheTemplate(string: text) else {
            return .failure(Problem(message: "the template cannot be used (check-config says why)"))
        }
        let times = repetitions(sections, fields)
        guard times <= maxRepetitions else {
            return .failure(Problem(message: "the template would repeat its sections \(times) times for these alerts (at most \(maxRepetitions))"))
        }
        let output = template.render(fields)
        guard output.utf8.count <= maxOutputBytes else {
            return .failure(Problem(message: "the template rendered \(output.utf8.count) bytes (at most \(maxOutputBytes))"))
        }
        return .success(output)
    }
}
