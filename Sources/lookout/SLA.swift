import ArgumentParser
import LookoutCore
import LookoutService
import LookoutStore
import LookoutWeb

/// `lookout sla`: each source's SLA over a period, from the database the config names — the
/// same numbers as `/api/v1/sla` and the `/sla` report.
struct SLACommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sla",
        abstract: "Prints each source's SLA over a period: promised and measured uptime, the downtime budget, the credit reached, the outages.")

    @Option(help: "A month (2026-11) or an ISO week (2026-W47); each source's current period when omitted.")
    var period: String?

    @Option(help: "Only this source.")
    var source: String?

    @Option(help: "Only this group's sources.")
    var group: String?

    @Flag(help: "JSON, as /api/v1/sla answers.")
    var json = false

    @Flag(help: "CSV, one row per outage, as /api/v1/sla.csv answers.")
    var csv = false

    @Option(help: "The config file.")
    var config: String

    func run() async throws {
        let loaded = try loadedConfig(config)
        let database: LookoutDatabase
        do {
            database = try LookoutDatabase(path: loaded.database)
        } catch {
            printError("lookout: cannot open \(loaded.database): \(error)")
            throw ExitCode(1)
        }
        var query: [String: String] = [:]
        query["period"] = period
        query["source"] = source
        query["group"] = group
        switch SLARoutes.reports(query, config: loaded, database: database, nowMs: Timestamp.nowMs()) {
        case .failure(let problem):
            printError("lookout: \(problem.message)")
            throw ExitCode(problem.status == 500 ? 1 : 2)
        case .success(let reports):
            if csv {
                print(SLAReport.csv(reports), terminator: "")
            } else if json {
                var writer = JSONWriter(capacity: 4096)
                writer.object { json in
                    json.field("reports") { json in json.array { json in for report in reports { json.object { report.write(into: &$0) } } } }
                }
                print(String(decoding: writer.bytes, as: UTF8.self))
            } else if reports.isEmpty {
                print("No source has an sla: give one in defaults, a group or a source (docs/sla.md).")
            } else {
                print(reports.map(\.text).joined(separator: "\n"), terminator: "")
            }
        }
    }
}
