import LookoutCore
import Testing

/// `kind: flow` as the config reader takes it: steps, their `{{NAME}}` references checked against
/// what earlier steps capture, and what cannot work refused with its place.
@Suite("flow config")
struct FlowConfigTests {
    func problems(_ steps: String, finally: String = "") -> [String] {
        do {
            _ = try ConfigLoader.parse(
                "sources:\n  - name: f\n    kind: flow\n    steps:\n\(steps)\(finally.isEmpty ? "" : "\n    finally:\n\(finally)")\n", file: "t.yml",
                environment: ["PASSWORD": "hunter22"])
            return []
        } catch let error as ConfigError {
            return error.problems.map(\.description)
        } catch {
            return ["\(error)"]
        }
    }

    @Test func readsStepsCapturesAndReferences() throws {
        let config = try ConfigLoader.parse(
            """
            sources:
              - name: orders
                kind: flow
                steps:
                  - {name: login, url: "https://auth.test/token", method: POST, body: '{"password": "${PASSWORD}"}', capture: {token: {json: access_token}, id: {header: X-Session}}}
                  - {name: create, url: "https://api.test/orders?t={{token}}", method: put, headers: {Authorization: "Bearer {{token}}"}, expect: {status: [201]}, capture: {order: {regex: "order-([0-9]+)"}}}
                finally:
                  - {name: delete, url: "https://api.test/orders/{{order}}", method: DELETE}
            """, file: "t.yml", environment: ["PASSWORD": "hunter22"])
        let flow = try #require(config.sources.first?.flow)
        #expect(flow.steps.map(\.name) == ["login", "create"] && flow.finally.map(\.name) == ["delete"])
        #expect(flow.steps[0].body?.expanded([:]) == #"{"password": "hunter22"}"#)
        #expect(flow.steps[0].captures == [FlowCapture(name: "token", from: .json("access_token")), FlowCapture(name: "id", from: .header("X-Session"))])
        #expect(flow.steps[1].method == "PUT" && flow.steps[1].expect.statuses == [201])
        #expect(
            flow.steps[1].url.expanded(["token": "a b/c"], transform: { $0.replacingOccurrences(of: " ", with: "%20") }) == "https://api.test/orders?t=a%20b/c")
        #expect(flow.steps[1].headers.first?.value.names == ["token"])
        #expect(config.sources.first?.url == "flow://orders")
    }

    @Test(arguments: [
        (#"      - {name: a, url: "https://x.test/{{token}}"}"#, "", #"t.yml:5:24: sources[0].steps[0].url: {{token}} is not captured by an earlier step"#),
        (
            #"      - {name: a, url: "https://x.test/", headers: {Authorization: "Bearer {{token}}"}, capture: {token: {json: t}}}"#, "",
            "sources[0].steps[0].headers.Authorization: {{token}} is not captured by an earlier step"
        ),
        (#"      - {name: a, url: "https://x.test/{{token"}"#, "", "must be closed by \"}}\""),
        (#"      - {name: a, url: "https://x.test/", method: TRACE}"#, "", #""TRACE" is not supported (use GET, HEAD, POST, PUT, PATCH or DELETE)"#),
        (#"      - {name: a, url: "https://x.test/", capture: {t: {regex: "order-[0-9]+"}}}"#, "", "has no group"),
        (#"      - {name: a, url: "https://x.test/", capture: {t: {xpath: "/a"}}}"#, "", "capture one of {json: PATH}, {header: NAME} or {regex: PATTERN}"),
        (#"      - {name: a, url: "https://x.test/"}"#, #"      - {name: b, url: "https://x.test/{{nothing}}"}"#, "{{nothing}} is captured by no step"),
        (#"      - {name: a, url: "https://x.test/"}\#n      - {name: a, url: "https://x.test/"}"#, "", #""a" is already the name of a step"#),
        (#"      - {name: a, url: "not a url"}"#, "", "holds a space"),
    ])
    func refusesWhatCannotRun(_ steps: String, _ finally: String, _ message: String) {
        let found = problems(steps, finally: finally)
        #expect(found.contains { $0.contains(message) }, "\(found)")
    }

    @Test func aThousandStepsAreCutAtTheLimitWithOneProblem() {
        let steps = (0..<1000).map { #"      - {name: s\#($0), url: "https://x.test/"}"# }.joined(separator: "\n")
        let found = problems(steps)
        #expect(found.count == 1 && found.first?.contains("sources[0].steps[20]: a flow has at most 20 steps, finally included") == true, "\(found.prefix(3))")
    }

    @Test func aFlowNeedsStepsAndNoURL() {
        let noSteps = (try? ConfigLoader.parse("sources:\n  - {name: f, kind: flow}\n", file: "t.yml")) == nil
        #expect(noSteps)
        let withURL: [String] = {
            do {
                _ = try ConfigLoader.parse(
                    "sources:\n  - {name: f, kind: flow, url: \"https://x.test/\", steps: [{name: a, url: \"https://x.test/\"}]}\n", file: "t.yml")
                return []
            } catch let error as ConfigError { return error.problems.map(\.description) } catch { return [] }
        }()
        #expect(withURL.contains { $0.contains("a flow has no url of its own") }, "\(withURL)")
    }
}
