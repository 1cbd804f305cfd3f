import Foundation
import Logging
import LookoutCore
import MicroHTTPServer
import ResilientHTTP

/// Guards admin endpoints: `Authorization: Bearer <admin token>`, compared in constant time.
/// Without a configured token they answer 403; without or with a wrong header, 401. Pages a
/// browser opens (`browser: true`) also take the token as HTTP Basic's password, any user name.
package enum AdminAuth {
    /// nil when the request may go on, otherwise the response to send.
    package static func refusal(_ request: HTTPRequest, token: String?, browser: Bool = false) -> HTTPResponse? {
        // An empty token is no token (the config refuses one; this is the last line).
        guard let token, !token.isEmpty else {
            return APIRoutes.error("admin endpoints are disabled: set admin_token_file in the config", status: 403)
        }
        let header = request.headers["Authorization"] ?? ""
        var presented = header.hasPrefix("Bearer ") ? String(header.dropFirst("Bearer ".count)) : ""
        if browser, header.hasPrefix("Basic "), let decoded = Data(base64Encoded: String(header.dropFirst("Basic ".count))),
            let pair = String(data: decoded, encoding: .utf8), let colon = pair.firstIndex(of: ":")
        {
            presented = String(pair[pair.index(after: colon)...])
        }
        guard !presented.isEmpty, SHA256.secretsEqual(Array(presented.utf8), Array(token.utf8)) else {
            var response = APIRoutes.error("missing or wrong admin token", status: 401)
            response.headers.set("WWW-Authenticate", browser ? #"Basic realm="lookout on-call", charset="UTF-8""# : #"Bearer realm="lookout""#)
            return response
        }
        return nil
    }

    /// One log line per change a person made through the admin API: what, to what, from which
    /// address, and which token (its fingerprint: the first 12 hex digits of its SHA-256, never
    /// the token), so a reviewer can tell who silenced a page at 03:00.
    ///
    /// ```
    /// level=notice msg="admin: silence added" id=7 matchers=source=acme client=10.0.0.5 token=3f1c9a0b27de
    /// ```
    package static func audit(_ request: HTTPRequest, _ context: LookoutContext, _ action: String, _ details: [String: String] = [:]) {
        var metadata: Logger.Metadata = ["client": "\(request.remoteAddress ?? "-")"]
        if let token = context.monitor.config.adminToken {
            let hasher = SHA256()
            hasher.update(Array(token.utf8))
            metadata["token"] = "\(hasher.finalizeHex().prefix(12))"
        }
        for (key, value) in details { metadata[key] = "\(PrintableText.escape(value))" }
        context.monitor.logger.notice("admin: \(action)", metadata: metadata)
    }
}
