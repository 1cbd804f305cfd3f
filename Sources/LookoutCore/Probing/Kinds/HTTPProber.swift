extension SourceKind {
    package static let http = SourceKind(declaring: "http")
}

/// `kind: http`: the status (`expect.status`, 2xx by default), and what every kind may ask
/// (`max_latency`, `body_contains`).
package enum HTTPProber: Prober {
    package static let kind = SourceKind.http
    package static let summary = "the status, latency and body text"
}
