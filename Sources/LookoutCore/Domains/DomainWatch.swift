import DomainRegistration
import Foundation
import Logging
import ResilientHTTP
import Synchronization

/// `domain_expiry`: when the registration of each watched source's domain expires, asked of its
/// registry's RDAP server (the config's `rdap.servers` first, then IANA's bootstrap file, kept in
/// the database so a restart need not fetch it) at start and once a day. A lookup that fails is
/// "not known", logged once, and never an outage of the source.
package final class DomainWatch: Sendable {
    /// What is known of one domain.
    package struct Reading: Sendable, Equatable {
        package var domain: String
        package var expiresMs: Int64?
        /// Why the expiry is not known, when it is not.
        package var problem: String?
        var dueMs: Int64 = 0
    }

    /// The bootstrap file as fetched, for the database.
    package struct SavedBootstrap: Sendable, Equatable {
        package var bytes: [UInt8]
        package var fetchedAtMs: Int64

        package init(bytes: [UInt8], fetchedAtMs: Int64) {
            self.bytes = bytes
            self.fetchedAtMs = fetchedAtMs
        }
    }

    private struct State {
        var readings: [String: Reading] = [:]
        var bootstrap: RDAP.Bootstrap?
        var saved: SavedBootstrap?
        var unsaved = false
    }

    static let maxBytes = 4 << 20
    static let timeout: Duration = .seconds(15)
    static let dayMs: Int64 = 86_400_000
    /// A failed lookup is tried again after this long.
    static let retryMs: Int64 = 3_600_000
    /// The bootstrap file is fetched again after this long.
    static let bootstrapMaxAgeMs: Int64 = 7 * dayMs

    private let state = Mutex(State())
    private let watched = Mutex<(sources: [(source: String, domain: String?)], settings: RDAPSettings)>(([], RDAPSettings()))
    private let client: ResilientClient
    let logger: Logger

    package init(transport: CurlTransport = .lookout(), logger: Logger) {
        client = ResilientClient(transport: transport)
        self.logger = logger
        client.configure(upstream: "rdap", policy: UpstreamPolicy(retry: .none, rateLimit: nil))
    }

    /// The sources with `domain_expiry`, and where to ask.
    package func configure(_ sources: [SourceConfig], settings: RDAPSettings) {
        let entries = sources.filter(\.watchesDomain).map { ($0.name, $0.registrationDomain) }
        watched.withLock { $0 = (entries, settings) }
    }

    /// The domain of each watched source, and what is known of it.
    package var readings: [(source: String, reading: Reading)] {
        let (sources, _) = watched.withLock { $0 }
        let known = state.withLock { $0.readings }
        return sources.map { entry in
            guard let domain = entry.domain else {
                return (entry.source, Reading(domain: "", problem: "its host has no registrable domain (an address, or a public suffix)"))
            }
            return (entry.source, known[domain] ?? Reading(domain: domain))
        }
    }

    /// Takes back the bootstrap file kept in the database.
    package func restore(bootstrap saved: SavedBootstrap) {
        guard let parsed = try? RDAP.Bootstrap(json: saved.bytes) else { return }
        state.withLock { state in
            state.bootstrap = parsed
            state.saved = saved
        }
    }

    /// A newly fetched bootstrap file the database has not kept yet, once.
    package func unsavedBootstrap() -> SavedBootstrap? {
        state.withLock { state in
            defer { state.unsaved = false }
            return state.unsaved ? state.saved : nil
        }
    }

    /// Looks up every domain that is due, one at a time (registries rate-limit).
    package func poll(nowMs: Int64 = Timestamp.nowMs()) async {
        let (sources, settings) = watched.withLock { $0 }
        let domains = Set(sources.compactMap(\.domain))
        let due: [String] = state.withLock { state in
            state.readings = state.readings.filter { domains.contains($0.key) }
            return domains.sorted().filter { (state.readings[$0]?.dueMs ?? 0) <= nowMs }
        }
        for domain in due {
            var reading = state.withLock { $0.readings[domain] } ?? Reading(domain: domain)
            let before = reading.problem
            do throws(RDAP.ReadError) {
                reading.expiresMs = try await lookup(domain, settings: settings, nowMs: nowMs)
                reading.problem = nil
                reading.dueMs = nowMs + DomainWatch.dayMs
            } catch {
                reading.expiresMs = nil
                reading.problem = error.description
                reading.dueMs = nowMs + DomainWatch.retryMs
                if before != error.description {
                    logger.warning("cannot tell when a domain expires", metadata: ["domain": "\(domain)", "problem": "\(error.description)"])
                }
            }
            state.withLock { $0.readings[domain] = reading }
        }
    }

    /// Polls every minute until cancelled; `everyTurn` runs after each poll.
    package func run(everyTurn: @escaping @Sendable () -> Void) async {
        while !Task.isCancelled {
            if !watched.withLock({ $0.sources.isEmpty }) {
                await poll()
                everyTurn()
            }
            do { try await Task.sleep(for: .seconds(5)) } catch { return }
        }
    }

    private func lookup(_ domain: String, settings: RDAPSettings, nowMs: Int64) async throws(RDAP.ReadError) -> Int64 {
        let tld = String(domain.split(separator: ".").last ?? "")
        var servers = settings.servers[tld].map { [$0] } ?? []
        if servers.isEmpty { servers = try await bootstrap(settings, nowMs: nowMs).servers(forTLD: tld) }
        guard let server = servers.first else { throw RDAP.ReadError(description: "no RDAP server answers for .\(tld)") }
        let body = try await fetch(RDAP.domainURL(base: server, domain: domain), accepting: [200])
        let date = try RDAP.expiration(json: body, now: Date(timeIntervalSince1970: Double(nowMs) / 1000))
        return Int64(date.timeIntervalSince1970 * 1000)
    }

    private func bootstrap(_ settings: RDAPSettings, nowMs: Int64) async throws(RDAP.ReadError) -> RDAP.Bootstrap {
        let (known, fetchedMs) = state.withLock { ($0.bootstrap, $0.saved?.fetchedAtMs) }
        if let known, let fetchedMs, nowMs - fetchedMs < DomainWatch.bootstrapMaxAgeMs { return known }
        do {
            let bytes = try await fetch(settings.bootstrapURL, accepting: [200])
            let parsed = try RDAP.Bootstrap(json: bytes)
            state.withLock { state in
                state.bootstrap = parsed
                state.saved = SavedBootstrap(bytes: bytes, fetchedAtMs: nowMs)
                state.unsaved = true
            }
            return parsed
        } catch {
            // An old copy is better than none.
            if let known { return known }
            throw RDAP.ReadError(description: "the RDAP bootstrap file: \(error.description)")
        }
    }

    private func fetch(_ url: String, accepting statuses: Set<Int>) async throws(RDAP.ReadError) -> [UInt8] {
        let outcome = await client.call(
            upstream: "rdap",
            CallRequest(
                TransferRequest(
                    url: url, headers: [("Accept", "application/rdap+json, application/json")], timeout: DomainWatch.timeout,
                    maxResponseBytes: DomainWatch.maxBytes),
                acceptedStatuses: statuses))
        if let failure = outcome.failure {
            if failure.httpStatus == 404 { throw RDAP.ReadError(description: "the registry does not know the domain (404)") }
            throw RDAP.ReadError(description: "\(url): \(failure.whatHappened)")
        }
        return outcome.final?.body ?? []
    }
}

/// `rdap`: where domain expiry is asked.
package struct RDAPSettings: Sendable, Equatable {
    package var bootstrapURL = "https://data.iana.org/rdap/dns.json"
    /// RDAP base URLs by top-level domain, asked before the bootstrap file's.
    package var servers: [String: String] = [:]

    package init() {}
}
