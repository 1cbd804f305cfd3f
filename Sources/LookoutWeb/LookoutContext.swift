import Foundation
import LookoutAlerting
import LookoutCore
import LookoutStore
import MicroHTTPServer

/// Everything the web side reads from or acts on.
package struct LookoutContext: Sendable {
    package var monitor: Monitor
    package var writer: RecordWriter?
    package var database: LookoutDatabase?
    package var alerts: AlertService?
    package var outbox: OutboxDeliverer?
    /// The serving HTTP server's counters, for `/metrics`.
    package var server: HTTPServerStatistics?
    /// The other instances of `peers`, for one view over all of them.
    package var peers: Peers?
    /// This instance's name among its shard's replicas (`--replica`), on `lookout_build_info`.
    package var replica: String?
    /// A random id for this process, in the status JSON: a peer list may name this instance
    /// itself (one config for every instance), and `Peers` skips the peer that answers with it.
    package var instanceID = UUID().uuidString
    /// How long nothing was probed before this start (`RunStore`), if that was a while.
    package var monitoringGap: MonitoringGap?
    /// How long after the start the page and the JSON API tell of `monitoringGap`.
    package static let gapShownMs: Int64 = 86_400_000

    /// `monitoringGap` while it is told: for a day after the start.
    package func recentGap(nowMs: Int64) -> MonitoringGap? {
        guard let gap = monitoringGap, nowMs - gap.toMs < LookoutContext.gapShownMs else { return nil }
        return gap
    }

    package init(
        monitor: Monitor, writer: RecordWriter? = nil, database: LookoutDatabase? = nil, alerts: AlertService? = nil,
        outbox: OutboxDeliverer? = nil, server: HTTPServerStatistics? = nil
    ) {
        self.server = server
        self.monitor = monitor
        self.writer = writer
        self.database = database
        self.alerts = alerts
        self.outbox = outbox
    }
}
