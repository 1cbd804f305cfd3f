import Foundation
import ResilientHTTP
import TestSupport
import Testing

/// lookout-sim is what every other integration test stands on: its behaviour is checked here.
@Suite("lookout-sim")
struct SimulatorTests {
    let http = CurlTransport()

    func get(_ url: String, headers: [(name: String, value: String)] = [], method: String = "GET", body: [UInt8]? = nil) async -> TransferResult {
        await http.perform(TransferRequest(url: url, method: method, headers: headers, body: body, timeout: .seconds(10), maxResponseBytes: 64 << 20))
    }

    @Test func behavesAsDocumented() async throws {
        let sim = try ChildProcess("lookout-sim", ["--listen", "127.0.0.1:0"])
        let base = "http://127.0.0.1:\(try await sim.waitFor(#"listening on http://127\.0\.0\.1:(\d+)/"#))"

        #expect(await get("\(base)/ok").bodyText == #"{"ok":true}"#)
        let status = await get("\(base)/status/503?retry_after=7&detail=down%20for%20a%20bit")
        #expect(status.httpStatus == 503)
        #expect(status.header("Retry-After") == "7")
        #expect(status.bodyText == #"{"detail":"down for a bit"}"#)

        var flaky: [Int?] = []
        for _ in 0..<4 { flaky.append(await get("\(base)/flaky/x?fail=2&code=502").httpStatus) }
        #expect(flaky == [502, 502, 200, 200])
        _ = await get("\(base)/flaky/x/reset")
        #expect(await get("\(base)/flaky/x?fail=2&code=502").httpStatus == 502)

        let full = await get("\(base)/download/300000?seed=9")
        #expect(full.body.count == 300_000)
        #expect(full.header("X-Content-SHA256") == SHA256.hex(full.body))
        let again = await get("\(base)/download/300000?seed=9")
        #expect(again.body == full.body)
        #expect(await get("\(base)/download/300000?seed=10").body != full.body)

        let etag = try #require(full.header("ETag"))
        let tail = await get("\(base)/download/300000?seed=9", headers: [("Range", "bytes=100000-"), ("If-Range", etag)])
        #expect(tail.httpStatus == 206)
        #expect(tail.header("Content-Range") == "bytes 100000-299999/300000")
        #expect(tail.body == Array(full.body[100_000...]))
        let stale = await get("\(base)/download/300000?seed=9", headers: [("Range", "bytes=100000-"), ("If-Range", "\"other\"")])
        #expect(stale.httpStatus == 200)
        #expect(stale.body.count == 300_000)

        let truncated = await get("\(base)/download/300000?seed=9&truncate_at=120000")
        #expect(truncated.curlCode != 0)
        #expect(truncated.body == Array(full.body[..<120_000]))
        let corrupt = await get("\(base)/download/300000?seed=9&corrupt=1")
        #expect(corrupt.body.count == 300_000)
        #expect(SHA256.hex(corrupt.body) != corrupt.header("X-Content-SHA256"))

        #expect(await get("\(base)/drop").curlCode == 52)
        let redirected = await get("\(base)/redirect?n=3")
        #expect(redirected.httpStatus == 200 && redirected.redirects == 3)
        #expect(await get("\(base)/rss/valid?items=4").bodyText.components(separatedBy: "<item>").count == 5)
        #expect(await get("\(base)/atom/valid?items=2").bodyText.components(separatedBy: "<entry>").count == 3)

        #expect(await get("\(base)/protected").httpStatus == 401)
        let token = await get("\(base)/oauth/token?ttl=60", method: "POST", body: Array("grant_type=client_credentials&client_id=a&client_secret=b".utf8))
        let tokenObject = try #require(try JSONSerialization.jsonObject(with: Data(token.body)) as? [String: Any])
        let accessToken = try #require(tokenObject["access_token"] as? String)
        #expect(await get("\(base)/protected", headers: [("Authorization", "Bearer \(accessToken)")]).httpStatus == 200)
        let refused = await get("\(base)/oauth/token", method: "POST", body: Array("grant_type=client_credentials&client_secret=wrong".utf8))
        #expect(refused.httpStatus == 401)

        _ = await get("\(base)/webhook", headers: [("X-Lookout-Delivery", "42")], method: "POST", body: Array(#"{"status":"firing"}"#.utf8))
        let log = await get("\(base)/webhook/log").bodyText
        #expect(log.contains(#""delivery":"42""#) && log.contains(#""status":"firing""#))

        let counters = try #require(try JSONSerialization.jsonObject(with: Data(await get("\(base)/counters").body)) as? [String: Int])
        #expect(counters["/flaky/x"] == 5)
        #expect(counters["/ok"] == 2)  // one direct, one at the end of the redirects
        #expect(try await sim.terminate() == 0)
    }
}
