import LookoutAlerting
import LookoutCore
import LookoutStore
import MicroHTTPServer

/// Everything the web side reads from or acts on.
public struct LookoutContext: Sendable {
    public var monitor: Monitor
    public var writer: RecordWriter?
    public var database: LookoutDatabase?
    public var alerts: AlertService?
    public var outbox: OutboxDeliverer?
    /// The serving HTTP server's counters, for `/metrics`.
    public var server: HTTPServerStatistics?

    public init(
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
