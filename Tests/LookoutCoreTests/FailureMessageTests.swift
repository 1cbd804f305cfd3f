import Foundation
import MicroHTTPServer
import ResilientHTTP
import Testing

/// Messages that say what happened (issue "Operator polish"): the reason refines the category's
/// title and advice where it knows more.
@Suite("failure messages")
struct FailureMessageTests {
    @Test func redirectsSlowAnswersAndMissingCredentialsSayWhatHappened() {
        let redirects = Failure(category: .clientError, reason: "too_many_redirects", httpStatus: 302)
        #expect(redirects.message(operation: "probing a") == "Error while probing a: the server kept redirecting (the last answer was 302).")
        #expect(redirects.title == "Too many redirects")
        let slow = Failure(category: .invalidResponse, reason: "slow_response", detail: "the answer took 2300 ms, more than the 2s allowed")
        #expect(slow.title == "Slow response")
        #expect(slow.recoverySuggestion.contains("max_latency"))
        let refused = Failure(
            category: .clientError, reason: "redirect_not_allowed", httpStatus: 302,
            detail: "the server redirected to http://x/, which the module's allow patterns do not allow")
        #expect(refused.message(operation: "probing a").hasSuffix("the module's allow patterns do not allow."))
        #expect(Failure(category: .serverError, reason: "http_503", httpStatus: 503).recoverySuggestion == ErrorCategory.serverError.recoverySuggestion)
    }

    @Test func a401WithoutCredentialsSaysSoAndDoesNotClaimARefresh() async throws {
        var router = Router()
        router.get("/protected") { _ in .text("who are you?\n", status: 401) }
        let server = HTTPServer(configuration: .init(port: 0), router: router)
        try server.start()
        let client = ResilientClient()
        let outcome = await client.call(upstream: "a", CallRequest(TransferRequest(url: "http://127.0.0.1:\(server.port)/protected", timeout: .patient)))
        let failure = try #require(outcome.failure)
        #expect(failure.reason == "http_401")
        #expect(
            failure.message(operation: "probing a")
                == "Error while probing a: the server answered 401 (the source has no credentials configured). The server said: who are you?")
        #expect(failure.recoverySuggestion.hasPrefix("The upstream wants credentials and the source has none"))
        #expect(!failure.recoverySuggestion.contains("refreshed"))
        await server.stop()
    }
}
