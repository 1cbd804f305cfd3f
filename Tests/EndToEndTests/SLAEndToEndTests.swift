import Foundation
import ResilientHTTP
import TestSupport
import Testing

/// SLA reports through the binary: a source that fails for 20 s shows one outage of about 20 s
/// with the upstream's own words in the JSON, the CSV, the HTML report and `lookout sla`; a
/// target the run cannot meet (100 %) fires SLABudgetExhausted on a source that is up again;
/// a wrong period is a 400 that says why.
@Suite("SLA end to end", .serialized)
struct SLAEndToEndTests {
    let http = CurlTransport()

    func get(_ url: String) async -> TransferResult {
        await http.perform(TransferRequest(url: url, timeout: .seconds(10)))
    }

    func report(_ base: String, _ source: String) async throws -> [String: Any] {
        let body = await get("\(base)/api/v1/sla?source=\(source)").body
        let document = try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])
        return try #require((document["reports"] as? [[String: Any]])?.first)
    }

    @Test func anOutageOfTwentySecondsIsEvidenceEverywhere() async throws {
        let directory = try makeTemporaryDirectory("sla")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (sim, simBase) = try await startSimulator()
        let run = UUID().uuidString.prefix(8)
        let url = "\(simBase)/switch/pay-\(run)?code=503&detail=database%20is%20down"
        let config = try writeLookoutConfig(
            in: directory,
            """
            defaults:
              interval: 500ms
              sla: {target: 99.9%, credits: [{below: 99.9%, credit: 10%}, {below: 99%, credit: 25%}], claim_within: 30d}
            sources:
              - {name: payments-api, url: "\(url)"}
              - {name: strict, url: "\(url)", sla: {target: 100%}}
              - {name: no-promise, url: "\(simBase)/ok", sla: off}
            alerts:
              evaluation_interval: 200ms
              hooks:
                - {name: chat, type: webhook, url: "\(simBase)/webhook", group_wait: 0s, group_interval: 1s}
            """)
        let (lookout, base) = try await startLookout(config: config)
        _ = try await eventually("probed") { () -> Bool? in
            (await get("\(base)/-/ready")).httpStatus == 200 ? true : nil
        }
        _ = await http.perform(TransferRequest(url: "\(simBase)/switch/pay-\(run)/on", method: "POST", timeout: .seconds(5)))
        // Down until the report itself counts 20 s of it, then up again.
        _ = try await eventually("20 s of downtime counted") { () -> Bool? in
            let outages = try await report(base, "payments-api")["outages"] as? [[String: Any]] ?? []
            return (outages.first?["counted_seconds"] as? Double ?? 0) >= 20 ? true : nil
        }
        _ = await http.perform(TransferRequest(url: "\(simBase)/switch/pay-\(run)/off", method: "POST", timeout: .seconds(5)))
        let ended = try await eventually("the outage ended") { () -> [String: Any]? in
            let found = try await report(base, "payments-api")
            let outages = found["outages"] as? [[String: Any]] ?? []
            return outages.count == 1 && !(outages[0]["end"] is NSNull) && outages[0]["end"] != nil ? found : nil
        }
        let outage = try #require((ended["outages"] as? [[String: Any]])?.first)
        let counted = try #require(outage["counted_seconds"] as? Double)
        #expect(counted >= 20 && counted < 30, "\(counted) s")
        #expect(outage["http_status"] as? Int == 503)
        #expect((outage["server_message"] as? String)?.contains("database is down") == true, "\(outage)")
        #expect(outage["reason"] as? String == "http_503")
        #expect(ended["target"] as? Double == 0.999)
        #expect(ended["claim_by"] is String)
        let uptime = try #require(ended["uptime"] as? Double)
        #expect(uptime < 0.999 && ended["met"] as? Bool == false)
        // The source without a promise has no report; asking for it says why.
        let refused = await get("\(base)/api/v1/sla?source=no-promise")
        #expect(refused.httpStatus == 404 && refused.bodyText.contains("has no sla"))

        // The CSV: a header and the outage's row with the upstream's words.
        let csv = await get("\(base)/api/v1/sla.csv")
        #expect(csv.httpStatus == 200 && csv.headers.contains { $0.name.lowercased() == "content-type" && $0.value.hasPrefix("text/csv") })
        let rows = csv.bodyText.components(separatedBy: "\r\n").filter { !$0.isEmpty }
        #expect(rows.first?.hasPrefix("source,period,start,end,duration_seconds") == true)
        #expect(rows.contains { $0.hasPrefix("payments-api,") && $0.contains("database is down") && $0.contains("http_503") }, "\(rows)")

        // The HTML report: the figures and the evidence.
        let page = await get("\(base)/sla")
        #expect(page.httpStatus == 200)
        #expect(page.bodyText.contains("<h2>payments-api</h2>") && page.bodyText.contains("database is down"))
        #expect(page.bodyText.contains("Claim by") && page.bodyText.contains("99.9%"))
        #expect(!page.bodyText.contains("no-promise"))

        // `lookout sla` prints the same uptime.
        let binary = ChildProcess.binDirectory.appendingPathComponent("lookout").path
        let printed = try await runTool(binary, ["sla", "--config", config.path, "--source", "payments-api"])
        #expect(printed.status == 0, "\(printed.output)")
        #expect(printed.output.contains("promised 99.9%") && printed.output.contains("http_503"), "\(printed.output)")
        let json = try await runTool(binary, ["sla", "--config", config.path, "--source", "payments-api", "--json"])
        let cli = try #require(
            (try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])?["reports"] as? [[String: Any]])
        #expect((cli.first?["outages"] as? [[String: Any]])?.first?["start"] as? String == outage["start"] as? String)

        // 100 % is spent by the first second down: told on a source that is up again.
        let told = try await eventually("SLABudgetExhausted told") { () -> String? in
            for entry in try await simulatorWebhookLog(simBase) {
                for alert in (entry["payload"] as? [String: Any])?["alerts"] as? [[String: Any]] ?? [] {
                    let labels = alert["labels"] as? [String: String] ?? [:]
                    if labels["alertname"] == "SLABudgetExhausted", labels["source"] == "strict" {
                        return (alert["annotations"] as? [String: String])?["summary"]
                    }
                }
            }
            return nil
        }
        #expect(told.hasPrefix("strict has used its 0s of downtime for "), "\(told)")
        #expect(told.contains("100% promised"), "\(told)")
        let scrape = await get("\(base)/metrics").bodyText
        #expect(metricValue(scrape, #"lookout_sla_budget_remaining_ratio{source="strict"}"#) == -1)
        #expect(metricValue(scrape, #"lookout_sla_uptime_ratio{source="payments-api",period="current"}"#).map { $0 < 0.999 } == true)

        // Wrong periods are refused with the reason.
        let month13 = await get("\(base)/api/v1/sla?period=2026-13")
        #expect(month13.httpStatus == 400 && month13.bodyText.contains("months are 01 to 12"))
        let future = await get("\(base)/api/v1/sla?period=2999-01")
        #expect(future.httpStatus == 400 && future.bodyText.contains("has not begun"))
        let cliBad = try await runTool(binary, ["sla", "--config", config.path, "--period", "2026-13"])
        #expect(cliBad.status == 2 && cliBad.output.contains("months are 01 to 12"))
        #expect(try await lookout.terminate() == 0)
        #expect(try await sim.terminate() == 0)
    }
}
