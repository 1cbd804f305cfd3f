import Logging
import LookoutAlerting
import LookoutCore
import LookoutStore

/// What a start takes back from the database, in two steps around `Monitor.start()`: first the
/// run (how long nothing was probed, `MonitoringGap`) and the config's source ids, then the
/// outages in progress, rollups, breakers, history, maintenance and alerts. A file that cannot be
/// read or written loses this state, never the service: each step logs what it could not do.
package struct SavedState {
    let database: LookoutDatabase
    let writer: RecordWriter
    let monitor: Monitor
    let alerts: AlertService
    let logger: Logger
    package let runs: RunStore
    package let startedAtMs = Timestamp.nowMs()
    /// How long nothing was probed before this start (nil: not known, or no earlier run).
    package private(set) var gap: MonitoringGap?
    /// This start is in the database (so outages in progress can be trusted to go on).
    private(set) var runRecorded = false

    package init(database: LookoutDatabase, writer: RecordWriter, monitor: Monitor, alerts: AlertService, logger: Logger) {
        self.database = database
        self.writer = writer
        self.monitor = monitor
        self.alerts = alerts
        self.logger = logger
        runs = RunStore(database: database)
    }

    /// Before probing: records this start (and reads the gap before it), and gives the config's
    /// sources their ids, renames first, now and before every reload takes effect.
    package mutating func begin(_ config: LookoutConfig) {
        if database.unwritableReason == nil {
            do {
                gap = try runs.begin(nowMs: startedAtMs)
                runRecorded = true
            } catch {
                logger.error("cannot record this start in the database", metadata: ["database": "\(database.path)", "error": "\(error)"])
            }
        }
        if let gap {
            logger.warning(
                "Lookout was not running; nothing was probed in between",
                metadata: [
                    "from": "\(Timestamp.rfc3339(gap.fromMs))", "to": "\(Timestamp.rfc3339(gap.toMs))",
                    "for": "\(ConfigValues.format(.seconds(gap.durationMs / 1000)))",
                ])
        }
        let syncSources = SavedState.sourceSync(database: database, writer: writer, logger: logger)
        syncSources(config)
        monitor.beforeApplying(syncSources)
    }

    /// Once the registry lists the configured sources (`Monitor.start()`), so the history of
    /// sources no longer configured, or of other shards, is not taken back.
    package func restore() {
        // Outages in progress at the last stop go on (the first failure counts from their start),
        // unless Lookout was not running for a while: what happened meanwhile is not known. When
        // they cannot be read, the first write that works clears them, before this run's.
        do {
            let outages =
                database.unwritableReason == nil
                ? try writer.loadOutages(sources: monitor.ownSources.map(\.name), forget: gap != nil || !runRecorded) : nil
            if outages == nil { writer.enqueue(.forgetOutages) }
            for outage in outages ?? [] {
                monitor.registry.restoreOutage(
                    source: outage.source, downSinceMs: outage.downSinceMs, failedProbes: outage.failedProbes, cause: outage.cause)
            }
        } catch {
            writer.enqueue(.forgetOutages)
            logger.error("cannot read the outages in progress at the last stop", metadata: ["database": "\(database.path)", "error": "\(error)"])
        }
        do {
            try writer.loadRecentRollups()
            monitor.restore(breakers: try BreakerStore.load(database))
            monitor.vendors.restore(try VendorStore(database: database).load())
            monitor.pushes.restore(try PushStore(database: database).load())
            if let bootstrap = try RDAPStore(database: database).load() { monitor.domains.restore(bootstrap: bootstrap) }
            try HistoryStore.restore(into: monitor.registry, from: database, nowMs: Timestamp.nowMs())
            // Maintenance first: the restored alerts' holds include it.
            monitor.maintenance.set(added: try MaintenanceStore(database: database).current(nowMs: Timestamp.nowMs()))
        } catch {
            logger.error("cannot read the saved state; starting without it", metadata: ["database": "\(database.path)", "error": "\(error)"])
        }
        do { try alerts.restore(after: gap) } catch {
            logger.error("cannot read the saved alerts; starting without them", metadata: ["database": "\(database.path)", "error": "\(error)"])
        }
    }

    /// Ids for a config's sources, renames first, before any of its probes is written (the
    /// stand-in of an unwritable file keeps nothing).
    static func sourceSync(database: LookoutDatabase, writer: RecordWriter, logger: Logger) -> @Sendable (LookoutConfig) -> Void {
        { config in
            guard database.unwritableReason == nil else { return }
            do {
                for (old, new) in try writer.sourceIds.sync(database, sources: config.sources, nowMs: Timestamp.nowMs()) {
                    logger.info("source renamed; its history follows it", metadata: ["from": "\(old)", "to": "\(new)"])
                }
            } catch {
                logger.error("cannot record the config's sources in the database", metadata: ["database": "\(database.path)", "error": "\(error)"])
            }
        }
    }
}
