import ResilientHTTP

/// The kind of probe a source has, by the name its config gives (`kind: json`). Each kind is
/// declared beside its prober (`SourceKind.json` in `JSONProber.swift`); only kinds listed in
/// `Probers.all` can be read from a config.
package struct SourceKind: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    package let rawValue: String

    /// The registered kind named `rawValue`, or nil.
    package init?(rawValue: String) {
        guard Probers.all.contains(where: { $0.kind.rawValue == rawValue }) else { return nil }
        self.rawValue = rawValue
    }

    /// Declares a kind, in its prober's file.
    init(declaring name: String) {
        rawValue = name
    }

    package var description: String { rawValue }
}

/// One kind of source: the keys only it reads, what it requires of an answer, and how it probes.
///
/// A new kind is one file in this folder (its `SourceKind`, a type conforming to `Prober`, its
/// checks), its tests, and one line in `Probers.all`; the config reader, `lookout probe --kind`
/// and the docs test take the list from there.
package protocol Prober: SendableMetatype {
    /// The `kind:` that names it.
    static var kind: SourceKind { get }
    /// What a probe of this kind checks, in a few words, for help texts and the docs.
    static var summary: String { get }
    /// Keys only this kind reads (`sha256`, `expect.json_path`): on a source of another kind each
    /// is a config error.
    static var ownKeys: [String] { get }
    /// Whether a probe is one HTTP request, judged by its answer: such a source may name a
    /// `/probe` module (`module:`), and such a module is served at `/probe`.
    static var isHTTPRequest: Bool { get }
    /// Whether a probe runs its transfers on `CurlTransport`'s threads (an HTTP request, a
    /// download, a flow's steps, a gRPC call), not a socket or a push of its own.
    static var usesTransferThreads: Bool { get }
    /// Whether `check` reads the answer; without it and without shared expectations (latency,
    /// body text) a call has no validator at all.
    static var checksAnswer: Bool { get }
    /// What is wrong with a source's `url` for this kind, or nil (default: an http(s) URL).
    static func urlProblem(_ url: String) -> String?
    /// Judges an answer whose status the source accepts: nil when it passes.
    static func check(_ result: TransferResult, _ source: SourceConfig) -> Failure?
    /// One probe of `source` (default: one call through the resilient client, judged by the
    /// shared expectations and `check`).
    static func probe(_ source: SourceConfig, with prober: SourceProber, breakerCountsFailures: Bool) async -> ProbeResult
}

extension Prober {
    package static var ownKeys: [String] { [] }
    package static var checksAnswer: Bool { false }
    package static var isHTTPRequest: Bool { true }
    package static var usesTransferThreads: Bool { true }
    package static func check(_ result: TransferResult, _ source: SourceConfig) -> Failure? { nil }
    package static func urlProblem(_ url: String) -> String? { ProbeURL.problem(url) }

    package static func probe(_ source: SourceConfig, with prober: SourceProber, breakerCountsFailures: Bool) async -> ProbeResult {
        await prober.call(source, breakerCountsFailures: breakerCountsFailures)
    }
}

/// Every kind of source, one line each.
package enum Probers {
    package static let all: [any Prober.Type] = [
        HTTPProber.self, JSONProber.self, FeedProber.self, DownloadProber.self, TCPProber.self, TLSProber.self, DNSProber.self, ICMPProber.self,
        GRPCProber.self, PushProber.self, FlowProber.self,
    ]

    private static let byKind: [SourceKind: any Prober.Type] = Dictionary(uniqueKeysWithValues: all.map { ($0.kind, $0) })

    /// The prober of `kind` (every `SourceKind` comes from this list); a lookup per probe.
    package static func prober(for kind: SourceKind) -> any Prober.Type {
        byKind[kind] ?? HTTPProber.self
    }

    /// "http, json, rss, download, tcp or tls", for messages.
    package static var names: String { listed(all) }

    /// The kinds that are one HTTP request ("http, json or rss"), for messages.
    package static var httpRequestNames: String { listed(all.filter { $0.isHTTPRequest }) }

    private static func listed(_ probers: [any Prober.Type]) -> String {
        probers.map { $0.kind.rawValue }.listedWithOr
    }
}
