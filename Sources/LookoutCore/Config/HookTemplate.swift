import Mustache

/// Mustache templates of a webhook's body and headers (swift-mustache), over the fields of a
/// grouped notification. Each string field `x` also comes as `x_json`, a quoted JSON string, for
/// JSON bodies: `{"text": {{{cause_json}}}}`.
package enum HookTemplate {
    /// Why `text` does not compile ("unfinished name at template line 1, column 9"); nil when it does.
    package static func problem(_ text: String) -> String? {
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

    /// Renders `text` with `fields`; a template that does not compile (checked at config time)
    /// renders as nothing.
    package static func render(_ text: String, _ fields: [String: Any]) -> String {
        (try? MustacheTemplate(string: text))?.render(fields) ?? ""
    }
}
