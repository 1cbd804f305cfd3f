import Foundation
import ResilientHTTP

/// Debian's Prometheus on loopback, scraping `targets` every second into `directory`.
public struct TestPrometheus: Sendable {
    public let process: ChildProcess
    public let port: UInt16
    let http = CurlTransport()

    /// `rules`: rule files Prometheus evaluates every second (their alerts in `ALERTS`).
    public init(scraping targets: [String], in directory: URL, rules: [URL] = []) throws {
        port = closedPort()
        let ruleFiles = rules.isEmpty ? "" : "rule_files: [\(rules.map { "\"\($0.path)\"" }.joined(separator: ", "))]\n"
        try """
        global: {scrape_interval: 1s, evaluation_interval: 1s}
        \(ruleFiles)scrape_configs:
          - job_name: lookout
            static_configs: [{targets: [\(targets.map { "\"\($0)\"" }.joined(separator: ", "))]}]
        """.write(to: directory.appendingPathComponent("prometheus.yml"), atomically: true, encoding: .utf8)
        process = try ChildProcess(
            "/usr/bin/prometheus",
            [
                "--config.file=\(directory.path)/prometheus.yml", "--storage.tsdb.path=\(directory.path)/tsdb",
                "--web.listen-address=127.0.0.1:\(port)",
            ])
    }

    /// Prometheus on a whole configuration of the caller's (scrape jobs, rule files).
    public init(configuration: String, in directory: URL) throws {
        port = closedPort()
        try configuration.write(to: directory.appendingPathComponent("prometheus.yml"), atomically: true, encoding: .utf8)
        process = try ChildProcess(
            "/usr/bin/prometheus",
            [
                "--config.file=\(directory.path)/prometheus.yml", "--storage.tsdb.path=\(directory.path)/tsdb",
                "--web.listen-address=127.0.0.1:\(port)",
            ])
    }

    /// The result vector of an instant query; nil while Prometheus cannot answer it.
    public func query(_ promql: String) async -> [[String: Any]]? {
        let encoded = promql.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let result = await http.perform(TransferRequest(url: "http://127.0.0.1:\(port)/api/v1/query?query=\(encoded)", timeout: .patient))
        guard let body = try? JSONSerialization.jsonObject(with: Data(result.body)) as? [String: Any], body["status"] as? String == "success",
            let data = body["data"] as? [String: Any], let list = data["result"] as? [[String: Any]]
        else { return nil }
        return list
    }
}

/// What lookout-sim's `/webhook` and provider receivers received, oldest first
/// (`/webhook/log`); throws when the answer is not JSON.
public func simulatorWebhookLog(_ simBase: String) async throws -> [[String: Any]] {
    let result = await CurlTransport().perform(TransferRequest(url: "\(simBase)/webhook/log", timeout: .seconds(10)))
    return try JSONSerialization.jsonObject(with: Data(result.body)) as? [[String: Any]] ?? []
}
