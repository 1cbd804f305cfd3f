import Foundation
import ResilientHTTP
import Yams

/// `probe_modules_file`: a blackbox_exporter configuration file read as it is, its `http` modules
/// served at `/probe`. Every key of blackbox's `http` prober is either honoured or a problem with
/// its position in that file: never silently ignored.
extension ConfigReader {
    /// The largest file read: a blackbox config is a few kB.
    static let maxBlackboxFileBytes = 1 << 20

    /// Keys of blackbox's `http` prober, every one honoured.
    static let blackboxHTTPKeys = [
        "valid_status_codes", "method", "headers", "body", "follow_redirects", "compression", "fail_if_ssl", "fail_if_not_ssl",
        "fail_if_body_matches_regexp", "fail_if_body_not_matches_regexp", "basic_auth", "bearer_token", "bearer_token_file", "tls_config",
        "preferred_ip_protocol", "ip_protocol_fallback", "body_size_limit", "valid_http_versions", "fail_if_header_matches", "fail_if_header_not_matches",
        "body_file", "proxy_url", "no_proxy", "proxy_connect_header", "skip_resolve_phase_with_proxy", "enable_http2", "enable_http3", "authorization",
        "oauth2", "http_headers", "proxy_from_environment", "no_follow_redirects",
    ]

    /// Reads the file `node` names; its problems carry its own name and positions.
    mutating func readBlackboxFile(_ node: Node, allow: [String]?) -> [String: ProbeModule] {
        guard let name = string(node, "probe_modules_file") else { return [:] }
        let path = resolvePath(name)
        if let reason = ConfigReader.notARegularFile(path, limit: Int64(ConfigReader.maxBlackboxFileBytes)) {
            problem(node, "probe_modules_file", reason)
            return [:]
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            problem(node, "probe_modules_file", "cannot read \(path)")
            return [:]
        }
        var reader = ConfigReader(file: path, directory: URL(fileURLWithPath: path).deletingLastPathComponent().path, environment: environment)
        let modules = reader.readBlackboxText(String(decoding: data, as: UTF8.self), allow: allow)
        problems += reader.problems
        warnings += reader.warnings
        if allow == nil, !modules.isEmpty {
            warning(
                node, "probe_modules_file",
                "its modules probe any target, as blackbox_exporter does: anyone who can reach /probe can make Lookout request any URL; set probe_allow to the targets they may probe"
            )
        }
        return modules
    }

    /// The text of a blackbox file, read as `file` (this reader's): its modules, and its problems
    /// in `problems`. Split from the file's reading so the fuzzer drives it with bytes.
    mutating func readBlackboxText(_ text: String, allow: [String]?) -> [String: ProbeModule] {
        do {
            guard let root = try Yams.compose(yaml: text, .basic) else {
                problems.append(ConfigProblem(file: file, line: 1, column: 1, path: "", message: "\(file) is empty"))
                return [:]
            }
            return readBlackboxModules(root, allow: allow)
        } catch let error as YamlError {
            problems.append(ConfigLoader.syntaxProblem(error, file: file))
        } catch {
            problems.append(ConfigProblem(file: file, line: 1, column: 1, path: "", message: "cannot read \(file): \(error)"))
        }
        return [:]
    }

    private mutating func readBlackboxModules(_ root: Node, allow: [String]?) -> [String: ProbeModule] {
        guard let top = mapping(root, "", known: ["modules"]), let node = top["modules"]?.value, let modules = node.mapping else { return [:] }
        var result: [String: ProbeModule] = [:]
        for (key, value) in modules {
            guard let name = key.scalar?.string else { continue }
            let path = "modules.\(name)"
            guard let fields = mapping(value, path, known: ["prober", "timeout", "http", "tcp", "dns", "icmp", "grpc"]) else { continue }
            let prober = fields["prober"].flatMap { string($0.value, "\(path).prober") } ?? ""
            guard ["http", "tcp", "dns", "icmp", "grpc"].contains(prober) else {
                problem(fields["prober"]?.value ?? value, "\(path).prober", "\"\(prober)\" is not a prober (use http, tcp, dns, icmp or grpc)")
                continue
            }
            var module = ProbeModule(timeout: .seconds(5))
            module.origin = "\(file): \(path)"
            if let allow { module.allow = allow } else { module.anyTarget = true }
            if let node = fields["timeout"]?.value, let timeout = duration(node, "\(path).timeout") { module.timeout = timeout }
            if prober == "tcp" {
                module.kind = .tcp
                if let node = fields["tcp"]?.value { readBlackboxTCP(node, "\(path).tcp", into: &module) }
            } else if prober == "grpc" {
                module.kind = .grpc
                readBlackboxGRPC(fields["grpc"]?.value, "\(path).grpc", into: &module)
            } else if prober == "icmp" {
                module.kind = .icmp
                readBlackboxICMP(fields["icmp"]?.value, "\(path).icmp", into: &module)
            } else if prober == "dns" {
                module.kind = .dns
                readBlackboxDNS(fields["dns"]?.value, "\(path).dns", moduleNode: value, into: &module)
            } else if let node = fields["http"]?.value {
                readBlackboxHTTP(node, "\(path).http", into: &module)
            }
            result[name] = module
        }
        return result
    }

