import LookoutCore
import MicroHTTPServer

/// Lookout's status in the formats status aggregators, other monitors and other Lookouts read:
/// Atlassian Statuspage's public API v2 (`/api/v2/summary.json`, `status.json`,
/// `components.json`, `incidents.json`, `incidents/unresolved.json`,
/// `scheduled-maintenances.json`) and the incident history as Atom and RSS (`/history.atom`,
/// `/history.rss`). Public-safe, as `/public` is.
struct StatuspageRoutes {
    let page: StatusPage

    func install(into router: inout Router) {
        let page = self.page
        func json(_ write: @escaping @Sendable (StatuspageModel, inout JSONWriter) -> Void) -> @Sendable (HTTPRequest) -> HTTPResponse {
            { _ in
                let model = StatuspageModel.make(page, nowMs: Timestamp.nowMs())
                var json = JSONWriter(capacity: 4096)
                json.object { json in
                    StatuspageRoutes.writePage(model, to: &json)
                    write(model, &json)
                }
                // Other sites' pages and widgets read it from the browser.
                return HTTPResponse(headers: ["Content-Type": "application/json", "Access-Control-Allow-Origin": "*"], body: .bytes(json.bytes))
            }
        }
        router.get(
            "/api/v2/summary.json",
            json { model, json in
                StatuspageRoutes.writeStatus(model, to: &json)
                json.field("components") { json in json.array { json in for component in model.components { StatuspageRoutes.write(component, to: &json) } } }
                StatuspageRoutes.writeIncidents("incidents", model.unresolved, model, to: &json)
                StatuspageRoutes.writeIncidents("scheduled_maintenances", model.maintenances, model, to: &json)
            })
        router.get("/api/v2/status.json", json { model, json in StatuspageRoutes.writeStatus(model, to: &json) })
        router.get(
            "/api/v2/components.json",
            json { model, json in
                json.field("components") { json in json.array { json in for component in model.components { StatuspageRoutes.write(component, to: &json) } } }
            })
        router.get("/api/v2/incidents.json", json { model, json in StatuspageRoutes.writeIncidents("incidents", model.incidents, model, to: &json) })
        router.get(
            "/api/v2/incidents/unresolved.json",
            json { model, json in
                StatuspageRoutes.writeIncidents("incidents", model.unresolved, model, to: &json)
            })
        router.get(
            "/api/v2/scheduled-maintenances.json",
            json { model, json in
                StatuspageRoutes.writeIncidents("scheduled_maintenances", model.maintenances, model, to: &json)
            })
        router.get("/history.atom") { _ in
            HTTPResponse(
                headers: ["Content-Type": "application/atom+xml; charset=utf-8", "Access-Control-Allow-Origin": "*"],
                body: .bytes(Array(HistoryFeed.atom(StatuspageModel.make(page, nowMs: Timestamp.nowMs())).utf8)))
        }
        router.get("/history.rss") { _ in
            HTTPResponse(
                headers: ["Content-Type": "application/rss+xml; charset=utf-8", "Access-Control-Allow-Origin": "*"],
                body: .bytes(Array(HistoryFeed.rss(StatuspageModel.make(page, nowMs: Timestamp.nowMs())).utf8)))
        }
    }

    static let pageID = "lookout"

    static func time(_ ms: Int64?) -> (inout JSONWriter) -> Void {
        { $0.string(ms.map(Timestamp.rfc3339)) }
    }

    static func writePage(_ model: StatuspageModel, to json: inout JSONWriter) {
        json.field("page") { json in
            json.object { json in
                json.field("id") { $0.string(pageID) }
                json.field("name") { $0.string(model.pageName) }
                json.field("url") { $0.string(model.pageURL) }
                json.field("time_zone") { $0.string("Etc/UTC") }
                json.field("updated_at", time(model.nowMs))
            }
        }
    }

    static func writeStatus(_ model: StatuspageModel, to json: inout JSONWriter) {
        let (indicator, description) = model.indicator
        json.field("status") { json in
            json.object { json in
                json.field("indicator") { $0.string(indicator) }
                json.field("description") { $0.string(description) }
            }
        }
    }

    static func write(_ component: StatuspageModel.Component, to json: inout JSONWriter) {
        json.object { json in
            json.field("id") { $0.string(component.id) }
            json.field("name") { $0.string(component.name) }
            json.field("status") { $0.string(component.status.statuspage) }
            json.field("created_at") { $0.string(nil) }
            json.field("updated_at") { $0.string(nil) }
            json.field("position") { $0.int(Int64(component.position)) }
            json.field("description") { $0.string(nil) }
            json.field("showcase") { $0.bool(true) }
            json.field("start_date") { $0.string(nil) }
            json.field("group_id") { $0.string(component.groupID) }
            json.field("page_id") { $0.string(pageID) }
            json.field("group") { $0.bool(component.isGroup) }
            json.field("only_show_if_degraded") { $0.bool(false) }
            if component.isGroup { json.field("components") { json in json.array { json in for id in component.members { json.string(id) } } } }
        }
    }

    static func writeIncidents(_ key: String, _ incidents: [StatuspageModel.Incident], _ model: StatuspageModel, to json: inout JSONWriter) {
        let components = Dictionary(model.components.map { ($0.id, $0) }) { first, _ in first }
        json.field(key) { json in
            json.array { json in
                for incident in incidents {
                    json.object { json in
                        json.field("id") { $0.string(incident.id) }
                        json.field("name") { $0.string(incident.name) }
                        json.field("status") { $0.string(incident.status) }
                        json.field("created_at", time(incident.startedAtMs))
                        json.field("updated_at", time(incident.updatedAtMs))
                        json.field("monitoring_at") { $0.string(nil) }
                        json.field("resolved_at", time(incident.resolvedAtMs))
                        json.field("impact") { $0.string(incident.impact) }
                        json.field("shortlink") { $0.string(incident.link) }
                        json.field("started_at", time(incident.startedAtMs))
                        json.field("page_id") { $0.string(pageID) }
                        if incident.isMaintenance {
                            json.field("scheduled_for", time(incident.startedAtMs))
                            json.field("scheduled_until", time(incident.scheduledUntilMs))
                        }
                        json.field("incident_updates") { json in
                            json.array { json in
                                for update in incident.updates {
                                    json.object { json in
                                        json.field("id") { $0.string(update.id) }
                                        json.field("status") { $0.string(update.status) }
                                        json.field("body") { $0.string(update.body) }
                                        json.field("incident_id") { $0.string(incident.id) }
                                        json.field("created_at", time(update.atMs))
                                        json.field("updated_at", time(update.atMs))
                                        json.field("display_at", time(update.atMs))
                                        json.field("affected_components") { $0.string(nil) }
                                    }
                                }
                            }
                        }
                        json.field("components") { json in
                            json.array { json in for id in incident.components { if let component = components[id] { write(component, to: &json) } } }
                        }
                    }
                }
            }
        }
    }
}
