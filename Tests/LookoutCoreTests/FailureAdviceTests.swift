import ResilientHTTP
import Testing

@testable import LookoutCore

@Suite("failure advice")
struct FailureAdviceTests {
    @Test func everyCategoryHasATitleAndAdvice() {
        for category in ErrorCategory.allCases {
            #expect(!category.title.isEmpty && !category.recoverySuggestion.isEmpty)
        }
    }

    @Test func aReasonThatSaysMoreGetsItsOwnWords() {
        let slow = Failure(category: .invalidResponse, reason: "slow_response")
        #expect(slow.title == "Slow response")
        #expect(slow.recoverySuggestion.contains("max_latency"))
        let bare = Failure(category: .authError, reason: "http_401", httpStatus: 401, detail: Failure.noCredentials)
        #expect(bare.recoverySuggestion.contains("add auth"))
        let other = Failure(category: .authError, reason: "http_401", httpStatus: 401)
        #expect(other.recoverySuggestion == ErrorCategory.authError.recoverySuggestion)
    }

    @Test func lookoutNamesItselfToUpstreams() {
        #expect(LookoutVersion.userAgent == "Lookout/\(LookoutVersion.string)")
    }
}