    /// blackbox's `tcp` prober: a connection to `host:port`, with `tls: true` a handshake too.
    private mutating func readBlackboxTCP(_ node: Node, _ path: String, into module: inout ProbeModule) {
        guard
            let fields = mapping(
                node, path, known: ["preferred_ip_protocol", "ip_protocol_fallback", "tls", "tls_config", "query_response", "source_ip_address"])
        else { return }
        readBlackboxSourceAddress(fields, path, into: &module)
        if let node = fields["preferred_ip_protocol"]?.value, let text = string(node, "\(path).preferred_ip_protocol"), !["ip4", "ip6"].contains(text) {
            problem(node, "\(path).preferred_ip_protocol", "\"\(text)\" is not ip4 or ip6")
        }
        if let node = fields["ip_protocol_fallback"]?.value { _ = bool(node, "\(path).ip_protocol_fallback") }
        if let node = fields["tls"]?.value, let tls = bool(node, "\(path).tls") { module.tcpTLS = tls }
        if let entry = fields["query_response"], let list = sequence(entry.value, "\(path).query_response") {
            for (index, item) in list.enumerated() {
                let itemPath = "\(path).query_response[\(index)]"
                guard let step = mapping(item, itemPath, known: ["expect", "send", "starttls"]) else { continue }
                var read = ProbeModule.TCPQueryStep()
                if let node = step["starttls"]?.value, let flag = bool(node, "\(itemPath).starttls") { read.startTLS = flag }
                if let node = step["expect"]?.value, let pattern = pattern(node, "\(itemPath).expect") { read.expect = pattern }
                if let node = step["send"]?.value, let text = string(node, "\(itemPath).send") { read.send = text }
                if read.expect != nil || read.send != nil || read.startTLS { module.tcpQueryResponse.append(read) }
            }
        }
        if let node = fields["tls_config"]?.value { readBlackboxTLSConfig(node, "\(path).tls_config", into: &module) }
    }

