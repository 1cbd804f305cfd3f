@testable import ResilientHTTP
import Testing

@Suite("Time of day")
struct TimeOfDayTests {
    @Test(arguments: [
        (Int64(0), "00:00:00 UTC"),
        (Int64(1_700_000_000_000), "22:13:20 UTC"),  // 2023-11-14T22:13:20Z
        (Int64(86_399_999), "23:59:59 UTC"),
        (Int64(3_723_000), "01:02:03 UTC"),
    ])
    func formatsUTCWithoutAFormatter(ms: Int64, expected: String) {
        #expect(ResilientClient.timeOfDay(ms) == expected)
    }
}
