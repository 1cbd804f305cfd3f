import Foundation
import ResilientHTTP
import TestSupport
import Testing

/// The JSON API, the admin endpoints behind the token, and `lookout status`.
@Suite("API end to end")
struct APIEndToEndTests {
    let http = CurlTransport()

    func call(_ url: String, method: String = "GET", token: String? = nil, body: String? = nil) async -> TransferResult {
        var headers: [(name: String, value: String)] = [("Content-Type", "application/json")]
        if let token { headers.append(("Authorization", "Bearer \(token)")) }
        return await http.perform(TransferRequest(url: url, method: method, headers: headers, body: body.map { Array($0.utf8) }, timeout: .patient))
    }

    func object(_ result: TransferResult) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(result.body)) as? [String: Any])
    }

    @Test func readsActsAndRefuses() async throws {
        let directory = try makeTemporaryDirectory("api")
        defer { try? FileManager.default.removeItem(at: directory) }
        try "s3cret-admin\n".write(to: directory.appendingPathComponent("admin.token"), atomically: true, encoding: .utf8)
        let (sim, simBase) = try await startSimulator()
        let config = directory.appendingPathComponent("lookout.yml")
        try """
        listen: 127.0.0.1:0
        database: \(directory.path)/lookout.sqlite
        admin_token_file: admin.token
        defaults: {interval: 300ms, timeout: 2s, retry: {server_error: {max_attempts: 1}}, circuit_breaker: {failure_threshold: 1000}}
        sources:
          - {name: good, url: "\(simBase)/ok"}
          - {name: bad, url: "\(simBase)/status/502?detail=gateway%20sad"}
        """.write(to: config, atomically: true, encoding: .utf8)
        let (lookout, base) = try await startLookout(config: config)

        let status = try await eventually("both sources in the status") { () -> [String: Any]? in
            let document = try? object(await call("\(base)/api/v1/status"))
            let sources = document?["sources"] as? [[String: Any]] ?? []
            return sources.filter { $0["last_result"] is [String: Any] }.count == 2 ? document : nil
        }
        #expect(status["status"] as? String == "degraded")
        let bad = try #require((status["sources"] as? [[String: Any]])?.first { $0["name"] as? String == "bad" })
        let last = try #require(bad["last_result"] as? [String: Any])
        #expect(last["reason"] as? String == "http_502")
        #expect(last["server_message"] as? String == "gateway sad")
        #expect((last["message"] as? String)?.hasPrefix("Error while probing bad") == true)
        // Down since its first failure, with the upstream's own failure as the cause.
        let incident = try #require(bad["incident"] as? [String: Any])
        #expect(bad["down_since"] as? String == incident["down_since"] as? String)
        #expect((incident["cause"] as? [String: Any])?["server_message"] as? String == "gateway sad")
        #expect(incident["down_for_seconds"] is Int)
        #expect((status["sources"] as? [[String: Any]])?.first { $0["name"] as? String == "good" }?["incident"] is NSNull)

        let detail = try object(await call("\(base)/api/v1/sources/bad"))
        #expect((detail["source"] as? [String: Any])?["name"] as? String == "bad")
        #expect(await call("\(base)/api/v1/sources/nope").httpStatus == 404)

        let page = try await eventually("two stored error records") { () -> [String: Any]? in
            let page = try? object(await call("\(base)/api/v1/sources/bad/errors?limit=1"))
            return (page?["next"] as? String) != nil ? page : nil
        }
        #expect((page["errors"] as? [[String: Any]])?.count == 1)
        let next = try #require(page["next"] as? String)
        let second = try object(await call("\(base)\(next)"))
        let firstID = (page["errors"] as? [[String: Any]])?.first?["id"] as? Int ?? 0
        let secondID = (second["errors"] as? [[String: Any]])?.first?["id"] as? Int ?? 0
        #expect(secondID < firstID && secondID > 0)
        #expect(await call("\(base)/api/v1/sources/bad/errors?since=yesterday").httpStatus == 400)

        // Admin endpoints: 401 without or with a wrong token, then they act.
        #expect(await call("\(base)/api/v1/sources/good/breaker", method: "POST", body: #"{"action":"force_open"}"#).httpStatus == 401)
        #expect(await call("\(base)/api/v1/sources/good/breaker", method: "POST", token: "wrong", body: #"{"action":"force_open"}"#).httpStatus == 401)
        let forced = await call("\(base)/api/v1/sources/good/breaker", method: "POST", token: "s3cret-admin", body: #"{"action":"force_open"}"#)
        #expect(try object(forced)["state"] as? String == "forced_open")
        #expect(await call("\(base)/api/v1/sources/good/breaker", method: "POST", token: "s3cret-admin", body: #"{"action":"explode"}"#).httpStatus == 400)
        let probed = try object(await call("\(base)/api/v1/sources/good/probe", method: "POST", token: "s3cret-admin"))
        #expect(probed["reason"] as? String == "circuit_open")
        _ = await call("\(base)/api/v1/sources/good/breaker", method: "POST", token: "s3cret-admin", body: #"{"action":"reset"}"#)
        let again = try object(await call("\(base)/api/v1/sources/good/probe", method: "POST", token: "s3cret-admin"))
        #expect(again["ok"] as? Bool == true)

        let silence = await call(
            "\(base)/api/v1/silences", method: "POST", token: "s3cret-admin",
            body: #"{"matchers":{"source":"bad"},"ends_at":"2099-01-01T00:00:00Z","comment":"known"}"#)
        #expect(silence.httpStatus == 201)
        #expect(await call("\(base)/api/v1/silences", method: "POST", token: "s3cret-admin", body: #"{"matchers":{}}"#).httpStatus == 400)
        let alerts = try object(await call("\(base)/api/v1/alerts"))
        #expect((alerts["silences"] as? [[String: Any]])?.first?["comment"] as? String == "known")
        #expect(await call("\(base)/api/v1/status", method: "DELETE").httpStatus == 405)

        // A misspelled label name or an unknown source matches nothing: 400 naming it.
        let misspelled = await call(
            "\(base)/api/v1/silences", method: "POST", token: "s3cret-admin", body: #"{"matchers":{"sourc":"bad"},"ends_at":"2099-01-01T00:00:00Z"}"#)
        #expect(misspelled.httpStatus == 400)
        #expect((try object(misspelled)["message"] as? String)?.contains(#"no alert has a label "sourc""#) == true)
        let unknown = await call(
            "\(base)/api/v1/silences", method: "POST", token: "s3cret-admin", body: #"{"matchers":{"source":"nope"},"ends_at":"2099-01-01T00:00:00Z"}"#)
        #expect((try object(unknown)["message"] as? String)?.contains(#"no source is named "nope""#) == true)

        // Listed, expired with the CLI, gone; expiring it again is a 404.
        let binary = ChildProcess.binDirectory.appendingPathComponent("lookout").path
        let silenceID = try #require(try object(silence)["id"] as? Int)
        let listed = try await runTool(binary, ["silence", "list", "--url", base])
        #expect(listed.status == 0)
        #expect(listed.output.contains("\(silenceID)  source=bad  until 2099-01-01T00:00:00.000Z  known"))
        #expect(try await runTool(binary, ["silence", "expire", "\(silenceID)", "--url", base]).status == 1)  // no token
        // The address and the admin token (admin_token_file) from the config the server runs
        // with: the same file with the port it got.
        let client = directory.appendingPathComponent("client.yml")
        try String(contentsOf: config, encoding: .utf8).replacingOccurrences(of: "127.0.0.1:0", with: String(base.dropFirst("http://".count)))
            .write(to: client, atomically: true, encoding: .utf8)
        let expired = try await runTool(binary, ["silence", "expire", "\(silenceID)", "--config", client.path])
        #expect(expired.status == 0, "\(expired.output)")
        #expect((try object(await call("\(base)/api/v1/silences"))["silences"] as? [[String: Any]])?.isEmpty == true)
        #expect(await call("\(base)/api/v1/silences/\(silenceID)", method: "DELETE", token: "s3cret-admin").httpStatus == 404)
        // Maintenance through the admin API: the source says so until the window is ended.
        #expect(await call("\(base)/api/v1/maintenance", method: "POST", body: #"{"sources":["bad"],"ends_at":"2099-01-01T00:00:00Z"}"#).httpStatus == 401)
        let wrongSource = await call(
            "\(base)/api/v1/maintenance", method: "POST", token: "s3cret-admin", body: #"{"sources":["nope"],"ends_at":"2099-01-01T00:00:00Z"}"#)
        #expect((try object(wrongSource)["message"] as? String) == #"sources: no source is named "nope""#)
        let window = await call(
            "\(base)/api/v1/maintenance", method: "POST", token: "s3cret-admin",
            body: #"{"sources":["bad"],"ends_at":"2099-01-01T00:00:00Z","note":"gateway swap"}"#)
        #expect(window.httpStatus == 201)
        let windowID = try #require(try object(window)["id"] as? Int)
        let listedWindows = try object(await call("\(base)/api/v1/maintenance"))["windows"] as? [[String: Any]]
        #expect(listedWindows?.first?["active"] as? Bool == true)
        let inMaintenance = try await eventually("the source in maintenance") { () -> [String: Any]? in
            let document = try? object(await call("\(base)/api/v1/sources/bad"))
            return ((document?["source"] as? [String: Any])?["maintenance"] as? [String: Any])
        }
        #expect(inMaintenance["note"] as? String == "gateway swap")
        #expect(await call("\(base)/api/v1/maintenance/\(windowID)", method: "DELETE", token: "s3cret-admin").httpStatus == 200)
        #expect((try object(await call("\(base)/api/v1/maintenance"))["windows"] as? [[String: Any]])?.isEmpty == true)
        #expect(await call("\(base)/api/v1/maintenance/\(windowID)", method: "DELETE", token: "s3cret-admin").httpStatus == 404)
        // Recurring through the API: bad fields are named; a good one is listed with its schedule.
        let funday = await call(
            "\(base)/api/v1/maintenance", method: "POST", token: "s3cret-admin",
            body: #"{"sources":["bad"],"recurring":{"weekdays":["funday"],"at":"02:30","duration":"1h"}}"#)
        #expect((try object(funday)["message"] as? String)?.hasPrefix(#"recurring.weekdays: "funday" is not a weekday"#) == true)
        // Three days from today in Berlin, so the window never covers the test's own run.
        var berlin = Calendar(identifier: .gregorian)
        berlin.timeZone = TimeZone(identifier: "Europe/Berlin")!
        let weekday = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"][(berlin.component(.weekday, from: Date()) - 1 + 3) % 7]
        let weekly = await call(
            "\(base)/api/v1/maintenance", method: "POST", token: "s3cret-admin",
            body: #"{"sources":["bad"],"recurring":{"weekdays":["# + "\"\(weekday)\""
                + #"],"at":"02:30","duration":"1h","time_zone":"Europe/Berlin"},"note":"backup"}"#)
        #expect(weekly.httpStatus == 201)
        let recurring = (try object(await call("\(base)/api/v1/maintenance"))["windows"] as? [[String: Any]])?.first?["recurring"] as? [String: Any]
        #expect(recurring?["at"] as? String == "02:30")
        #expect(recurring?["time_zone"] as? String == "Europe/Berlin")
        #expect(recurring?["weekdays"] as? [String] == [weekday])

        let added = try await runTool(
            binary, ["silence", "add", "--url", base, "--token", "s3cret-admin", "--match", "alertname=SourceGone", "--duration", "30m"])
        #expect(added.status == 1)  // no such rule in this config
        #expect(added.output.contains("no rule is named"))

        let summary = try await runTool(binary, ["status", "--config", client.path])
        #expect(summary.status == 1)  // degraded
        #expect(summary.output.contains("server_error/http_502"))
        #expect(summary.output.contains("for "))
        #expect(summary.output.contains("Lookout at \(base): degraded"))

        // An audit line per change a person made, with the token's fingerprint, never the token.
        for action in ["silence added", "silence expired", "maintenance window added", "breaker reset"] {
            #expect(lookout.text.contains("msg=\"admin: \(action)\""), "no audit line for \(action)")
        }
        #expect(lookout.text.contains("client=127.0.0.1"))
        #expect(!lookout.text.contains("s3cret-admin"))

        let page2 = await call("\(base)/")
        #expect(page2.bodyText.contains("Degraded"))
        #expect(page2.bodyText.contains("gateway sad"))
        #expect(try await lookout.terminate() == 0)
        #expect(try await sim.terminate() == 0)
    }
}
