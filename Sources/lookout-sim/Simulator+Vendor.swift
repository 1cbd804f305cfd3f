import Foundation
import LookoutCore
import MicroHTTPServer

extension Simulator {
    /// `/vendor/ID/api/v2/summary.json`: a vendor's Statuspage v2 summary with one component,
    /// `API`. All operational until the switch `vendor-ID` is on (`POST /switch/vendor-ID/on`,
    /// `?at=` for a moment to come); then `API` is a major outage with an incident, "API down",
    /// begun when the switch went on. Tests make a vendor confirm an outage when they choose.
    func vendorSummary(_ request: HTTPRequest) async -> HTTPResponse {
        let id = request.pathParameters["id"]!
        let since = state.withLock { $0.onSince("vendor-\(id)") }
        let page = [
            "id": "sim-\(id)", "name": "Sim \(id)", "url": "http://lookout-sim/vendor/\(id)", "updated_at": Timestamp.rfc3339(since ?? Timestamp.nowMs()),
        ]
        var component: [String: Any] = [
            "id": "api", "name": "API", "status": since == nil ? "operational" : "major_outage", "group": false, "group_id": NSNull(),
        ]
        component["only_show_if_degraded"] = false
        var summary: [String: Any] = [
            "page": page, "components": [component], "scheduled_maintenances": [],
            "status": since == nil
                ? ["indicator": "none", "description": "All Systems Operational"] : ["indicator": "critical", "description": "Major System Outage"],
        ]
        if let since {
            let started = Timestamp.rfc3339(since)
            summary["incidents"] = [
                [
                    "id": "inc-\(id)", "name": "API down", "status": "investigating", "impact": "critical", "created_at": started, "started_at": started,
                    "updated_at": started, "shortlink": "http://lookout-sim/vendor/\(id)/incidents/1",
                    "components": [["id": "api", "name": "API"]],
                    "incident_updates": [["id": "u1", "status": "investigating", "body": "We are looking into errors on the API.", "created_at": started]],
                ]
            ]
        } else {
            summary["incidents"] = []
        }
        return .json(Simulator.jsonText(summary))
    }
}
