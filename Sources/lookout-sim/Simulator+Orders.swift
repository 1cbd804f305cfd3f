import Foundation
import MicroHTTPServer

/// An API behind a login, for flows: `POST /orders` with a token from `/oauth/token` creates an
/// order (201, its `id`, and a `cart` cookie), `DELETE /orders/ID` with the token and the cookie
/// removes it (204). `?reject=1` answers 401 "token expired" whatever the token; `/counters`
/// shows which orders were created and deleted.
extension Simulator {
    func createOrder(_ request: HTTPRequest) async -> HTTPResponse {
        guard hasLiveToken(request), request.query["reject"] == nil else {
            return .json(#"{"error":"invalid_token","error_description":"token expired"}"#, status: 401)
        }
        let id = state.withLock { state -> String in
            state.issuedTokens += 1
            return "order-\(state.issuedTokens)"
        }
        var response = HTTPResponse.json(Simulator.jsonText(["id": id, "sku": "probe-item"]), status: 201)
        response.headers.set("Set-Cookie", "cart=\(id); Path=/; HttpOnly")
        return response
    }

    func deleteOrder(_ request: HTTPRequest) async -> HTTPResponse {
        guard hasLiveToken(request) else { return .json(#"{"error":"invalid_token","error_description":"token expired"}"#, status: 401) }
        let id = request.pathParameters["id"] ?? ""
        guard (request.headers["Cookie"] ?? "").contains("cart=\(id)") else {
            return .json(#"{"error":"no_cart","error_description":"the cart cookie of this order is missing"}"#, status: 400)
        }
        return HTTPResponse(status: 204)
    }
}
