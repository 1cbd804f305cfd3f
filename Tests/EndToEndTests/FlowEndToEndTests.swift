import Foundation
import ResilientHTTP
import TestSupport
import Testing

/// `kind: flow` through the real binary against lookout-sim's API behind a login: a token
/// endpoint, an API that checks the token and sets a cookie, and a DELETE that must be called.
@Suite("flows end to end", .serialized)
struct FlowEndToEndTests {
    let http = CurlTransport()

    /// A flow source, one step a line: log in, then `middle`, then (unless `cleanUp` is false)
    /// delete the order.
    func flow(_ name: String, _ sim: String, _ middle: [String], cleanUp: Bool = true) -> String {
        let login =
            #"{name: login, url: "\#(sim)/oauth/token", method: POST, headers: {Content-Type: application/x-www-form-urlencoded}, body: "grant_type=client_credentials&client_secret=s3cret", capture: {token: {json: access_token}}}"#
        var lines = ["  - name: \(name)", "    kind: flow", "    steps:", "      - \(login)"] + middle.map { "      - \($0)" }
        if cleanUp {
            lines += [
                "    finally:",
                #"      - {name: delete-order, url: "\#(sim)/orders/{{order}}", method: DELETE, headers: {Authorization: "Bearer {{token}}"}, expect: {status: 204}}"#,
            ]
        }
        return lines.joined(separator: "\n")
    }

    func createOrder(_ sim: String, query: String = "") -> String {
        #"{name: create-order, url: "\#(sim)/orders\#(query)", method: POST, headers: {Authorization: "Bearer {{token}}"}, body: '{"sku": "probe-item"}', expect: {status: [201], json_path: {path: id, exists: true}}, capture: {order: {json: id}}}"#
    }

    func descriptions(_ simBase: String) async throws -> [String: String] {
        var found: [String: String] = [:]
        for entry in try await simulatorWebhookLog(simBase) {
            guard let payload = entry["payload"] as? [String: Any], let alert = (payload["alerts"] as? [[String: Any]])?.first,
                let labels = alert["labels"] as? [String: String], labels["alertname"] == "SourceDown", alert["status"] as? String == "firing",
                let source = labels["source"]
            else { continue }
            found[source] = (alert["annotations"] as? [String: String])?["description"]
        }
        return found
    }

    @Test func stepsRunInOrderNameTheirFailuresAndKeepNoCapturedValue() async throws {
        let directory = try makeTemporaryDirectory("flow")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (sim, simBase) = try await startSimulator()
        let config = try writeLookoutConfig(
            in: directory,
            """
            defaults: {interval: 500ms, timeout: 5s, outage: {failure_threshold: 1}}
            sources:
            \(flow("orders", simBase, [createOrder(simBase)]))
            \(flow("broken-check", simBase, [createOrder(simBase), "{name: check, url: \"\(simBase)/status/500\"}"]))
            \(flow("rejected", simBase, [createOrder(simBase, query: "?reject=1")]))
            \(flow("no-capture", simBase, ["{name: whoami, url: \"\(simBase)/ok\", capture: {user: {json: user.name}}}"], cleanUp: false))
            alerts:
              evaluation_interval: 200ms
              hooks:
                - {name: chat, type: webhook, url: "\(simBase)/webhook", group_wait: 0s}
            """)
        let (lookout, base) = try await startLookout(config: config)
        let told = try await eventually("every failing flow told") { () -> [String: String]? in
            let found = try await descriptions(simBase)
            return ["broken-check", "rejected", "no-capture"].allSatisfy { found[$0] != nil } ? found : nil
        }
        #expect(told["orders"] == nil, "a flow that works is not down: \(told)")
        #expect(
            told["rejected"]?.contains("step 2 of 2, create-order: the server answered 401. The server said: token expired") == true,
            "\(told["rejected"] ?? "")")
        #expect(told["broken-check"]?.contains("step 3 of 3, check: the server answered 500") == true, "\(told["broken-check"] ?? "")")
        #expect(
            told["no-capture"]?.contains("step 2 of 2, whoami: the capture user found nothing (json user.name)") == true, "\(told["no-capture"] ?? "")")
        // Each step's outcome, never what it captured.
        let orders = try #require(
            try JSONSerialization.jsonObject(with: Data(await http.perform(TransferRequest(url: "\(base)/api/v1/sources/orders", timeout: .patient)).body))
                as? [String: Any])
        let last = try #require((orders["source"] as? [String: Any])?["last_result"] as? [String: Any], "\(orders)")
        #expect(last["ok"] as? Bool == true)
        let stepsShown = try #require(last["steps"] as? [[String: Any]])
        #expect(stepsShown.map { $0["name"] as? String } == ["login", "create-order", "delete-order"])
        #expect(stepsShown.map { $0["outcome"] as? String } == ["passed", "passed", "passed"])
        // The clean-up ran after the working flow and after the failed check, with the cookie
        // the order set (the simulator refuses a DELETE without it).
        let counters = try #require(
            try JSONSerialization.jsonObject(with: Data(await http.perform(TransferRequest(url: "\(simBase)/counters", timeout: .patient)).body))
                as? [String: Int])
        #expect(counters.keys.filter { $0.hasPrefix("/orders/order-") }.count >= 2, "\(counters)")
        // The on-call page and lookout status say what each step did.
        let page = await http.perform(TransferRequest(url: "\(base)/", timeout: .patient)).bodyText
        #expect(page.contains("create-order ✗ 401") && page.contains("finally delete-order not run"), "the page shows no steps")
        let binaryStatus = try await runTool(ChildProcess.binDirectory.appendingPathComponent("lookout").path, ["status", "--url", base])
        #expect(binaryStatus.output.contains("[steps: login passed 200, create-order failed 401, delete-order not run]"), "\(binaryStatus.output)")
        // lookout probe --source runs one as the scheduler does, each step on a line.
        let binary = ChildProcess.binDirectory.appendingPathComponent("lookout").path
        let probed = try await runTool(binary, ["probe", "--config", config.path, "--source", "rejected"])
        #expect(probed.status == 1)
        #expect(probed.output.contains("step 2  create-order  FAILED  HTTP 401"), "\(probed.output)")
        #expect(probed.output.contains("finally  delete-order  not run"), "\(probed.output)")
        // The tokens the flows captured are in no log, page, metric, API answer or notification,
        // and not in the database.
        let shown = [
            lookout.text, probed.output,
            await http.perform(TransferRequest(url: "\(base)/metrics", timeout: .patient)).bodyText,
            await http.perform(TransferRequest(url: "\(base)/", timeout: .patient)).bodyText,
            await http.perform(TransferRequest(url: "\(base)/api/v1/status", timeout: .patient)).bodyText,
            String(data: try JSONSerialization.data(withJSONObject: try await simulatorWebhookLog(simBase)), encoding: .utf8) ?? "",
        ]
        for text in shown { #expect(!text.contains("sim-token-"), "a captured token was shown") }
        #expect(try await lookout.terminate() == 0)
        for file in try FileManager.default.contentsOfDirectory(atPath: directory.path) where file.hasPrefix("lookout.sqlite") {
            let bytes = try Data(contentsOf: directory.appendingPathComponent(file))
            #expect(bytes.range(of: Data("sim-token-".utf8)) == nil, "\(file) holds a captured token")
        }
        #expect(try await sim.terminate() == 0)
    }
}
