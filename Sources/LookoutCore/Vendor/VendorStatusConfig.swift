/// `vendor_status: {url: https://status.example.com, components: ["API"]}` on a source, or on a
/// group (`groups: {payments: {vendor_status: …}}`) for every source of the group that gives
/// none: the vendor's own status page, read beside our probes.
package struct VendorStatusConfig: Sendable, Equatable, Hashable {
    /// The page: a base URL (`https://www.githubstatus.com`, the document is found) or the
    /// document itself (`…/api/v2/summary.json`, `…/history.atom`).
    package var url: String
    /// The vendor's components this source depends on, by name or id; empty: the page as a whole.
    package var components: [String] = []
    /// The format, or nil to find it: `/api/v2/summary.json`, `/summary.json`, `/index.json`,
    /// `/api/v1/summary` (incident.io's widget API), `/history.atom` are tried in turn on a base
    /// URL.
    package var format: VendorPage.Format?
    /// How often the page is read: at least a minute (a vendor page is not ours to load).
    package var interval: Duration = .seconds(120)
    /// The vendor's maintenance in progress on a watched component holds back notifications and
    /// leaves availability untouched. Off by default: a vendor's maintenance can break us as
    /// much as an outage does, and by default we report what we see.
    package var respectMaintenance = false

    package init(url: String, components: [String] = []) {
        self.url = url
        self.components = components
    }

    /// The shortest interval accepted.
    package static let minimumInterval: Duration = .seconds(60)

    /// The documents tried on a base URL, in turn. Each is read as `format` when one is given,
    /// and otherwise by the shape it has: a document found under a base URL reads as it would
    /// with `format:`, and one in no known shape (`{}`) is unreadable, never "operational".
    package var candidates: [(url: String, format: VendorPage.Format?)] {
        let lower = url.lowercased()
        if lower.hasSuffix(".json") || lower.hasSuffix(".atom") || lower.hasSuffix(".rss") || lower.hasSuffix("/api/v1/summary") || lower.contains("?") {
            return [(url, format)]
        }
        let base = url.hasSuffix("/") ? String(url.dropLast()) : url
        let all: [(String, VendorPage.Format)] = [
            ("/api/v2/summary.json", .statuspage), ("/summary.json", .instatus), ("/index.json", .betterstack), ("/api/v1/summary", .incidentIOWidget),
            ("/history.atom", .feed),
        ]
        return all.filter { format == nil || $0.1 == format }.map { (base + $0.0, format) }
    }
}
