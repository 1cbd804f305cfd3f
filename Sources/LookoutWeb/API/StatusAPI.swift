import Foundation
import GRDB
import LookoutAlerting
import LookoutCore
import LookoutStore
import ResilientHTTP

/// The JSON API's documents: the overall status, one source's detail, its error records, alerts.
package struct StatusAPI: Sendable {
    package let context: LookoutContext

    package init(context: LookoutContext) {
        self.context = context
    }

    /// `GET /api/v1/status`, written straight into bytes (10,000 sources render in a few ms);
    /// with `peers`, each peer's last answer too (`?local=1` leaves them out: what peers ask).
    package func statusBytes(nowMs: Int64 = Timestamp.nowMs(), peers: Bool = true) -> [UInt8] {
        let snapshot = context.monitor.snapshot(nowMs: nowMs)
        let entries = snapshot.records
        let offline = snapshot.offline
        // Silenced alerts are not counted as firing.
        let holds = context.alerts.heldBack
        let firingAlerts = context.alerts.firing
        let firing = firingAlerts.filter { holds[$0.fingerprint]?.silenced != true }.count
        var rulesBySource: [String: [String]] = [:]
        var heldBySource: [String: [String]] = [:]
        for alert in firingAlerts {
            guard let source = alert.source else { continue }
            rulesBySource[source, default: []].append(alert.rule)
            if let hold = holds[alert.fingerprint] { heldBySource[source, default: []].append("\(alert.rule): \(hold.reason)") }
        }
        var json = JSONWriter(capacity: 256 + entries.count * 600)
        json.object { json in
            json.field("status") { $0.string(snapshot.overall) }
            json.field("network_online") { $0.bool(!offline) }
            json.field("generated_at") { $0.string(Timestamp.rfc3339(nowMs)) }
            json.field("location") { $0.string(snapshot.config.location) }
            json.field("replica") { $0.string(context.replica) }
            json.field("instance") { $0.string(context.instanceID) }
            json.field("shard") { json in
                json.object { json in
                    json.field("index") { $0.int(Int64(snapshot.shard.index)) }
                    json.field("count") { $0.int(Int64(snapshot.shard.count)) }
                }
            }
            json.field("alerts_firing") { $0.int(Int64(firing)) }
            // Nothing was probed in it; told for a day after the start.
            json.field("monitoring_gap") { json in
                guard let gap = context.recentGap(nowMs: nowMs) else { return json.string(nil) }
                json.object { json in
                    json.field("from") { $0.string(Timestamp.rfc3339(gap.fromMs)) }
                    json.field("to") { $0.string(Timestamp.rfc3339(gap.toMs)) }
                    json.field("seconds") { $0.int(gap.durationMs / 1000) }
                }
            }
            json.field("sources") { json in
                json.array { json in
                    for index in entries.indices {
                        StatusAPI.writeSource(
                            entries[index], health: snapshot.summaries[index], breaker: snapshot.breakers[index], blockedBy: snapshot.blockedBy(index),
                            maintenance: snapshot.maintenance[entries[index].name], alerts: rulesBySource[entries[index].name] ?? [],
                            held: heldBySource[entries[index].name] ?? [],
                            vendor: entries[index].source.vendorStatus.map { context.monitor.vendors.view($0, source: entries[index].name) }, nowMs: nowMs,
                            to: &json)
                    }
                }
            }
            let known = peers ? context.peers.peers.filter { !$0.isSelf } : []
            if !known.isEmpty {
                json.field("peers") { json in
                    json.array { json in for peer in known { StatusAPI.writePeer(peer, to: &json) } }
                }
                let problems = ShardCoverage.problems(context, snapshot: snapshot)
                json.field("shard_problems") { json in json.array { json in for problem in problems { json.string(problem) } } }
            }
        }
        return json.bytes
    }

    static func writePeer(_ peer: Peers.Peer, to json: inout JSONWriter) {
        json.object { json in
            json.field("url") { $0.string(peer.url) }
            json.field("location") { $0.string(peer.location) }
            json.field("shard") { $0.string(peer.shard) }
            json.field("replica") { $0.string(peer.replica) }
            json.field("reachable") { $0.bool(peer.problem == nil && peer.lastSuccessMs != nil) }
            json.field("status") { $0.string(peer.problem == nil ? peer.overall : "unreachable") }
            json.field("problem") { $0.string(peer.problem) }
            json.field("unreachable_since") { $0.string(peer.failingSinceMs.map(Timestamp.rfc3339)) }
            json.field("last_success_at") { $0.string(peer.lastSuccessMs.map(Timestamp.rfc3339)) }
            json.field("sources") { json in
                json.array { json in
                    for source in peer.sources {
                        json.object { json in
                            json.field("name") { $0.string(source.name) }
                            json.field("state") { $0.string(source.state) }
                            json.field("group") { $0.string(source.group) }
                            json.field("down_since") { $0.string(source.downSinceMs.map(Timestamp.rfc3339)) }
                            json.field("cause") { $0.string(source.cause) }
                        }
                    }
                }
            }
        }
    }

    /// One source's object in the status document.
    static func writeSource(
        _ entry: SourceRecord, health: HealthSummary?, breaker: CircuitBreaker?, blockedBy: [String],
        maintenance: MaintenanceCalendar.Entry?, alerts: [String] = [], held: [String] = [], vendor: VendorView? = nil, nowMs: Int64,
        to json: inout JSONWriter
    ) {
        json.object { json in
            json.field("name") { $0.string(entry.source.name) }
            json.field("kind") { $0.string(entry.source.kind.rawValue) }
            json.field("group") { $0.string(entry.source.group) }
            json.field("url") { $0.string(entry.displayURL) }
            json.field("state") { $0.string(entry.last.map { $0.ok ? "up" : "down" } ?? "pending") }
            json.field("last_result") { json in
                if let last = entry.last { writeResult(last, to: &json) } else { json.string(nil) }
            }
            json.field("last_success_at") { $0.string(entry.lastSuccessMs.map(Timestamp.rfc3339)) }
            json.field("down_since") { $0.string(entry.incident.map { Timestamp.rfc3339($0.downSinceMs) }) }
            json.field("incident") { json in
                guard let incident = entry.incident else { return json.string(nil) }
                json.object { json in
                    json.field("down_since") { $0.string(Timestamp.rfc3339(incident.downSinceMs)) }
                    json.field("down_for_seconds") { $0.int(incident.downForMs(nowMs: nowMs) / 1000) }
                    json.field("down_for") { $0.string(Timestamp.human(incident.downForMs(nowMs: nowMs))) }
                    json.field("failed_probes") { $0.int(Int64(incident.failedProbes)) }
                    json.field("cause") { writeResult(incident.cause, to: &$0) }
                    json.field("breaker") { $0.string((breaker?.state ?? .closed).rawValue) }
                    json.field("alerts") { json in json.array { json in for rule in alerts { json.string(rule) } } }
                }
            }
            json.field("maintenance") { json in
                guard let maintenance else { return json.string(nil) }
                json.object { json in
                    json.field("window") { $0.string(maintenance.window) }
                    json.field("note") { $0.string(maintenance.note) }
                    json.field("ends_at") { $0.string(Timestamp.rfc3339(maintenance.endsAtMs)) }
                }
            }
            if let vendor {
                json.field("vendor") { writeVendor(vendor, downSinceMs: entry.outage.down ? entry.incident?.downSinceMs : nil, to: &$0) }
            }
            json.field("blocked_by") { json in json.array { json in for name in blockedBy { json.string(name) } } }
            // Firing alerts of this source nobody is told of now, each with why ("SourceDown:
            // silenced: deploy").
            json.field("held_alerts") { json in json.array { json in for text in held { json.string(text) } } }
            json.field("wait") { json in
                guard let wait = entry.serverWait(nowMs: nowMs) else { return json.string(nil) }
                json.object { json in
                    json.field("until") { $0.string(Timestamp.rfc3339(wait.untilMs)) }
                    json.field("message") { $0.string(wait.message) }
                }
            }
            json.field("breaker_refused_calls") { $0.int(Int64(clamping: entry.heldBackCalls)) }
            if let breaker {
                json.field("breaker") { json in
                    json.object { json in
                        json.field("state") { $0.string(breaker.state.rawValue) }
                        json.field("consecutive_failures") { $0.int(Int64(breaker.consecutiveFailures)) }
                        json.field("open_count") { $0.int(Int64(breaker.openCount)) }
                        json.field("next_attempt_at") { $0.string(breaker.nextAttemptAtMs.map(Timestamp.rfc3339)) }
                    }
                }
            }
            json.field("error_rate") { json in
                json.object { json in
                    for (window, ms) in HealthWindow.errorRates {
                        json.field(window) { $0.number(health?.errorRate(windowMs: ms)) }
                    }
                }
            }
            // One attempt's latency, as the page's row and `lookout_probe_latency_seconds` give it.
            json.field("latency") { json in
                json.object { json in
                    json.field("p50_seconds") { $0.number(entry.recentDurations.quantile(0.5)) }
                    json.field("p95_seconds") { $0.number(entry.recentDurations.quantile(0.95)) }
                }
            }
            json.field("availability_24h") { $0.number(health?.availability(windowMs: HealthWindow.day)) }
            json.field("fallback_in_use") { $0.string(entry.last?.fallbackInUse) }
            if let download = entry.download {
                json.field("download") { json in
                    json.object { json in
                        json.field("state") { $0.string(download.state.rawValue) }
                        json.field("bytes") { $0.int(download.bytes) }
                        json.field("total") { $0.int(download.total) }
                        json.field("progress") { $0.number(download.ratio) }
                        json.field("throughput_bytes_per_second") { $0.number(download.throughputBytesPerSecond) }
                        json.field("resumes") { $0.int(Int64(download.resumes)) }
                        json.field("sha256") { $0.string(download.sha256) }
                        json.field("verified") { $0.bool(download.verified) }
                    }
                }
            }
        }
    }

    /// What a source's vendor says (`vendor_status`), beside what we see.
    static func writeVendor(_ vendor: VendorView, downSinceMs: Int64?, to json: inout JSONWriter) {
        json.object { json in
            json.field("page") { $0.string(vendor.vendor) }
            json.field("name") { $0.string(vendor.pageName) }
            json.field("state") { $0.string(vendor.state.rawValue) }
            json.field("status") { $0.string(vendor.state == .unread || vendor.state == .unreadable ? nil : vendor.level.statuspage) }
            json.field("says") { $0.string(vendor.sentence(downSinceMs: downSinceMs)) }
            json.field("link") { $0.string(vendor.link) }
            json.field("problem") { $0.string(vendor.problem) }
            json.field("read_at") { $0.string(vendor.lastReadMs.map(Timestamp.rfc3339)) }
            json.field("incident") { json in
                guard let incident = vendor.incident ?? vendor.maintenance else { return json.string(nil) }
                json.object { json in
                    json.field("name") { $0.string(incident.name) }
                    json.field("status") { $0.string(incident.status) }
                    json.field("impact") { $0.string(incident.impact.statuspage) }
                    json.field("maintenance") { $0.bool(incident.isMaintenance) }
                    json.field("latest_update") { $0.string(incident.latestUpdate) }
                    json.field("shortlink") { $0.string(incident.shortlink) }
                    json.field("started_at") { $0.string(incident.startedAtMs.map(Timestamp.rfc3339)) }
                }
            }
            json.field("acknowledged_after_seconds") { json in
                guard let followed = vendor.followed, let acknowledged = followed.acknowledgedAtMs else { return json.string(nil) }
                json.int(max(0, acknowledged - followed.downSinceMs) / 1000)
            }
        }
    }

    /// A probe result as a JSON object.
    static func result(_ result: ProbeResult) -> String {
        var json = JSONWriter(capacity: 512)
        writeResult(result, to: &json)
        return json.text
    }

    static func writeResult(_ result: ProbeResult, to json: inout JSONWriter) {
        let failure = result.failure
        json.object { json in
            json.field("at") { $0.string(Timestamp.rfc3339(result.timestampMs)) }
            json.field("ok") { $0.bool(result.ok) }
            json.field("category") { $0.string(failure?.category.rawValue) }
            json.field("reason") { $0.string(failure?.reason) }
            json.field("http_status") { $0.int(result.httpStatus.map(Int64.init)) }
            json.field("attempts") { $0.int(Int64(result.attempts)) }
            json.field("latency_seconds") { $0.number(result.attemptSeconds) }
            json.field("call_duration_seconds") { $0.number(result.durationSeconds) }
            json.field("duration_seconds") { $0.number(result.durationSeconds) }
            json.field("title") { $0.string(failure?.title) }
            json.field("message") { $0.string(result.message) }
            json.field("recovery") { $0.string(failure?.recoverySuggestion) }
            json.field("server_message") { $0.string(failure?.serverMessage) }
            if let steps = result.steps {
                // A flow's steps: what each did, never what it captured.
                json.field("steps") { json in
                    json.array { json in
                        for step in steps {
                            json.object { json in
                                json.field("name") { $0.string(step.name) }
                                json.field("finally") { $0.bool(step.isFinally) }
                                json.field("outcome") { $0.string(step.ok.map { $0 ? "passed" : "failed" } ?? "not run") }
                                json.field("http_status") { $0.int(step.httpStatus.map(Int64.init)) }
                                json.field("seconds") { $0.number(step.seconds) }
                                json.field("reason") { $0.string(step.reason) }
                            }
                        }
                    }
                }
            }
        }
    }
}
