import Foundation
import MicroHTTPServer

/// `/oauth/token` issues client-credentials tokens that live `ttl` seconds (an `audience` form
/// field, if any, must be `lookout`); `/protected` accepts
/// them (and `Simulator.staticToken`) and answers 401 to anything else.
extension Simulator {
    func oauthToken(_ request: HTTPRequest) async -> HTTPResponse {
        let form = Simulator.formValues(request.bodyText)
        guard form["grant_type"] == "client_credentials" else {
            return .json(#"{"error":"unsupported_grant_type","error_description":"only client_credentials is supported"}"#, status: 400)
        }
        // An `audience` other than this API's is refused, as identity providers do.
        if let audience = form["audience"], audience != "lookout" {
            return .json(#"{"error":"invalid_request","error_description":"unknown audience"}"#, status: 400)
        }
        let clientSecret = form["client_secret"] ?? Simulator.basicAuthSecret(request.headers["Authorization"])
        if clientSecret == nil || clientSecret == "wrong" {
            return .json(#"{"error":"invalid_client","error_description":"client authentication failed"}"#, status: 401)
        }
        let ttl = request.intQuery("ttl") ?? 3600
        let token = state.withLock { state -> String in
            state.issuedTokens += 1
            // Unique across restarts, as real tokens are: a restarted simulator that named its
            // first token as the last one did made a client's stale 401 look like a refusal of
            // the new token (a second refresh, seen once in FailureReasonsEndToEndTests).
            let token = "sim-token-\(Simulator.instance)-\(state.issuedTokens)"
            state.tokens[token] = Date().addingTimeInterval(TimeInterval(ttl))
            return token
        }
        return .json(Simulator.jsonText(["access_token": token, "token_type": "Bearer", "expires_in": ttl]))
    }

    /// Whether the request carries a bearer token `/oauth/token` issued that has not expired, or
    /// `staticToken`.
    func hasLiveToken(_ request: HTTPRequest) -> Bool {
        let header = request.headers["Authorization"] ?? ""
        let token = header.hasPrefix("Bearer ") ? String(header.dropFirst("Bearer ".count)) : ""
        return token == Simulator.staticToken || state.withLock { state in state.tokens[token].map { $0 > Date() } ?? false }
    }

    func protected(_ request: HTTPRequest) async -> HTTPResponse {
        guard hasLiveToken(request) else {
            var response = HTTPResponse.json(#"{"error":"invalid_token","error_description":"missing or expired token"}"#, status: 401)
            response.headers.set("WWW-Authenticate", #"Bearer error="invalid_token""#)
            return response
        }
        return .json(#"{"ok":true,"protected":true}"#)
    }

    static func formValues(_ body: String) -> [String: String] {
        var values: [String: String] = [:]
        for pair in body.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map {
                String($0).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String($0)
            }
            if let name = parts.first { values[name] = parts.count > 1 ? parts[1] : "" }
        }
        return values
    }

    static func basicAuthSecret(_ header: String?) -> String? {
        guard let header, header.hasPrefix("Basic "),
            let data = Data(base64Encoded: String(header.dropFirst("Basic ".count))),
            let text = String(data: data, encoding: .utf8), let colon = text.firstIndex(of: ":")
        else { return nil }
        return String(text[text.index(after: colon)...])
    }

    /// This run's mark in the tokens it issues.
    static let instance = String(UInt32.random(in: 0...UInt32.max), radix: 16)
}
