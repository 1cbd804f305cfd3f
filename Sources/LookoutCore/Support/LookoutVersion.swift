import ResilientHTTP

/// Lookout's version: in the User-Agent of every request, `lookout_build_info`, the status page's
/// footer and `--version`.
public enum LookoutVersion {
    /// `MAJOR.MINOR.PATCH`, without a leading `v`.
    public static let string = "0.1.0"
    /// How Lookout names itself to upstreams and mail relays: `Lookout/0.1.0`.
    public static let userAgent = "Lookout/\(string)"
}

extension CurlTransport {
    /// A transport that names Lookout in every request's `User-Agent`.
    package static func lookout() -> CurlTransport {
        CurlTransport(userAgent: LookoutVersion.userAgent)
    }
}
