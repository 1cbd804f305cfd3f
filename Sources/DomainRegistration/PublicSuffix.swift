internal import CPSL

#if canImport(Glibc)
    import Glibc
#endif

/// The registrable domain of a host — the part a registrant bought, `acme.com` of
/// `api.eu.acme.com`, `bbc.co.uk` of `www.bbc.co.uk` — by the Public Suffix List (libpsl).
///
/// ```swift
/// PublicSuffix.registrableDomain(of: "api.eu.acme.com")   // "acme.com"
/// PublicSuffix.registrableDomain(of: "10.0.0.7")          // nil: an address has no registration
/// ```
public enum PublicSuffix {
    /// libpsl loads its list once; the first call may come from any thread.
    private static let loaded: Bool = lookout_psl_list() != nil

    public static func registrableDomain(of host: String) -> String? {
        var host = host.lowercased()
        if host.hasSuffix(".") { host.removeLast() }
        if host.hasPrefix("[") || isAddress(host) || host.isEmpty || !loaded { return nil }
        guard host.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { return nil }
        return host.withCString { pointer in
            lookout_psl_registrable_domain(pointer).map { String(cString: $0) }
        }
    }

    /// An IPv4 or IPv6 literal.
    static func isAddress(_ text: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, text, &v4) == 1 || inet_pton(AF_INET6, text, &v6) == 1
    }
}
