import Foundation
import ResilientHTTP
import Yams

// What a source's policy is made of, each read by itself: retries, the circuit breaker, the rate
// limit, the outage policy, expectations and auth. `SourceConfig+Reading.swift` puts them together.

extension RetryRule: ConfigReadable {
    enum Key: String, ConfigKey {
        case backoff, base, max, jitter
        case maxAttempts = "max_attempts"
    }

    mutating func read(_ fields: ConfigSection<Key>, _ reader: inout ConfigReader) {
        if let attempts = reader.int(fields[.maxAttempts], range: 1...20) { maxAttempts = attempts }
        if let kind: BackoffKind = reader.choice(fields[.backoff], "a backoff") { backoff = kind }
        if let value = reader.duration(fields[.base]) { base = value }
        if let value = reader.duration(fields[.max]) { max = value }
        if let value = reader.double(fields[.jitter], range: 0...1) { jitter = value }
        if max < base, let node = fields[.max]?.value ?? fields[.base]?.value {
            reader.problem(node, fields.path(.max), "\(ConfigValues.format(max)) is shorter than base \(ConfigValues.format(base))")
        }
    }
}

extension CircuitBreakerSettings: ConfigReadable {
    enum Key: String, ConfigKey {
        case jitter
        case failureThreshold = "failure_threshold"
        case successThreshold = "success_threshold"
        case openTimeout = "open_timeout"
        case openTimeoutMax = "open_timeout_max"
        case halfOpenMaxCalls = "half_open_max_calls"
    }

    mutating func read(_ fields: ConfigSection<Key>, _ reader: inout ConfigReader) {
        if let count = reader.int(fields[.failureThreshold], range: 1...1000) { failureThreshold = count }
        if let count = reader.int(fields[.successThreshold], range: 1...1000) { successThreshold = count }
        if let value = reader.duration(fields[.openTimeout]) { openTimeout = value }
        if let value = reader.duration(fields[.openTimeoutMax]) { openTimeoutMax = value }
        if let value = reader.double(fields[.jitter], range: 0...1) { jitter = value }
        if let count = reader.int(fields[.halfOpenMaxCalls], range: 1...1000) { halfOpenMaxCalls = count }
        if openTimeoutMax < openTimeout, let node = fields[.openTimeoutMax]?.value ?? fields[.openTimeout]?.value {
            reader.problem(node, fields.path(.openTimeoutMax), "is shorter than open_timeout")
        }
    }
}

extension RateLimitSettings: ConfigReadable {
    enum Key: String, ConfigKey { case rate, burst }

    mutating func read(_ limit: ConfigSection<Key>, _ reader: inout ConfigReader) {
        if let value = reader.rate(limit[.rate]) { perSecond = value }
        if let value = reader.int(limit[.burst], range: 1...1_000_000) { burst = Double(value) }
    }
}

/// `outage: {failure_threshold: 2, success_threshold: 1, window: {failures: 3, probes: 10}}`.
extension OutagePolicy: ConfigReadable {
    enum Key: String, ConfigKey {
        case window
        case failureThreshold = "failure_threshold"
        case successThreshold = "success_threshold"
    }

    enum WindowKey: String, ConfigKey { case failures, probes }

    mutating func read(_ fields: ConfigSection<Key>, _ reader: inout ConfigReader) {
        let counts = 1...OutageTracker.maxWindow
        if let count = reader.int(fields[.failureThreshold], range: counts) { failureThreshold = count }
        if let count = reader.int(fields[.successThreshold], range: counts) { successThreshold = count }
        guard let entry = fields[.window] else { return }
        if entry.value.string == "off" {
            windowFailures = nil
            windowProbes = nil
            return
        }
        guard let window = reader.section(entry.value, entry.path, WindowKey.self) else { return }
        let probes = reader.int(window[.probes], range: counts)
        let failures = reader.int(window[.failures], range: counts)
        guard let probes, let failures else {
            if !window.has(.probes) || !window.has(.failures) {
                reader.problem(entry, "needs both failures and probes, e.g. {failures: 3, probes: 10}")
            }
            return
        }
        guard failures <= probes else {
            reader.problem(window[.failures]!, "\(failures) is more than the \(probes) probes of the window")
            return
        }
        windowFailures = failures
        windowProbes = probes
    }
}

/// `expect: {status, body_contains, json_path, min_items, max_latency}`.
extension Expectations: ConfigReadable {
    enum Key: String, ConfigKey {
        case status
        case bodyContains = "body_contains"
        case jsonPath = "json_path"
        case minItems = "min_items"
        case maxLatency = "max_latency"
    }

