internal import CMemory
import Foundation
import ResilientHTTP
import Synchronization

/// Reads the vendors' own status pages (`vendor_status`) and says, per source, what the vendor
/// says beside what we see: each page is read politely (every `interval`, at least a minute;
/// `If-None-Match`/`If-Modified-Since`; through a `ResilientClient` of its own, so each page has
/// its own breaker and a vendor page that fails costs no source anything), and for each outage
/// of a source it notes when — or whether — its vendor acknowledged it.
package final class VendorWatch: Sendable {
    /// One page as last read.
    package struct Reading: Sendable, Equatable {
        package var config: VendorStatusConfig
        /// The document that answered (a base URL's `/api/v2/summary.json`, say).
        package var document: String?
        package var page: VendorPage?
        package var lastSuccessMs: Int64?
        /// Why the last read failed; nil when it worked.
        package var problem: String?
        package var failingSinceMs: Int64?
        var etag: String?
        var lastModified: String?
        var dueMs: Int64 = 0

        package init(config: VendorStatusConfig) {
            self.config = config
        }

        /// The page's host, as metrics and the page name the vendor.
        package var vendor: String { VendorWatch.host(config.url) }
    }

    /// How a vendor did on our outages: acknowledged ones and how late, and those it never did.
    package struct Record: Sendable, Equatable {
        package var acknowledged = 0
        package var unacknowledged = 0
        /// Seconds from our outage's start to the vendor's incident, summed over acknowledged ones.
        package var lagSecondsSum = 0.0

        package init() {}
    }

    /// An outage of a source being followed: when we saw it and when the vendor said so.
    package struct Followed: Sendable, Equatable {
        package var vendor: String
        package var downSinceMs: Int64
        /// When the vendor's incident (or component status) began, as it says; nil: not yet.
        package var acknowledgedAtMs: Int64?
        package var incident: String?

        package init(vendor: String, downSinceMs: Int64, acknowledgedAtMs: Int64? = nil, incident: String? = nil) {
            self.vendor = vendor
            self.downSinceMs = downSinceMs
            self.acknowledgedAtMs = acknowledgedAtMs
            self.incident = incident
        }
    }

    /// What a restart must not lose: each vendor's record, and the outages being followed (by
    /// source), with what their vendors said so far.
    package struct Saved: Sendable, Equatable {
        package var records: [String: Record] = [:]
        package var followed: [String: Followed] = [:]

        package init(records: [String: Record] = [:], followed: [String: Followed] = [:]) {
            self.records = records
            self.followed = followed
        }
    }

    private struct State {
        var readings: [String: Reading] = [:]
        var followed: [String: Followed] = [:]
        /// The last finished outage of each source, for the notification that it recovered.
        var finished: [String: Followed] = [:]
        var records: [String: Record] = [:]
        /// What was last saved (or restored): `unsaved()` gives only what differs from it.
        var lastSaved: Saved?
    }

    /// A page bigger than this is not read.
    static let maxBytes = 4 << 20
    /// A page this large has its parse's memory handed back to the system after it.
    static let releaseAfterBytes = 256 << 10
    static let timeout: Duration = .seconds(10)
    /// A page that failed is read again this soon, whatever its interval (a vendor page that was
    /// merely down for a moment).
    static let retryMs: Int64 = 60_000

    private let state = Mutex(State())
    private let client: ResilientClient
    private let entries = Mutex<[(source: String, config: VendorStatusConfig)]>([])

    package init(transport: CurlTransport = .lookout()) {
        self.client = ResilientClient(transport: transport)
    }

    /// Each source's `vendor_status` (at start and after each reload).
    package func configure(_ entries: [(source: String, config: VendorStatusConfig)]) {
        self.entries.withLock { $0 = entries }
    }

    private func configs() -> [(source: String, config: VendorStatusConfig)] { entries.withLock { $0 } }

    package static func host(_ url: String) -> String {
        URLParts(url)?.host ?? url
    }

    /// Every configured page as last read, in config order.
    package var readings: [Reading] {
        let known = state.withLock { $0.readings }
        var seen: Set<String> = []
        return configs().compactMap { entry in
            guard seen.insert(entry.config.url).inserted else { return nil }
            return known[entry.config.url] ?? Reading(config: entry.config)
        }
    }

    package func reading(_ url: String) -> Reading? { state.withLock { $0.readings[url] } }

    /// How each vendor did on our outages, by host.
    package var records: [String: Record] { state.withLock { $0.records } }

    /// What a restart must keep, if it changed since the last call; nil if not.
    package func unsaved() -> Saved? {
        state.withLock { state in
            let now = Saved(records: state.records, followed: state.followed)
            guard now != state.lastSaved else { return nil }
            state.lastSaved = now
            return now
        }
    }

    /// The last `unsaved()` could not be saved (a full disk): the next one returns it again.
    package func saveFailed() {
        state.withLock { $0.lastSaved = nil }
    }

    /// Takes back what was saved before a restart (before the first `observe`).
    package func restore(_ saved: Saved) {
        state.withLock { state in
            state.records = saved.records
            state.followed = saved.followed
            state.lastSaved = saved
        }
    }

    // MARK: Reading pages

    /// Reads every page that is due (all of them with `force`), at the same time.
    package func poll(nowMs: Int64 = Timestamp.nowMs(), force: Bool = false) async {
        let configured = configs()
        var unique: [String: VendorStatusConfig] = [:]
        for entry in configured where unique[entry.config.url] == nil { unique[entry.config.url] = entry.config }
        let due: [Reading] = state.withLock { state in
            state.readings = state.readings.filter { unique[$0.key] != nil }
            return unique.values.compactMap { config in
                var reading = state.readings[config.url] ?? Reading(config: config)
                if reading.config != config {
                    reading = Reading(config: config)  // a changed entry is read afresh
                }
                state.readings[config.url] = reading
                return force || reading.dueMs <= nowMs ? reading : nil
            }
        }
        await withTaskGroup(of: Reading.self) { group in
            for reading in due { group.addTask { await self.read(reading, nowMs: nowMs) } }
            for await read in group { state.withLock { $0.readings[read.config.url] = read } }
        }
    }

    /// One read of a page: its known document first, else each candidate in turn.
    private func read(_ before: Reading, nowMs: Int64) async -> Reading {
        var reading = before
        let candidates = before.document.map { document in [(document, before.page?.format)] } ?? before.config.candidates.map { ($0.url, $0.format) }
        var problems: [String] = []
        for (url, format) in candidates {
            var headers: [(name: String, value: String)] = [("Accept", "application/json, application/atom+xml, application/rss+xml;q=0.9, */*;q=0.5")]
            if url == before.document {
                if let etag = before.etag { headers.append(("If-None-Match", etag)) }
                if let lastModified = before.lastModified { headers.append(("If-Modified-Since", lastModified)) }
            }
            // A breaker per configured page, as documented: one host's page that is down must not
            // pause its other pages.
            let upstream = "vendor:" + before.config.url
            client.configure(upstream: upstream, policy: UpstreamPolicy(retry: .none, rateLimit: nil))
            let outcome = await client.call(
                upstream: upstream,
                CallRequest(
                    TransferRequest(url: url, headers: headers, timeout: VendorWatch.timeout, maxResponseBytes: VendorWatch.maxBytes),
                    acceptedStatuses: [200, 304]))
            if let failure = outcome.failure {
                problems.append("\(failure.title.lowercased()) (\(failure.category.rawValue)/\(failure.reason))")
                continue
            }
            guard let result = outcome.final else { continue }
            if result.httpStatus == 304, url == before.document, before.page != nil {
                reading.problem = nil
                reading.failingSinceMs = nil
                reading.lastSuccessMs = nowMs
                reading.dueMs = nowMs + before.config.interval.totalMilliseconds
                return reading
            }
            let parsed = VendorPage.parse(result.body, as: format, nowMs: nowMs)
            // A large page's containers are freed now: the allocator hands their pages back
            // instead of keeping them for a peak that comes once per read.
            if result.body.count > VendorWatch.releaseAfterBytes { lookout_release_free_memory() }
            switch parsed {
            case .success(let page):
                reading.page = page
                reading.document = url
                reading.etag = VendorWatch.header("ETag", in: result)
                reading.lastModified = VendorWatch.header("Last-Modified", in: result)
                reading.problem = nil
                reading.failingSinceMs = nil
                reading.lastSuccessMs = nowMs
                reading.dueMs = nowMs + before.config.interval.totalMilliseconds
                return reading
            case .failure(let problem):
                problems.append(problem.message)
            }
        }
        // A known document that stopped answering is looked for afresh next time.
        reading.document = nil
        reading.etag = nil
        reading.lastModified = nil
        reading.problem = problems.last ?? "no document answered"
        reading.failingSinceMs = reading.failingSinceMs ?? nowMs
        reading.dueMs = nowMs + min(VendorWatch.retryMs, before.config.interval.totalMilliseconds)
        return reading
    }

    static func header(_ name: String, in result: TransferResult) -> String? {
        result.headers.last { $0.name.lowercased() == name.lowercased() }.map(\.value).flatMap { value in
            value.count <= 256 && !value.contains(where: { $0.isNewline }) ? value : nil
        }
    }

    // MARK: What the vendor says about a source

    /// What `config`'s vendor says about what the source watches, as last read.
    package func view(_ config: VendorStatusConfig, source: String? = nil) -> VendorView {
        let reading = state.withLock { $0.readings[config.url] }
        var view = VendorView.of(reading, config: config)
        if let source, let followed = state.withLock({ $0.followed[source] ?? $0.finished[source] }) {
            view.followed = (followed.downSinceMs, followed.acknowledgedAtMs, followed.incident)
        }
        return view
    }

    /// Follows each source's outage against what its vendor says, once per turn: an outage
    /// that ends is counted for its vendor as acknowledged (and how late) or not. Also tells
    /// `maintenance` which sources a vendor's maintenance in progress covers, for those that
    /// respect it.
    package func observe(down: [String: Int64], maintenance: MaintenanceCalendar, nowMs: Int64 = Timestamp.nowMs()) {
        let configured = configs()
        var vendorMaintenance: [String: MaintenanceCalendar.Entry] = [:]
        var views: [String: (VendorStatusConfig, VendorView)] = [:]
        for (source, config) in configured { views[source] = (config, view(config)) }
        state.withLock { state in
            for (source, (config, view)) in views {
                let vendor = VendorWatch.host(config.url)
                if config.respectMaintenance, let work = view.maintenance {
                    vendorMaintenance[source] = MaintenanceCalendar.Entry(
                        window: "vendor: \(work.name)", note: "\(vendor) reports maintenance", endsAtMs: work.endsAtMs ?? nowMs + 10 * 60_000)
                }
                if let since = down[source] {
                    var followed = state.followed[source] ?? Followed(vendor: vendor, downSinceMs: since)
                    if followed.downSinceMs != since { followed = Followed(vendor: vendor, downSinceMs: since) }
                    if followed.acknowledgedAtMs == nil, view.reportsProblem {
                        followed.acknowledgedAtMs = view.incident?.startedAtMs ?? nowMs
                        followed.incident = view.incident?.name ?? view.components.first.map { "\($0.name): \($0.level.words)" }
                    }
                    state.followed[source] = followed
                } else if let followed = state.followed.removeValue(forKey: source) {
                    var record = state.records[followed.vendor] ?? Record()
                    if let acknowledged = followed.acknowledgedAtMs {
                        record.acknowledged += 1
                        record.lagSecondsSum += Double(max(0, acknowledged - followed.downSinceMs)) / 1000
                    } else {
                        record.unacknowledged += 1
                    }
                    state.records[followed.vendor] = record
                    state.finished[source] = followed
                }
            }
            let names = Set(configured.map(\.source))
            state.followed = state.followed.filter { names.contains($0.key) }
            state.finished = state.finished.filter { names.contains($0.key) }
        }
        maintenance.set(vendor: vendorMaintenance)
    }

    /// Reads the pages that are due every 5 s, until cancelled; `observe` is called after each
    /// turn by whoever knows which sources are down.
    package func run(everyTurn: @escaping @Sendable () -> Void) async {
        while !Task.isCancelled {
            if !configs().isEmpty {
                await poll()
                everyTurn()
            }
            do { try await Task.sleep(for: .seconds(5)) } catch { return }
        }
    }
}