    /// `source_ip_address` of the tcp, dns and icmp probers: the local address probes go from.
    mutating func readBlackboxSourceAddress(_ fields: [String: (key: Node, value: Node)], _ path: String, into module: inout ProbeModule) {
        guard let node = fields["source_ip_address"]?.value, let address = string(node, "\(path).source_ip_address") else { return }
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, address, &v4) == 1 || inet_pton(AF_INET6, address, &v6) == 1 {
            module.sourceAddress = address
        } else {
            problem(node, "\(path).source_ip_address", "\"\(address)\" is not an IP address")
        }
    }

    /// `tls_config`, shared by the http and tcp probers.
    mutating func readBlackboxTLSConfig(_ node: Node, _ path: String, into module: inout ProbeModule) {
        guard let tls = mapping(node, path, known: ["ca_file", "insecure_skip_verify", "cert_file", "key_file", "server_name", "min_version", "max_version"])
        else { return }
        // Go's names for the versions: TLS10 to TLS13.
        func minor(_ key: String) -> Int? {
            guard let node = tls[key]?.value, let text = string(node, "\(path).\(key)") else { return nil }
            guard let index = ["TLS10", "TLS11", "TLS12", "TLS13"].firstIndex(of: text) else {
                problem(node, "\(path).\(key)", "\"\(text)\" is not a TLS version (use TLS10, TLS11, TLS12 or TLS13)")
                return nil
            }
            return index
        }
        module.tlsMinimumMinor = minor("min_version")
        module.tlsMaximumMinor = minor("max_version")
        if let low = module.tlsMinimumMinor, let high = module.tlsMaximumMinor, low > high, let node = tls["max_version"]?.value {
            problem(node, "\(path).max_version", "is below min_version")
        }
        switch (tls["cert_file"], tls["key_file"]) {
        case (let cert?, let key?):
            if let certificate = readableFile(cert.value, "\(path).cert_file"), let keyFile = readableFile(key.value, "\(path).key_file") {
                module.clientCertificate = ProbeModule.ClientCertificate(certificate: certificate, key: keyFile)
            }
        case (let one?, nil), (nil, let one?):
            problem(one.key, path, "cert_file and key_file go together: a client certificate needs its key")
        case (nil, nil):
            break
        }
        if let node = tls["server_name"]?.value, let name = string(node, "\(path).server_name"), !name.isEmpty {
            if name.unicodeScalars.allSatisfy({
                $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains(Character($0)) || ".-_".unicodeScalars.contains($0))
            }) {
                module.serverName = name
            } else {
                problem(node, "\(path).server_name", "\"\(name)\" is not a host name")
            }
        }
        if let node = tls["insecure_skip_verify"]?.value, bool(node, "\(path).insecure_skip_verify") == true {
            module.insecureSkipVerify = true
            warning(
                node, "\(path).insecure_skip_verify",
                "the module does not verify certificates, as asked: expired, untrusted and wrong-host certificates pass; prefer ca_file")
        }
        if let node = tls["ca_file"]?.value, let name = string(node, "\(path).ca_file") {
            let resolved = resolvePath(name)
            if FileManager.default.fileExists(atPath: resolved) {
                module.caFile = readableFile(node, "\(path).ca_file")
            } else {
                // As blackbox_exporter, which reads it when it probes: a secret mounted later.
                module.caFile = resolved
                warning(node, "\(path).ca_file", "\(resolved) does not exist: the module's probes fail until it does")
            }
        }
    }

    private mutating func readBlackboxHTTP(_ node: Node, _ path: String, into module: inout ProbeModule) {
        guard let fields = mapping(node, path, known: ConfigReader.blackboxHTTPKeys) else { return }
        if let node = fields["valid_status_codes"]?.value, let list = sequence(node, "\(path).valid_status_codes") {
            var codes = Set<Int>()
            for (index, item) in list.enumerated() {
                if let code = int(item, "\(path).valid_status_codes[\(index)]", range: 100...599) { codes.insert(code) }
            }
            if !codes.isEmpty { module.validStatusCodes = codes }
        }
        if let node = fields["method"]?.value, let method = string(node, "\(path).method") {
            if method.utf8.allSatisfy({ $0.isLetterOrDigit }) && !method.isEmpty {
                module.method = method.uppercased()
            } else {
                problem(node, "\(path).method", "\"\(method)\" is not an HTTP method")
            }
        }
        if let node = fields["headers"]?.value, let headers = stringMap(node, "\(path).headers") {
            module.headers = headers.sorted { $0.key < $1.key }.map { HeaderField($0.key, $0.value) }
        }
        if let node = fields["body"]?.value { module.body = string(node, "\(path).body") }
        // Read with the config (and again on each reload), not per probe.
        if let node = fields["body_file"]?.value, let file = readableFile(node, "\(path).body_file") {
            if fields["body"] != nil {
                problem(node, "\(path).body_file", "body and body_file are both set; keep one")
            } else if let size = (try? FileManager.default.attributesOfItem(atPath: file)[.size] as? NSNumber)?.intValue, size > 1 << 20 {
                problem(node, "\(path).body_file", "\(file) is \(size) bytes; a request body is at most 1 MiB")
            } else {
                module.body = FileManager.default.contents(atPath: file).map { String(decoding: $0, as: UTF8.self) }
            }
        }
        if let node = fields["follow_redirects"]?.value, let follow = bool(node, "\(path).follow_redirects") { module.followRedirects = follow }
        // blackbox 0.23 still reads its older spelling, over follow_redirects, and warns of it.
        if let node = fields["no_follow_redirects"]?.value, let noFollow = bool(node, "\(path).no_follow_redirects") {
            module.followRedirects = !noFollow
            warning(node, "\(path).no_follow_redirects", "is deprecated in blackbox_exporter; write follow_redirects: \(!noFollow)")
        }
        if let node = fields["compression"]?.value, let text = string(node, "\(path).compression"), !text.isEmpty {
            if ["gzip", "br", "deflate", "identity"].contains(text) {
                module.compression = text
            } else {
                problem(node, "\(path).compression", "\"\(text)\" is not an encoding blackbox_exporter knows (gzip, br, deflate, identity)")
            }
        }
        module.failIfHeaderMatches = headerRegexes(fields["fail_if_header_matches"]?.value, "\(path).fail_if_header_matches")
        module.failIfHeaderNotMatches = headerRegexes(fields["fail_if_header_not_matches"]?.value, "\(path).fail_if_header_not_matches")
        if let node = fields["valid_http_versions"]?.value, let list = sequence(node, "\(path).valid_http_versions") {
            for (index, item) in list.enumerated() {
                guard let version = string(item, "\(path).valid_http_versions[\(index)]") else { continue }
                if ["HTTP/1.0", "HTTP/1.1", "HTTP/2.0"].contains(version) {
                    module.validHTTPVersions.append(version)
                } else {
                    problem(item, "\(path).valid_http_versions[\(index)]", "\"\(version)\" is not a protocol Lookout speaks (HTTP/1.0, HTTP/1.1, HTTP/2.0)")
                }
            }
        }
        if let node = fields["body_size_limit"]?.value, let text = string(node, "\(path).body_size_limit") {
            if let bytes = ConfigReader.base2Bytes(text) {
                module.bodySizeLimit = bytes == 0 ? nil : bytes
            } else {
                problem(node, "\(path).body_size_limit", "\"\(text)\" is not a size (write it as blackbox_exporter does: 0 for no limit, 512KB, 10MiB, 1GB)")
            }
        }
        if let node = fields["fail_if_ssl"]?.value, let flag = bool(node, "\(path).fail_if_ssl") { module.failIfSSL = flag }
        if let node = fields["fail_if_not_ssl"]?.value, let flag = bool(node, "\(path).fail_if_not_ssl") { module.failIfNotSSL = flag }
        module.failIfBodyMatches = regexes(fields["fail_if_body_matches_regexp"]?.value, "\(path).fail_if_body_matches_regexp")
        module.failIfBodyNotMatches = regexes(fields["fail_if_body_not_matches_regexp"]?.value, "\(path).fail_if_body_not_matches_regexp")
        if let node = fields["basic_auth"]?.value, let auth = mapping(node, "\(path).basic_auth", known: ["username", "password", "password_file"]) {
            let username = auth["username"].flatMap { string($0.value, "\(path).basic_auth.username") } ?? ""
            var password = auth["password"].flatMap { string($0.value, "\(path).basic_auth.password") } ?? ""
            if let file = auth["password_file"]?.value {
                password = secret(inline: nil, file: file, parent: "\(path).basic_auth", inlineKey: "password", fileKey: "password_file") ?? ""
            }
            let encoded = Data("\(username):\(password)".utf8).base64EncodedString()
            module.headers.append(HeaderField("Authorization", "Basic \(encoded)"))
        }
        if let node = fields["bearer_token"]?.value, let token = string(node, "\(path).bearer_token") {
            module.headers.append(HeaderField("Authorization", "Bearer \(token)"))
        }
        if let file = fields["bearer_token_file"]?.value,
            let token = secret(inline: nil, file: file, parent: path, inlineKey: "bearer_token", fileKey: "bearer_token_file")
        {
            module.headers.append(HeaderField("Authorization", "Bearer \(token)"))
        }
        if let node = fields["tls_config"]?.value { readBlackboxTLSConfig(node, "\(path).tls_config", into: &module) }
        readBlackboxProxyAndProtocol(fields, path, into: &module)
        if let node = fields["preferred_ip_protocol"]?.value, let text = string(node, "\(path).preferred_ip_protocol"), !["ip4", "ip6"].contains(text) {
            problem(node, "\(path).preferred_ip_protocol", "\"\(text)\" is not ip4 or ip6")
        }
        // Both families are tried (libcurl's happy eyeballs), as blackbox does with its default
        // fallback; without fallback only the preferred one (ip6 unless told, as blackbox).
        let preferred = fields["preferred_ip_protocol"].flatMap { $0.value.string } == "ip4" ? 4 : 6
        if let node = fields["ip_protocol_fallback"]?.value, bool(node, "\(path).ip_protocol_fallback") == false {
            module.onlyIPVersion = preferred
        } else {
            module.preferredIPVersion = preferred
        }
        if let node = fields["oauth2"]?.value { module.oauth2 = readBlackboxOAuth2(node, "\(path).oauth2") }
    }

    /// prometheus/common's `oauth2` (client credentials): `client_id`, `client_secret` or
    /// `client_secret_file`, `token_url`, `scopes`, `endpoint_params`.
    private mutating func readBlackboxOAuth2(_ node: Node, _ path: String) -> OAuth2ClientCredentials? {
        let known = ["client_id", "client_secret", "client_secret_file", "scopes", "token_url", "endpoint_params", "tls_config", "proxy_url"]
        guard let fields = mapping(node, path, known: known) else { return nil }
        let tokenURL = fields["token_url"].flatMap { url($0.value, "\(path).token_url") }
        let clientID = fields["client_id"].flatMap { string($0.value, "\(path).client_id") }
        if fields["token_url"] == nil { problem(node, "\(path).token_url", "is missing") }
        if fields["client_id"] == nil { problem(node, "\(path).client_id", "is missing") }
        // blackbox's own file holds the secret as it is (its file is not Lookout's config).
        var secret = fields["client_secret"].flatMap { string($0.value, "\(path).client_secret") }
        if let file = fields["client_secret_file"]?.value {
            secret = self.secret(inline: nil, file: file, parent: path, inlineKey: "client_secret", fileKey: "client_secret_file")
        }
        let scopes = fields["scopes"].flatMap { strings($0.value, "\(path).scopes") } ?? []
        guard let tokenURL, let clientID, let secret else {
            if fields["client_secret"] == nil && fields["client_secret_file"] == nil { problem(node, "\(path).client_secret", "is missing") }
            return nil
        }
        let params = fields["endpoint_params"].flatMap { stringMap($0.value, "\(path).endpoint_params") } ?? [:]
        var credentials = OAuth2ClientCredentials(tokenURL: tokenURL, clientID: clientID, clientSecret: secret, scopes: scopes, endpointParams: params)
        credentials.connection = readBlackboxTokenConnection(fields, path)
        return credentials
    }

    /// `oauth2.tls_config` and `oauth2.proxy_url`: the token request trusts and goes through
    /// what they say, and through no proxy unless told (as blackbox_exporter).
    private mutating func readBlackboxTokenConnection(_ fields: [String: (key: Node, value: Node)], _ path: String) -> TokenConnection {
        var tls = ProbeModule()
        if let node = fields["tls_config"]?.value { readBlackboxTLSConfig(node, "\(path).tls_config", into: &tls) }
        var connection = TokenConnection()
        connection.caFile = tls.caFile
        connection.skipsCertificateVerification = tls.insecureSkipVerify
        connection.tlsMinimumMinor = tls.tlsMinimumMinor
        connection.tlsMaximumMinor = tls.tlsMaximumMinor
        connection.clientCertificateFile = tls.clientCertificate?.certificate
        connection.clientKeyFile = tls.clientCertificate?.key
        connection.serverName = tls.serverName
        connection.proxy = ""
        if let node = fields["proxy_url"]?.value, let text = string(node, "\(path).proxy_url"), !text.isEmpty {
            if let problem = ProbeURL.problem(text) { self.problem(node, "\(path).proxy_url", problem) } else { connection.proxy = text }
        }
        return connection
    }

    /// `proxy_url`, `no_proxy`, `proxy_connect_header`, `skip_resolve_phase_with_proxy`,
    /// `enable_http2`, `enable_http3` and `authorization` of an http module.
    private mutating func readBlackboxProxyAndProtocol(_ fields: [String: (key: Node, value: Node)], _ path: String, into module: inout ProbeModule) {
        if let node = fields["http_headers"]?.value { readBlackboxHTTPHeaders(node, "\(path).http_headers", into: &module) }
        if let node = fields["proxy_from_environment"]?.value, let flag = bool(node, "\(path).proxy_from_environment") {
            module.proxyFromEnvironment = flag
            if flag, fields["proxy_url"] != nil { problem(node, "\(path).proxy_from_environment", "cannot be used with proxy_url") }
        }
        if let node = fields["proxy_url"]?.value, let text = string(node, "\(path).proxy_url"), !text.isEmpty {
            if let problem = ProbeURL.problem(text) { self.problem(node, "\(path).proxy_url", problem) } else { module.proxyURL = text }
        }
        if let node = fields["no_proxy"]?.value, let text = string(node, "\(path).no_proxy") {
            if module.proxyURL == nil { problem(node, "\(path).no_proxy", "only applies with proxy_url") } else { module.noProxy = text }
        }
        if let node = fields["proxy_connect_header"]?.value, let mapping = node.mapping {
            for (key, value) in mapping {
                guard let name = key.scalar?.string else { continue }
                // prometheus/common takes a list of values per name; each is sent.
                let values = value.sequence.map { $0.compactMap { $0.scalar?.string } } ?? [value.scalar?.string].compactMap { $0 }
                for text in values { module.proxyHeaders.append(HeaderField(name, text)) }
            }
        } else if let node = fields["proxy_connect_header"]?.value {
            problem(node, "\(path).proxy_connect_header", "must be a mapping of header names to values")
        }
        // With a proxy, libcurl leaves resolving the target to it: the phase is always skipped.
        if let node = fields["skip_resolve_phase_with_proxy"]?.value { _ = bool(node, "\(path).skip_resolve_phase_with_proxy") }
        if let node = fields["enable_http2"]?.value, let flag = bool(node, "\(path).enable_http2") { module.forbidsHTTP2 = !flag }
        if let node = fields["enable_http3"]?.value, bool(node, "\(path).enable_http3") == true {
            problem(node, "\(path).enable_http3", "Lookout's libcurl speaks no HTTP/3; leave enable_http3 out")
        }
        if let node = fields["authorization"]?.value, let auth = mapping(node, "\(path).authorization", known: ["type", "credentials", "credentials_file"]) {
            let type = auth["type"].flatMap { string($0.value, "\(path).authorization.type") } ?? "Bearer"
            var credentials = auth["credentials"].flatMap { string($0.value, "\(path).authorization.credentials") }
            if let file = auth["credentials_file"]?.value {
                credentials = secret(inline: nil, file: file, parent: "\(path).authorization", inlineKey: "credentials", fileKey: "credentials_file")
            }
            if let credentials { module.headers.append(HeaderField("Authorization", "\(type) \(credentials)")) }
        }
    }

    /// `[{header: NAME, regexp: RE, allow_missing: BOOL}]`.
    private mutating func headerRegexes(_ node: Node?, _ path: String) -> [ProbeModule.HeaderRegex] {
        guard let node, let list = sequence(node, path) else { return [] }
        var specs: [ProbeModule.HeaderRegex] = []
        for (index, item) in list.enumerated() {
            let place = "\(path)[\(index)]"
            guard let fields = mapping(item, place, known: ["header", "regexp", "allow_missing"]) else { continue }
            guard let header = fields["header"].flatMap({ string($0.value, "\(place).header") }), !header.isEmpty else {
                if fields["header"] == nil { problem(item, "\(place).header", "is missing") }
                continue
            }
            guard let node = fields["regexp"]?.value else {
                problem(item, "\(place).regexp", "is missing")
                continue
            }
            guard let regexp = pattern(node, "\(place).regexp") else { continue }
            let allowMissing = fields["allow_missing"].flatMap { bool($0.value, "\(place).allow_missing") } ?? false
            specs.append(ProbeModule.HeaderRegex(header: header, regexp: regexp, allowMissing: allowMissing))
        }
        return specs
    }

    mutating func regexes(_ node: Node?, _ path: String) -> [String] {
        guard let node, let list = sequence(node, path) else { return [] }
        var patterns: [String] = []
        for (index, item) in list.enumerated() {
            if let pattern = pattern(item, "\(path)[\(index)]") { patterns.append(pattern) }
        }
        return patterns
    }

    /// A size as blackbox_exporter's `body_size_limit` takes it (Go's `units.Base2Bytes`): a
    /// number and a unit, KB and KiB alike meaning 1,024 (B, KB, MB, GB, TB, PB with or without
    /// the i), or a plain number of bytes; nil when it is not one or does not fit in an Int.
    static func base2Bytes(_ text: String) -> Int? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let digits = trimmed.prefix { $0.isASCII && ($0.isNumber || $0 == ".") }
        let unit = trimmed.dropFirst(digits.count).uppercased().replacingOccurrences(of: "I", with: "")
        let powers = ["": 0, "B": 0, "KB": 1, "MB": 2, "GB": 3, "TB": 4, "PB": 5]
        guard !digits.isEmpty, digits.filter({ $0 == "." }).count <= 1, let power = powers[unit], let number = Double(digits), number.isFinite else {
            return nil
        }
        let bytes = number * pow(1024, Double(power))
        guard bytes < 9.2e18 else { return nil }
        return Int(bytes.rounded(.down))
    }
}