    mutating func read(_ fields: ConfigSection<Key>, _ reader: inout ConfigReader) {
        if let entry = fields[.status] {
            let items = entry.value.sequence.map(Array.init) ?? [entry.value]
            var statuses = Set<Int>()
            for (index, item) in items.enumerated() {
                let itemPath = entry.value.sequence == nil ? entry.path : "\(entry.path)[\(index)]"
                if let status = reader.int(item, itemPath, range: 100...599) { statuses.insert(status) }
            }
            self.statuses = statuses
        }
        if let text = reader.string(fields[.bodyContains]) { bodyContains = text }
        if let count = reader.int(fields[.minItems]) { minItems = count }
        if let latency = reader.duration(fields[.maxLatency]) { maxLatency = latency }
        if let entry = fields[.jsonPath], let assertion = reader.section(entry.value, entry.path, JSONPathAssertion.Key.self) {
            guard let path = reader.string(assertion[.path]) else {
                reader.require(assertion, .path)
                return
            }
            var parsed = JSONPathAssertion(path: path)
            parsed.read(assertion, &reader)
            if parsed.min == nil && parsed.max == nil && parsed.equals == nil && parsed.exists == nil {
                reader.problem(entry, "needs one of min, max, equals or exists")
            }
            jsonPath = parsed
        }
    }
}

/// `json_path: {path, min, max, equals, exists}`.
extension JSONPathAssertion: ConfigReadable {
    enum Key: String, ConfigKey { case path, min, max, equals, exists }

    mutating func read(_ assertion: ConfigSection<Key>, _ reader: inout ConfigReader) {
        let anything = -Double.greatestFiniteMagnitude...Double.greatestFiniteMagnitude
        if let entry = assertion[.min] { min = reader.double(entry, range: anything) }
        if let entry = assertion[.max] { max = reader.double(entry, range: anything) }
        if let entry = assertion[.equals] { equals = reader.string(entry) }
        if let entry = assertion[.exists] { exists = reader.bool(entry) }
    }
}

/// `auth: {bearer_token_file | bearer_token | oauth2: {token_url, client_id, client_secret(_file), scopes, endpoint_params}}`.
extension AuthMethod {
    enum Key: String, ConfigKey {
        case oauth2
        case bearerTokenFile = "bearer_token_file"
        case bearerToken = "bearer_token"
    }

    enum OAuth2Key: String, ConfigKey {
        case scopes
        case tokenURL = "token_url"
        case clientID = "client_id"
        case clientSecret = "client_secret"
        case clientSecretFile = "client_secret_file"
        case endpointParams = "endpoint_params"
    }
}

extension ConfigReader {
    mutating func readAuth(_ node: Node, _ path: String) -> AuthMethod? {
        guard let fields = section(node, path, AuthMethod.Key.self) else { return nil }
        if let entry = fields[.bearerTokenFile], let name = string(entry) {
            let resolved = resolvePath(name)
            guard FileManager.default.isReadableFile(atPath: resolved) else {
                problem(entry, "cannot read \(resolved)")
                return nil
            }
            return .bearerTokenFile(path: resolved)
        }
        if let inline = fields[.bearerToken] {
            return secret(
                inline: inline.value, file: nil, parent: path, inlineKey: AuthMethod.Key.bearerToken.rawValue,
                fileKey: AuthMethod.Key.bearerTokenFile.rawValue
            )
            .map { .bearerToken($0) }
        }
        guard let oauth = fields[.oauth2] else {
            problem(node, path, "needs bearer_token_file, bearer_token or oauth2")
            return nil
        }
        guard let client = section(oauth.value, oauth.path, AuthMethod.OAuth2Key.self) else { return nil }
        let tokenURL = url(client[.tokenURL])
        let clientID = string(client[.clientID])
        require(client, .tokenURL)
        require(client, .clientID)
        if !client.has(.clientSecret) && !client.has(.clientSecretFile) { require(client, .clientSecretFile) }
        let clientSecret = secret(
            inline: client[.clientSecret]?.value, file: client[.clientSecretFile]?.value, parent: oauth.path,
            inlineKey: AuthMethod.OAuth2Key.clientSecret.rawValue, fileKey: AuthMethod.OAuth2Key.clientSecretFile.rawValue)
        let scopes = strings(client[.scopes]) ?? []
        let params = stringMap(client[.endpointParams]) ?? [:]
        guard let tokenURL, let clientID, let clientSecret else { return nil }
        return .oauth2(OAuth2ClientCredentials(tokenURL: tokenURL, clientID: clientID, clientSecret: clientSecret, scopes: scopes, endpointParams: params))
    }
}
