import Foundation
import ResilientHTTP
import Yams

/// blackbox 0.24's `http_headers` and `proxy_from_environment` (prometheus/common's HTTP client
/// settings), read from its file.
extension ConfigReader {
    /// Headers prometheus/common refuses to set this way: they change the connection, or the
    /// client sets them itself.
    static let reservedHTTPHeaders: Set<String> = [
        "authorization", "host", "content-encoding", "content-length", "content-type", "user-agent", "connection", "keep-alive",
        "proxy-authenticate", "proxy-authorization", "www-authenticate", "accept-encoding", "x-prometheus-remote-write-version",
        "x-prometheus-remote-read-version", "x-prometheus-scrape-timeout-seconds", "x-amz-date", "x-amz-security-token", "x-amz-content-sha256",
    ]

    /// `http_headers: {NAME: {values: [...], secrets: [...], files: [...]}}`: each value added to
    /// every request. A file is read when the config is (blackbox reads it per request: change
    /// it, then reload).
    mutating func readBlackboxHTTPHeaders(_ node: Node, _ path: String, into module: inout ProbeModule) {
        guard let mapping = node.mapping else {
            problem(node, path, "must be a mapping of header names to {values, secrets, files}")
            return
        }
        for (key, value) in mapping {
            guard let name = key.scalar?.string, !name.isEmpty else { continue }
            let place = "\(path).\(name)"
            if ConfigReader.reservedHTTPHeaders.contains(name.lowercased()) {
                problem(key, place, "setting header \"\(name)\" is not allowed (as in blackbox_exporter)")
                continue
            }
            guard let fields = self.mapping(value, place, known: ["values", "secrets", "files"]) else { continue }
            var values = fields["values"].flatMap { strings($0.value, "\(place).values") } ?? []
            values += fields["secrets"].flatMap { strings($0.value, "\(place).secrets") } ?? []
            for file in fields["files"].flatMap({ strings($0.value, "\(place).files") }) ?? [] {
                let resolved = resolvePath(file)
                guard let data = FileManager.default.contents(atPath: resolved), data.count <= 64 << 10 else {
                    problem(fields["files"]!.value, "\(place).files", "cannot read \(resolved) (at most 64 KiB)")
                    continue
                }
                values.append(String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
            }
            for text in values {
                guard !text.contains(where: { $0 == "\r" || $0 == "\n" }) else {
                    problem(value, place, "a header value cannot hold a line break")
                    continue
                }
                module.headers.append(HeaderField(name, text))
            }
        }
    }
}

/// The proxy Go's `http.ProxyFromEnvironment` picks, for `proxy_from_environment: true`:
/// `HTTPS_PROXY` for https, `HTTP_PROXY` for http (upper case first, then lower; not under CGI),
/// none for localhost, loopback addresses and hosts `NO_PROXY` names.
package enum EnvironmentProxy {
    package static func proxy(for url: String, environment: [String: String]) -> String? {
        func value(_ name: String) -> String? {
            [environment[name.uppercased()], environment[name.lowercased()]].compactMap { $0 }.first { !$0.isEmpty }
        }
        guard let parts = URLParts(url), let bare = parts.bareHost?.lowercased(), let port = parts.portOrDefault else { return nil }
        let scheme = parts.scheme.lowercased()
        let chosen: String?
        switch scheme {
        case "https": chosen = value("https_proxy")
        case "http": chosen = environment["REQUEST_METHOD"].map { _ in nil } ?? value("http_proxy")
        default: chosen = nil
        }
        guard let proxy = chosen else { return nil }
        if bare == "localhost" || bare.hasPrefix("127.") || bare == "::1" { return nil }
        if let noProxy = value("no_proxy"), excluded(bare, port: port, by: noProxy) { return nil }
        return proxy.contains("://") ? proxy : "http://" + proxy
    }

    /// Whether `NO_PROXY` (comma-separated: `*`, names, `.domain`, `name:port`, addresses) spares
    /// `host`. A name spares itself and its subdomains; a leading dot only the subdomains.
    static func excluded(_ host: String, port: Int, by list: String) -> Bool {
        for raw in list.split(separator: ",") {
            var entry = raw.trimmingCharacters(in: .whitespaces).lowercased()
            if entry.isEmpty { continue }
            if entry == "*" { return true }
            if let colon = entry.lastIndex(of: ":"), !entry.contains("]"), entry.filter({ $0 == ":" }).count == 1 {
                guard Int(entry[entry.index(after: colon)...]) == port else { continue }
                entry = String(entry[..<colon])
            }
            if entry.hasPrefix(".") {
                if host.hasSuffix(entry) { return true }
            } else if host == entry || host.hasSuffix("." + entry) {
                return true
            }
        }
        return false
    }
}
