import Foundation
import ResilientHTTP

/// What a module requires of an answer whose status it accepts, as blackbox_exporter's http
/// prober judges it: TLS or not, the encoding asked for, the protocol, headers and body. Used by
/// `/probe` and by a source that names the module (`module:`).
extension ProbeModule {
    /// The checks of a blackbox_exporter `http` module on the answer that ends the probe:
    /// `fail_if_ssl`, `fail_if_not_ssl` and the body's regular expressions (a failure of these
    /// reads `probe_failed_due_to_regex 1`).
    package func check(_ result: TransferResult, url: String) -> Failure? {
        guard result.httpStatus != nil else { return nil }
        let ssl = url.lowercased().hasPrefix("https://")
        if failIfSSL && ssl {
            return Failure(
                category: .invalidResponse, reason: "ssl_not_expected", httpStatus: result.httpStatus,
                detail: "the answer came over TLS, and the module has fail_if_ssl")
        }
        if failIfNotSSL && !ssl {
            return Failure(
                category: .invalidResponse, reason: "ssl_expected", httpStatus: result.httpStatus,
                detail: "the answer came without TLS, and the module has fail_if_not_ssl")
        }
        // Asked for an encoding, blackbox_exporter takes only a body in it (and reads none).
        if let expected = compression, expected != "identity", (result.header("Content-Encoding") ?? "").lowercased() != expected {
            return Failure(
                category: .invalidResponse, reason: "compression_mismatch", httpStatus: result.httpStatus,
                detail: "the module asked for \(expected), and the answer came \(result.header("Content-Encoding").map { "as \($0)" } ?? "without an encoding")"
            )
        }
        if !validHTTPVersions.isEmpty {
            // As Go names the protocol (resp.Proto).
            let proto = result.httpVersion.map { $0 == "2" ? "HTTP/2.0" : "HTTP/\($0)" } ?? "?"
            if !validHTTPVersions.contains(proto) {
                return Failure(
                    category: .invalidResponse, reason: "http_version", httpStatus: result.httpStatus,
                    detail: "the answer came in \(proto), not in \(validHTTPVersions.joined(separator: " or ")) (valid_http_versions)")
            }
        }
        if let failure = headerCheck(result) { return failure }
        guard !failIfBodyMatches.isEmpty || !failIfBodyNotMatches.isEmpty else { return nil }
        let body = String(decoding: result.body, as: UTF8.self)
        func matches(_ pattern: String) -> Bool { RegexCache.matches(pattern, body) }
        if let pattern = failIfBodyMatches.first(where: matches) {
            return Failure(
                category: .invalidResponse, reason: "body_mismatch", httpStatus: result.httpStatus,
                detail: "the body matches \(pattern) (fail_if_body_matches_regexp)")
        }
        if let pattern = failIfBodyNotMatches.first(where: { !matches($0) }) {
            return Failure(
                category: .invalidResponse, reason: "body_mismatch", httpStatus: result.httpStatus,
                detail: "the body does not match \(pattern) (fail_if_body_not_matches_regexp)")
        }
        return nil
    }

    /// blackbox_exporter's header checks: a header named in either list must be there (unless
    /// `allow_missing`); none of its values may match a `fail_if_header_matches` expression, and
    /// one must match each `fail_if_header_not_matches` expression.
    func headerCheck(_ result: TransferResult) -> Failure? {
        func values(_ name: String) -> [String] {
            result.headers.filter { $0.name.lowercased() == name.lowercased() }.map(\.value)
        }
        func matches(_ pattern: String, _ value: String) -> Bool { RegexCache.matches(pattern, value) }
        func failure(_ detail: String) -> Failure {
            Failure(category: .invalidResponse, reason: "header_mismatch", httpStatus: result.httpStatus, detail: detail)
        }
        for spec in failIfHeaderMatches {
            let found = values(spec.header)
            if found.isEmpty && !spec.allowMissing { return failure("the answer has no \(spec.header) header") }
            if found.contains(where: { matches(spec.regexp, $0) }) {
                return failure("\(spec.header) matches \(spec.regexp) (fail_if_header_matches)")
            }
        }
        for spec in failIfHeaderNotMatches {
            let found = values(spec.header)
            if found.isEmpty {
                if spec.allowMissing { continue }
                return failure("the answer has no \(spec.header) header")
            }
            if !found.contains(where: { matches(spec.regexp, $0) }) {
                return failure("\(spec.header) does not match \(spec.regexp) (fail_if_header_not_matches)")
            }
        }
        return nil
    }
}
