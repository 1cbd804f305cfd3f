import Foundation
import ResilientHTTP

/// One watched upstream, with every default already applied.
///
/// Its fields live behind one reference, copied on write: the config's list and the registry's
/// record share one copy where each held 872 bytes inline (RSS at 10,000 sources 144 → 135 MiB),
/// and sources read from the same `defaults` share them until they write. Fields read as
/// properties of the source (`source.url`, `source.policy.auth = …`).
@dynamicMemberLookup
package struct SourceConfig: Sendable, Equatable {
    package struct Fields: Sendable, Equatable {
        /// Unique, `[A-Za-z0-9._-]{1,64}`.
        package var name: String
        package var kind: SourceKind
        package var url: String
        package var method: String = "GET"
        package var headers: [HeaderField] = []
        /// Send `headers` on a redirect to another origin too (`forward_headers_on_redirect`).
        package var forwardHeadersOnRedirect = false
        package var interval: Duration
        /// Per attempt.
        package var timeout: Duration
        /// Retries, breaker, rate limit, auth and HTTPS policy, as the client takes them.
        package var policy = UpstreamPolicy()
        package var expect = Expectations()
        /// Another source shown while this one is down.
        package var fallback: String?
        /// Sources this one needs: while one of them is down, this one's alerts are held back
        /// (its failure is theirs) and the page says "blocked by".
        package var dependsOn: [String] = []
        /// Names this source had before, oldest first: its stored history moves to the new name.
        package var renamedFrom: [String] = []
        package var labels: [String: String] = [:]
        /// Where the status page lists it (`group`, else the label `status_page.group_by` names).
        package var group: String?
        /// Downloads: the expected SHA-256 in hex.
        package var sha256: String?
        /// https:// and tls:// sources: a PEM file of certificates to trust instead of the system's.
        package var caFile: String?
        /// `module: NAME`: the `/probe` module whose request and checks this source uses too (its
        /// method, headers, body, statuses, TLS settings and blackbox checks), resolved when the
        /// config is read.
        package var module: ProbeModule? {
            get { moduleStorage?.value }
            set { moduleStorage = newValue.map(Shared.init) }
        }
        /// Behind a reference: inline, an absent module would take 800 bytes of every source's
        /// fields.
        private var moduleStorage: Shared<ProbeModule>?
        /// `kind: push`: when its job must call in, and its token.
        package var push: PushSettings? {
            get { pushStorage?.value }
            set { pushStorage = newValue.map(Shared.init) }
        }
        /// Behind a reference, as `module` is: only push sources have one.
        private var pushStorage: Shared<PushSettings>?
        /// `sla`: what its vendor promised (its own, its group's or the defaults').
        package var sla: SLASettings? {
            get { slaStorage?.value }
            set { slaStorage = newValue.map(Shared.init) }
        }
        private var slaStorage: Shared<SLASettings>?
        /// The source gave `sla` itself (a group's does not override it).
        var ownsSLA = false
        /// `kind: flow`: its steps and clean-up.
        package var flow: FlowSettings? {
            get { flowStorage?.value }
            set { flowStorage = newValue.map(Shared.init) }
        }
        private var flowStorage: Shared<FlowSettings>?
        /// Downloads: more bytes than this fail as `too_large`.
        package var maxBytes: Int64?
        /// `domain_expiry`: watch when the registration of `registrationDomain` expires.
        package var watchesDomain = false
        /// The domain `domain_expiry` names, or the registrable domain of the URL's host; nil when
        /// it has none (an address).
        package var registrationDomain: String?
        /// When failed probes make an outage, and when it ends.
        package var outage = OutagePolicy()
        /// The longest a source told to wait (Retry-After, RateLimit reset) goes unprobed.
        package var maxServerWait: Duration = .seconds(3600)
        /// The vendor's own status page, read beside the probes (its own or its group's).
        package var vendorStatus: VendorStatusConfig?
        /// What customers read on the public page, the badges and `/api/v2` instead of `name`.
        package var displayName: String?
        /// A line under the name on the public page ("Card payments in the EU").
        package var description: String?
        /// Shown on the public page, its badges and `/api/v2`; false keeps it to the on-call page.
        package var isPublic = true

        init(name: String, kind: SourceKind, url: String, interval: Duration, timeout: Duration) {
            self.name = name
            self.kind = kind
            self.url = url
            self.interval = interval
            self.timeout = timeout
        }
    }

    /// Written only through `subscript(dynamicMember:)`'s setter, which copies it first unless
    /// this value is its only holder: no two holders ever see a write.
    private final class Storage: @unchecked Sendable {
        var fields: Fields

        init(_ fields: Fields) {
            self.fields = fields
        }
    }

    private var storage: Storage

    package subscript<Value>(dynamicMember field: WritableKeyPath<Fields, Value>) -> Value {
        get { storage.fields[keyPath: field] }
        set { uniqueStorage().fields[keyPath: field] = newValue }
    }

    /// The storage, copied first unless this value is its only holder.
    private mutating func uniqueStorage() -> Storage {
        if !isKnownUniquelyReferenced(&storage) { storage = Storage(storage.fields) }
        return storage
    }

    // The fields read most, on every probe, scrape and start, as plain accessors: read through
    // the key path of `subscript(dynamicMember:)` from another module, each read cost about 740
    // instructions (the runtime projects the key path); these cost a call.
    package var name: String {
        get { storage.fields.name }
        set { uniqueStorage().fields.name = newValue }
    }
    package var kind: SourceKind {
        get { storage.fields.kind }
        set { uniqueStorage().fields.kind = newValue }
    }
    package var url: String {
        get { storage.fields.url }
        set { uniqueStorage().fields.url = newValue }
    }
    package var interval: Duration {
        get { storage.fields.interval }
        set { uniqueStorage().fields.interval = newValue }
    }
    package var timeout: Duration {
        get { storage.fields.timeout }
        set { uniqueStorage().fields.timeout = newValue }
    }
    package var policy: UpstreamPolicy {
        get { storage.fields.policy }
        set { uniqueStorage().fields.policy = newValue }
    }
    package var expect: Expectations {
        get { storage.fields.expect }
        set { uniqueStorage().fields.expect = newValue }
    }
    package var headers: [HeaderField] {
        get { storage.fields.headers }
        set { uniqueStorage().fields.headers = newValue }
    }
    package var labels: [String: String] {
        get { storage.fields.labels }
        set { uniqueStorage().fields.labels = newValue }
    }
    package var group: String? {
        get { storage.fields.group }
        set { uniqueStorage().fields.group = newValue }
    }
    package var displayName: String? {
        get { storage.fields.displayName }
        set { uniqueStorage().fields.displayName = newValue }
    }
    package var isPublic: Bool {
        get { storage.fields.isPublic }
        set { uniqueStorage().fields.isPublic = newValue }
    }
    package var module: ProbeModule? {
        get { storage.fields.module }
        set { uniqueStorage().fields.module = newValue }
    }
    package var sla: SLASettings? {
        get { storage.fields.sla }
        set { uniqueStorage().fields.sla = newValue }
    }
    package var dependsOn: [String] {
        get { storage.fields.dependsOn }
        set { uniqueStorage().fields.dependsOn = newValue }
    }
    package var renamedFrom: [String] {
        get { storage.fields.renamedFrom }
        set { uniqueStorage().fields.renamedFrom = newValue }
    }
    package var vendorStatus: VendorStatusConfig? {
        get { storage.fields.vendorStatus }
        set { uniqueStorage().fields.vendorStatus = newValue }
    }
    package var push: PushSettings? {
        get { storage.fields.push }
        set { uniqueStorage().fields.push = newValue }
    }
    package var caFile: String? {
        get { storage.fields.caFile }
        set { uniqueStorage().fields.caFile = newValue }
    }
    package var watchesDomain: Bool {
        get { storage.fields.watchesDomain }
        set { uniqueStorage().fields.watchesDomain = newValue }
    }
    package var registrationDomain: String? {
        get { storage.fields.registrationDomain }
        set { uniqueStorage().fields.registrationDomain = newValue }
    }

    package static func == (lhs: SourceConfig, rhs: SourceConfig) -> Bool {
        lhs.storage === rhs.storage || lhs.storage.fields == rhs.storage.fields
    }

    package init(name: String, kind: SourceKind = .http, url: String, interval: Duration = .seconds(30), timeout: Duration = .seconds(10)) {
        storage = Storage(Fields(name: name, kind: kind, url: url, interval: interval, timeout: timeout))
    }

    /// The name customers read: `display_name`, else `name`.
    package var publicName: String { self.displayName ?? self.name }

    /// The host (and port) a source at `url` lives on; the URL itself when it has none.
    package static func hostAndPort(of url: String) -> String {
        guard let parts = URLParts(url), let host = parts.host else { return url }
        return parts.port.map { "\(host):\($0)" } ?? host
    }

    /// The host name of `url` (no port), lowercased; the URL itself when it has none.
    package static func hostName(of url: String) -> String {
        (URLParts(url)?.host ?? url).lowercased()
    }
}
