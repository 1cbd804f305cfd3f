import Foundation
import MicroHTTPServer
import TestSupport
import Testing

@testable import ResilientHTTP

/// A source's own header fields go to its own origin only (issue "Nothing told is lost…", row 9):
/// libcurl drops `Authorization` and `Cookie` on a redirect to another host, but sent a source's
/// `X-Api-Key` to wherever its upstream pointed.
@Suite("redirects and header fields")
struct RedirectHeaderTests {
    let transport = CurlTransport()

    /// Answers with the fields that matter here and the request's method.
    func startEcho() throws -> HTTPServer {
        var router = Router()
        for method in ["GET", "POST"] {
            router.add(method, "/echo") { request in
                .text("\(request.method) key=\(request.headers["x-api-key"] ?? "-") range=\(request.headers["range"] ?? "-") body=\(request.body.count)")
            }
        }
        let server = HTTPServer(configuration: .init(port: 0), router: router)
        try server.start()
        return server
    }

    /// Redirects to `to` (a path here, or another server's URL) with `status`.
    func startRedirecting(to other: HTTPServer) throws -> HTTPServer {
        var router = Router()
        let elsewhere = "http://127.0.0.1:\(other.port)/echo"
        for method in ["GET", "POST"] {
            router.add(method, "/other/:status") { request in HTTPResponse(status: Int(request.pathParameters["status"]!)!, headers: ["Location": elsewhere]) }
            router.add(method, "/same") { _ in HTTPResponse(status: 302, headers: ["Location": "/echo"]) }
            router.add(method, "/echo") { request in .text("\(request.method) key=\(request.headers["x-api-key"] ?? "-") range=-") }
        }
        router.get("/loop") { _ in HTTPResponse(status: 302, headers: ["Location": "/loop"]) }
        let server = HTTPServer(configuration: .init(port: 0), router: router)
        try server.start()
        return server
    }

    func get(_ url: String, method: String = "GET", body: [UInt8]? = nil, forward: Bool = false) async -> TransferResult {
        var request = TransferRequest(url: url, method: method, headers: [("X-Api-Key", "secret"), ("Range", "bytes=5-")], body: body, timeout: .patient)
        request.forwardHeadersOnRedirect = forward
        return await transport.perform(request)
    }

    /// An origin is scheme, host and port, the port the scheme's when none is written, the
    /// scheme and host in any case; a URL that does not parse matches nothing else.
    @Test func originsCompareSchemeHostAndPort() {
        #expect(RequestOrigin("https://API.example/a") == RequestOrigin("HTTPS://api.example:443/b?c"))
        #expect(RequestOrigin("http://[::1]/") == RequestOrigin("http://[::1]:80/x"))
        #expect(RequestOrigin("http://api.example/") != RequestOrigin("https://api.example/"))
        #expect(RequestOrigin("http://api.example:8080/") != RequestOrigin("http://api.example/"))
        #expect(RequestOrigin("http://api.example/") != RequestOrigin("http://api.example.evil/"))
        #expect(RequestOrigin("not a url") != RequestOrigin("http://api.example/"))
    }

    @Test func aKeyIsNotSentToAnotherOrigin() async throws {
        let echo = try startEcho()
        let redirecting = try startRedirecting(to: echo)
        let base = "http://127.0.0.1:\(redirecting.port)"
        let away = await get("\(base)/other/302")
        #expect(away.httpStatus == 200)
        #expect(away.bodyText == "GET key=- range=bytes=5- body=0")
        #expect(away.redirects == 1)
        #expect(away.totalSeconds > 0)
        // At the same origin the key goes along.
        let same = await get("\(base)/same")
        #expect(same.bodyText == "GET key=secret range=-")
        #expect(same.redirects == 1)
        // Unless the source says to forward it.
        let forwarded = await get("\(base)/other/302", forward: true)
        #expect(forwarded.bodyText == "GET key=secret range=bytes=5- body=0")
        await redirecting.stop()
        await echo.stop()
    }

    @Test func aPostFollowsAsTheRFCSays() async throws {
        let echo = try startEcho()
        let redirecting = try startRedirecting(to: echo)
        let base = "http://127.0.0.1:\(redirecting.port)"
        #expect(await get("\(base)/other/303", method: "POST", body: Array("hello".utf8)).bodyText == "GET key=- range=bytes=5- body=0")
        #expect(await get("\(base)/other/302", method: "POST", body: Array("hello".utf8)).bodyText == "GET key=- range=bytes=5- body=0")
        #expect(await get("\(base)/other/307", method: "POST", body: Array("hello".utf8)).bodyText == "POST key=- range=bytes=5- body=5")
        await redirecting.stop()
        await echo.stop()
    }

    @Test func aLoopStillEndsAsTooManyRedirects() async throws {
        let echo = try startEcho()
        let redirecting = try startRedirecting(to: echo)
        var request = TransferRequest(
            url: "http://127.0.0.1:\(redirecting.port)/loop", headers: [("X-Api-Key", "secret")], timeout: .patient, maxRedirects: 3)
        request.forwardHeadersOnRedirect = false
        let result = await transport.perform(request)
        #expect(result.redirects == 3)
        #expect(FailureClassifier.classify(result)?.reason == "too_many_redirects")
        await redirecting.stop()
        await echo.stop()
    }
}
