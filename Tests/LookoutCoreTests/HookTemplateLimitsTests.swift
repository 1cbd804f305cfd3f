import LookoutAlerting
import LookoutCore
import Testing

/// A hook template is outside input: too large, too deep or hidden behind set delimiters is a
/// config error found before the library parses it (its parser recursed per nesting level and
/// overflowed the stack); one whose lists would repeat it too often, or whose output is too large,
/// is not rendered.
@Suite("hook template limits")
struct HookTemplateLimitsTests {
    @Test(arguments: [9, 600, 5_000])
    func deepNestingIsAProblemNotACrash(_ depth: Int) {
        let text = String(repeating: "{{#a}}", count: depth) + String(repeating: "{{/a}}", count: depth)
        let problem = HookTemplate.problem(text)
        #expect(
            problem
                == (depth * 12 > HookTemplate.maxBytes
                    ? "the template is \(depth * 12) bytes (at most \(HookTemplate.maxBytes))"
                    : "sections are nested more than \(HookTemplate.maxDepth) deep"))
    }

    @Test func eightLevelsAndSetDelimitersAndSize() {
        let eight = String(repeating: "{{#a}}", count: 8) + "x" + String(repeating: "{{/a}}", count: 8)
        #expect(HookTemplate.problem(eight) == nil)
        #expect(HookTemplate.problem("{{=<% %>=}}<%#a%><%/a%>") == "set-delimiter tags ({{=…=}}) are not supported in hook templates")
        #expect(HookTemplate.problem(String(repeating: "x", count: HookTemplate.maxBytes + 1))?.hasPrefix("the template is 16385 bytes") == true)
        #expect(HookTemplate.problem("{{#a}}unclosed")?.hasPrefix("the template does not compile: a section is not closed") == true)
    }

    @Test func nestedListsOverTheBudgetAreNotRendered() {
        let alerts: [[String: Any]] = (0..<5).map { ["rule": "R\($0)"] }
        let fields: [String: Any] = ["alerts": alerts, "status": "firing"]
        // 5⁸ = 390,625 repetitions: refused before any work.
        let deep = String(repeating: "{{#alerts}}", count: 8) + "{{rule}}" + String(repeating: "{{/alerts}}", count: 8)
        guard case .failure(let problem) = HookTemplate.render(deep, fields) else {
            Issue.record("rendered")
            return
        }
        #expect(problem.message == "the template would repeat its sections 390625 times for these alerts (at most 100000)")
        // Two levels (25) render.
        let two = "{{#alerts}}{{#alerts}}{{rule}}{{/alerts}}{{/alerts}}"
        #expect((try? HookTemplate.render(two, fields).get())?.count == 50)
        // An output over the cap is refused.
        let big = String(repeating: "x", count: 20_000)
        let wide = "{{#alerts}}{{#alerts}}{{#alerts}}{{big}}{{/alerts}}{{/alerts}}{{/alerts}}"
        guard case .failure(let large) = HookTemplate.render(wide, fields.merging(["big": big]) { $1 }) else {
            Issue.record("rendered")
            return
        }
        #expect(large.message.hasPrefix("the template rendered 2500000 bytes"))
    }

    @Test func aConfigWithADeepTemplateIsRefusedWithItsPath() {
        let deep = String(repeating: "{{#a}}", count: 600) + String(repeating: "{{/a}}", count: 600)
        let yaml = """
            sources: [{name: a, url: "http://127.0.0.1:1/"}]
            alerts: {hooks: [{name: h, type: webhook, url: "http://127.0.0.1:1/", template: "\(deep)"}]}
            """
        let error = #expect(throws: ConfigError.self) { try ConfigLoader.parse(yaml, file: "t.yml", hooks: NotificationProviders.hookKinds) }
        #expect(error?.problems.map(\.path) == ["alerts.hooks[0].template"])
    }
}
