import LookoutWeb
import MicroHTTPServer
import Testing

/// The admin API refuses rather than accepts when its token is missing or empty, whatever the
/// request presents.
@Suite("admin auth without a token")
struct AdminAuthEmptyTokenTests {
    @Test(arguments: [nil, ""] as [String?])
    func noTokenConfiguredIsForbidden(_ token: String?) {
        for header in [nil, "Bearer ", "Bearer x"] as [String?] {
            var request = HTTPRequest(method: "POST", path: "/-/reload")
            if let header { request.headers.set("Authorization", header) }
            #expect(AdminAuth.refusal(request, token: token)?.status == 403)
        }
    }

    @Test func anEmptyPresentedTokenIsNotTheToken() {
        var request = HTTPRequest(method: "POST", path: "/-/reload")
        request.headers.set("Authorization", "Bearer ")
        #expect(AdminAuth.refusal(request, token: "s3cret")?.status == 401)
        request.headers.set("Authorization", "Bearer s3cret")
        #expect(AdminAuth.refusal(request, token: "s3cret") == nil)
        request.headers.set("Authorization", "Bearer s3cret-and-more")
        #expect(AdminAuth.refusal(request, token: "s3cret")?.status == 401)
    }
}
