import Foundation
import ResilientHTTP
import TestSupport
import Testing

/// `domain_expiry` through the real binary, with lookout-sim as the RDAP bootstrap file and
/// registry: a registration 10 days from expiring fires DomainExpiresSoon on a working source,
/// one 200 days away fires nothing, a registry that is down or answers garbage is no outage, and
/// a restart asks with the bootstrap file kept in the database.
@Suite("domain expiry end to end", .serialized)
struct DomainExpiryEndToEndTests {
    let http = CurlTransport()

    func warnings(_ simBase: String) async throws -> [String: String] {
        var found: [String: String] = [:]
        for entry in try await simulatorWebhookLog(simBase) {
            guard let payload = entry["payload"] as? [String: Any] else { continue }
            for alert in payload["alerts"] as? [[String: Any]] ?? [] {
                guard let labels = alert["labels"] as? [String: String], let source = labels["source"], let name = labels["alertname"] else { continue }
                found["\(name) \(source)"] = (alert["annotations"] as? [String: String])?["summary"] ?? ""
            }
        }
        return found
    }

    @Test func aRegistrationAboutToLapseIsToldOnAWorkingSource() async throws {
        let directory = try makeTemporaryDirectory("domains")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (sim, simBase) = try await startSimulator()
        func config(bootstrap: String) throws -> URL {
            try writeLookoutConfig(
                in: directory,
                """
                rdap: {bootstrap_url: "\(bootstrap)"}
                defaults: {interval: 500ms}
                sources:
                  - {name: soon, url: "\(simBase)/ok", domain_expiry: d10.test}
                  - {name: later, url: "\(simBase)/ok", domain_expiry: d200.test}
                  - {name: garbage, url: "\(simBase)/ok", domain_expiry: garbage.test}
                  - {name: registry-down, url: "\(simBase)/ok", domain_expiry: down.test}
                  - {name: address, url: "\(simBase)/ok", domain_expiry: true}
                alerts:
                  evaluation_interval: 200ms
                  hooks:
                    - {name: chat, type: webhook, url: "\(simBase)/webhook", group_wait: 0s}
                """)
        }
        var (lookout, base) = try await startLookout(config: try config(bootstrap: "\(simBase)/rdap/dns.json"))
        let scrape = try await eventually("both expiries known") { () -> String? in
            let text = await http.perform(TransferRequest(url: "\(base)/metrics", timeout: .patient)).bodyText
            return text.contains(#"lookout_domain_expiry_timestamp_seconds{source="soon",domain="d10.test"}"#)
                && text.contains(#"lookout_domain_expiry_timestamp_seconds{source="later",domain="d200.test"}"#) ? text : nil
        }
        let soon = try #require(metricValue(scrape, #"lookout_domain_expiry_timestamp_seconds{source="soon",domain="d10.test"}"#))
        let days = (soon - Date().timeIntervalSince1970) / 86_400
        #expect(days > 9 && days <= 10, "\(days) days")
        #expect(!scrape.contains(#"source="garbage",domain"#) && !scrape.contains(#"source="address",domain"#))
        let told = try await eventually("DomainExpiresSoon told") { () -> [String: String]? in
            let found = try await warnings(simBase)
            return found["DomainExpiresSoon soon"] != nil ? found : nil
        }
        #expect(told["DomainExpiresSoon later"] == nil, "\(told)")
        // What could not be read is no outage of the source.
        #expect(told.keys.allSatisfy { !$0.hasPrefix("SourceDown") }, "\(told)")
        #expect(metricValue(scrape, #"lookout_source_down{source="garbage"}"#) != 1)
        #expect(lookout.text.contains("cannot tell when a domain expires") && lookout.text.contains("garbage.test"))
        // After a restart whose bootstrap URL goes nowhere, the kept file still names the registry.
        #expect(try await lookout.terminate() == 0)
        (lookout, base) = try await startLookout(config: try config(bootstrap: "http://127.0.0.1:\(closedPort())/dns.json"))
        _ = try await eventually("the expiry known again") { () -> Bool? in
            let text = await http.perform(TransferRequest(url: "\(base)/metrics", timeout: .patient)).bodyText
            return text.contains(#"lookout_domain_expiry_timestamp_seconds{source="soon",domain="d10.test"}"#) ? true : nil
        }
        #expect(try await lookout.terminate() == 0)
        #expect(try await sim.terminate() == 0)
    }
}
