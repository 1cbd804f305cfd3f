internal import CCurl
import Foundation

/// `localhost` when a probe names its IP version (blackbox's `preferred_ip_protocol`), resolved
/// as blackbox_exporter does.
///
/// libcurl answers `localhost` and `*.localhost` itself (127.0.0.1 and ::1, RFC 6761), never
/// asking the system; Go's resolver, which blackbox_exporter uses, reads `/etc/hosts`. With
/// `preferred_ip_protocol: ip6` and no fallback, a host whose hosts file lists `localhost` for
/// IPv4 only fails in blackbox_exporter and, through libcurl, went to ::1 in Lookout. Lookout
/// now reads the hosts file for these names too: its addresses of the version asked for, or a
/// resolution failure. (Go would ask DNS next; a name that must never leave the machine is not
/// asked, and a resolver answers no AAAA for it anyway.) With the fallback, the preferred
/// version's addresses, else the other's: Go's order, where libcurl's happy eyeballs would reach
/// ::1 first even when the hosts file lists only 127.0.0.1.
package enum LocalhostResolution {
    /// Where the system's names are.
    package static let hostsFile = "/etc/hosts"

    /// `localhost` or a name under it, in any case.
    package static func isLocalhost(_ host: String) -> Bool {
        ASCII.equalIgnoringCase(host, "localhost") || ASCII.hasSuffixIgnoringCase(host, ".localhost")
    }

    /// The addresses of IP `version` (4 or 6) that the hosts file `text` gives `name`, in its
    /// order: the fields of each line after the address, up to a comment, are its names.
    package static func addresses(of name: String, version: Int, hosts text: String) -> [String] {
        let wanted = name.lowercased()
        var found: [String] = []
        for line in text.split(whereSeparator: \.isNewline) {
            let content = line.prefix { $0 != "#" }
            let fields = content.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard fields.count >= 2, fields.dropFirst().contains(where: { $0.lowercased() == wanted }) else { continue }
            let address = String(fields[0])
            let isIPv6 = address.contains(":")
            // A v4-mapped address is IPv4 to Go's resolver.
            guard isIPv6 == (version == 6), !address.lowercased().hasPrefix("::ffff:"), !found.contains(address) else { continue }
            found.append(address)
        }
        return found
    }

    enum Outcome {
        /// A `CURLOPT_CONNECT_TO` entry for libcurl (`host:port:address:port`): the first address
        /// of the version asked for, as Go dials it; libcurl's DNS cache, which other probes of
        /// the name share, is left alone.
        case connect(String)
        /// What the transfer reports without starting.
        case unresolved(TransferResult)
    }

    /// For a request to `localhost` restricted to one IP version, or preferring one: the hosts file's
    /// first address as a `CURLOPT_CONNECT_TO` entry, or the failure to
    /// report when it has none. Nil for any other request.
    static func resolve(_ request: TransferRequest) -> Outcome? {
        // Every blackbox module's request names a version: parse only the URLs that can be localhost's.
        guard let version = request.onlyIPVersion ?? request.preferredIPVersion, ASCII.containsIgnoringCase(request.url, "localhost"),
            let parts = URLParts(request.url), let host = parts.host, isLocalhost(host), let port = parts.portOrDefault
        else { return nil }
        let text = (try? String(contentsOfFile: hostsFile, encoding: .utf8)) ?? ""
        var found = addresses(of: host, version: version, hosts: text)
        if found.isEmpty, request.onlyIPVersion == nil {
            // With the fallback, the other version's addresses; neither listed: libcurl's own
            // answer, as before (Go would ask DNS, which has them).
            found = addresses(of: host, version: version == 6 ? 4 : 6, hosts: text)
            if found.isEmpty { return nil }
        }
        guard !found.isEmpty else {
            return .unresolved(
                TransferResult(
                    curlCode: Int32(CURLE_COULDNT_RESOLVE_HOST.rawValue),
                    curlMessage: "Could not resolve host: \(host) (no IPv\(version) address for it in \(hostsFile))"))
        }
        let address = found[0].contains(":") ? "[\(found[0])]" : found[0]
        return .connect("\(host):\(port):\(address):\(port)")
    }
}
