import Foundation
import Logging
import LookoutAlerting
import LookoutCore
import LookoutStore
import MicroHTTPServer
import ResilientHTTP

/// Everything the web side reads from or acts on: every part is there, running or not, so a
/// route never asks whether the database or alerting exists.
package struct LookoutContext: Sendable {
    package var monitor: Monitor
    package var writer: RecordWriter
    package var database: LookoutDatabase
    package var alerts: AlertService
    package var outbox: OutboxDeliverer
    /// The serving HTTP server's counters, for `/metrics`.
    package var server: HTTPServerStatistics
    /// The other instances of `peers`, for one view over all of them (none configured: none).
    package var peers: Peers
    /// This instance's name among its shard's replicas (`--replica`), on `lookout_build_info`.
    package var replica: String?
    /// A random id for this process, in the status JSON: a peer list may name this instance
    /// itself (one config for every instance), and `Peers` skips the peer that answers with it.
    package var instanceID: String
    /// How long nothing was probed before this start (`RunStore`), if that was a while.
    package var monitoringGap: MonitoringGap?
    /// How long after the start the page and the JSON API tell of `monitoringGap`.
    package static let gapShownMs: Int64 = 86_400_000

    /// `monitoringGap` while it is told: for a day after the start.
    package func recentGap(nowMs: Int64) -> MonitoringGap? {
        guard let gap = monitoringGap, nowMs - gap.toMs < LookoutContext.gapShownMs else { return nil }
        return gap
    }

    /// The parts wired over `monitor` and `database`, none of their loops running:
    /// `LookoutApp.build` starts them, tests and benchmarks serve from them as they are.
    /// `writer` is the one `monitor` already sends its records to, if it was made first.
    package init(monitor: Monitor, database: LookoutDatabase, writer: RecordWriter? = nil, logger: Logger = Logger(label: "lookout")) {
        let writer = writer ?? RecordWriter(database: database, logger: logger)
        let alerts = AlertService(monitor: monitor, store: AlertStore(database: database), logger: logger)
        let outbox = OutboxDeliverer(hooks: { monitor.config.hooks }, store: OutboxStore(database: database), client: ResilientClient(), logger: logger)
        alerts.onStored { outbox.poke() }
        // Each outage's start and end by its policy, for the SLA reports.
        monitor.registry.onOutageEdge { [weak writer] edge in writer?.enqueue(.outageEdge(edge, location: monitor.config.location)) }
        self.monitor = monitor
        self.writer = writer
        self.database = database
        self.alerts = alerts
        self.outbox = outbox
        self.server = HTTPServerStatistics()
        let instanceID = UUID().uuidString
        self.instanceID = instanceID
        self.peers = Peers(urls: { monitor.config.peers }, instanceID: instanceID)
    }

    /// Over an in-memory database: for tests, benchmarks and the fuzzer.
    package init(monitor: Monitor) throws {
        self.init(monitor: monitor, database: try LookoutDatabase(path: ":memory:"))
    }
}
