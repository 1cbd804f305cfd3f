import ArgumentParser
import Foundation
import LookoutCore
import ResilientHTTP

/// Exit codes: 0 operational, 1 degraded, outage or offline, 2 cannot reach Lookout (or bad usage),
/// so a script can tell "sources are down" from "Lookout is down".
struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Shows a running Lookout's status: every source, its state and last result.",
        discussion: "Exits 0 when operational, 1 when degraded, in an outage or offline, 2 when Lookout cannot be reached or does not answer with its status.")

    @OptionGroup var server: ServerConnection

    @Flag(help: "Print the status JSON as it is.")
    var json = false

    func run() async throws {
        let base = server.base(try server.loadedConfig())
        let result = await CurlTransport.lookout().perform(TransferRequest(url: "\(base)/api/v1/status", timeout: .seconds(10), maxResponseBytes: 256 << 20))
        guard result.httpStatus == 200 else {
            let why = result.httpStatus.map { "it answered \($0)" } ?? result.curlMessage
            printError("lookout: cannot read \(base)/api/v1/status: \(why)")
            throw ExitCode(2)
        }
        if json {
            print(result.bodyText)
            return
        }
        guard let document = try? JSONSerialization.jsonObject(with: Data(result.body)) as? [String: Any],
            let sources = document["sources"] as? [[String: Any]]
        else {
            printError("lookout: \(base)/api/v1/status did not answer with Lookout's status JSON")
            throw ExitCode(2)
        }
        printText("Lookout at \(base): \(document["status"] as? String ?? "?") · \(document["alerts_firing"] as? Int ?? 0) alerts firing")
        if let gap = document["monitoring_gap"] as? [String: Any], let seconds = gap["seconds"] as? Int,
            let from = gap["from"] as? String, let to = gap["to"] as? String
        {
            printText("Not running for \(Timestamp.human(Int64(seconds).multipliedClamped(1000))) before its start (\(from) to \(to)): nothing was probed then")
        }
        let width = max(6, sources.map { ($0["name"] as? String ?? "").count }.max() ?? 6)
        for source in sources {
            let name = (source["name"] as? String ?? "").padding(toLength: width, withPad: " ", startingAt: 0)
            let state = (source["state"] as? String ?? "").padding(toLength: 8, withPad: " ", startingAt: 0)
            let last = source["last_result"] as? [String: Any]
            let incident = source["incident"] as? [String: Any]
            var detail = ""
            // While down: for how long, and the upstream's own failure (never "circuit open").
            if let failed = (incident?["cause"] as? [String: Any]) ?? (last?["ok"] as? Bool == false ? last : nil) {
                if let downFor = incident?["down_for"] as? String { detail = "for \(downFor)  " }
                detail += "\(failed["category"] as? String ?? "")/\(failed["reason"] as? String ?? "")"
                if let message = failed["message"] as? String { detail += "  \(message)" }
            } else if let last, let seconds = last["latency_seconds"] as? Double {
                detail = String(format: "%.0f ms", seconds * 1000)
            }
            // A flow's steps, each with what it did.
            if let steps = last?["steps"] as? [[String: Any]] {
                let parts = steps.map { step in
                    "\(step["name"] as? String ?? "") \(step["outcome"] as? String ?? "")" + ((step["http_status"] as? Int).map { " \($0)" } ?? "")
                }
                detail += "  [steps: \(parts.joined(separator: ", "))]"
            }
            if let breaker = source["breaker"] as? [String: Any], let state = breaker["state"] as? String, state != "closed" {
                detail += "  [breaker \(state)]"
            }
            if let wait = source["wait"] as? [String: Any], let message = wait["message"] as? String {
                detail += "  (\(message))"
            }
            // Why nobody is told: a maintenance window, a parent that is down, a silence.
            if let maintenance = source["maintenance"] as? [String: Any] {
                detail += "  [maintenance: \(maintenance["window"] as? String ?? "")\((maintenance["ends_at"] as? String).map { " until \($0)" } ?? "")]"
            }
            if let parents = source["blocked_by"] as? [String], !parents.isEmpty {
                detail += "  [held back: \(parents.joined(separator: ", ")) down]"
            }
            if let held = source["held_alerts"] as? [String], !held.isEmpty {
                detail += "  [not notified: \(held.joined(separator: "; "))]"
            }
            printText("\(name)  \(state)  \(detail)")
            // What the vendor says on its own page, when it says something or we are down.
            if let vendor = source["vendor"] as? [String: Any], let says = vendor["says"] as? String,
                vendor["state"] as? String != "unread", incident != nil || vendor["state"] as? String != "operational"
            {
                printText(String(repeating: " ", count: width + 2) + "vendor: \(says)")
            }
        }
        if document["status"] as? String != "operational" { throw ExitCode(1) }
    }
}
