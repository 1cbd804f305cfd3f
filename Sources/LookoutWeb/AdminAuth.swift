import LookoutCore
import MicroHTTPServer
import ResilientHTTP

/// Guards admin endpoints: `Authorization: Bearer <admin token>`, compared in constant time.
/// Without a configured token they answer 403; without or with a wrong header, 401.
package enum AdminAuth {
    /// nil when the request may go on, otherwise the response to send.
    package static func refusal(_ request: HTTPRequest, token: String?) -> HTTPResponse? {
        guard let token else {
            return APIRoutes.error("admin endpoints are disabled: set admin_token_file in the config", status: 403)
        }
        let header = request.headers["Authorization"] ?? ""
        let presented = header.hasPrefix("Bearer ") ? String(header.dropFirst("Bearer ".count)) : ""
        guard SHA256.constantTimeEquals(Array(presented.utf8), Array(token.utf8)) else {
            var response = APIRoutes.error("missing or wrong admin token", status: 401)
            response.headers.set("WWW-Authenticate", #"Bearer realm="lookout""#)
            return response
        }
        return nil
    }
}
