import Foundation
import Logging
import LookoutCore
import LookoutStore
import LookoutWeb
import MicroHTTPServer
import ResilientHTTP
import Testing

/// A field an admin POST does not know is refused with its name, never silently left out: a
/// window with `weekdays` beside `ends_at` was stored as a one-off, its recurrence dropped.
@Suite("admin request fields")
struct AdminBodyFieldsTests {
    static let token = "fields-token"

    struct Routes {
        let router: Router
        let database: LookoutDatabase
        let monitor: Monitor

        init() throws {
            let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
            var config = LookoutConfig(
                database: ":memory:",
                sources: [SourceConfig(name: "acme", kind: .http, url: "http://127.0.0.1:1/", interval: .seconds(3600), timeout: .seconds(1))])
            config.adminToken = AdminBodyFieldsTests.token
            database = try LookoutDatabase(path: ":memory:")
            monitor = Monitor(config: config, configPath: nil, logger: logger)
            monitor.start()
            // What the first apply of a running monitor does for each source.
            monitor.client.configure(upstream: "acme", policy: config.sources[0].policy)
            router = LookoutRoutes.router(LookoutContext(monitor: monitor, database: database))
        }

        func post(_ path: String, _ body: String) async -> (status: Int, message: String) {
            let response = await router.respond(
                to: HTTPRequest(method: "POST", path: path, headers: ["Authorization": "Bearer \(AdminBodyFieldsTests.token)"], body: Array(body.utf8)))
            guard case .bytes(let bytes) = response.body,
                let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any]
            else { return (response.status, "") }
            return (response.status, object["message"] as? String ?? "")
        }

        /// The list a GET of `path` answers under `key`.
        func list(_ path: String, _ key: String) async -> [Any]? {
            let response = await router.respond(to: HTTPRequest(method: "GET", path: path))
            guard case .bytes(let bytes) = response.body else { return nil }
            return (try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])?[key] as? [Any]
        }

        /// Nothing any of the POSTs would have stored or changed.
        func untouched() async -> Bool {
            let windows = await list("/api/v1/maintenance", "windows")
            let silences = await list("/api/v1/silences", "silences")
            let announcements = await list("/api/v1/announcements", "announcements")
            return windows?.isEmpty == true && silences?.isEmpty == true && announcements?.isEmpty == true
                && monitor.client.breakers(["acme"])[0]?.state != .forcedOpen
        }
    }

    @Test(arguments: [
        (
            "/api/v1/maintenance", #"{"sources":["acme"],"ends_at":"2099-01-01T00:00:00Z","weekdays":["mon"],"at":"02:30"}"#,
            "at: a recurring window's fields go inside recurring: {weekdays, at, duration, time_zone}"
        ),
        (
            "/api/v1/maintenance", #"{"sources":["acme"],"ends_at":"2099-01-01T00:00:00Z","notes":"typo"}"#,
            "notes: unknown field (use sources, matchers, starts_at, ends_at, recurring, note)"
        ),
        (
            "/api/v1/silences", #"{"matchers":{"source":"acme"},"ends_at":"2099-01-01T00:00:00Z","coment":"typo"}"#,
            "coment: unknown field (use matchers, starts_at, ends_at, comment)"
        ),
        ("/api/v1/sources/acme/breaker", #"{"action":"force_open","until":"2099-01-01T00:00:00Z"}"#, "until: unknown field (use action)"),
        (
            "/api/v1/announcements", #"{"title":"t","message":"m","state":"investigating","severity":"major"}"#,
            "severity: unknown field (use title, message, state, sources)"
        ),
    ])
    func anUnknownFieldIsNamedAndNothingIsStored(path: String, body: String, message: String) async throws {
        let routes = try Routes()
        let answer = await routes.post(path, body)
        #expect(answer.status == 400)
        #expect(answer.message == message)
        #expect(await routes.untouched())
    }

    @Test func aLongUnknownNameIsShortened() async throws {
        let answer = try await Routes().post("/api/v1/silences", "{\"\(String(repeating: "x", count: 500))\": 1}")
        #expect(answer.status == 400)
        #expect(answer.message == String(repeating: "x", count: 64) + "…: unknown field (use matchers, starts_at, ends_at, comment)")
    }

    @Test func theKnownFieldsStillWork() async throws {
        let routes = try Routes()
        #expect(await routes.untouched())
        #expect(await routes.post("/api/v1/maintenance", #"{"sources":["acme"],"ends_at":"2099-01-01T00:00:00Z","note":"n"}"#).status == 201)
        #expect(await routes.post("/api/v1/silences", #"{"matchers":{"source":"acme"},"ends_at":"2099-01-01T00:00:00Z","comment":"c"}"#).status == 201)
        #expect(await routes.post("/api/v1/sources/acme/breaker", #"{"action":"force_open"}"#).status == 200)
        #expect(await routes.post("/api/v1/announcements", #"{"title":"t","message":"m","state":"investigating"}"#).status == 201)
        // Each of them shows: the check above can fail.
        #expect(await routes.untouched() == false)
        #expect(await routes.list("/api/v1/maintenance", "windows")?.count == 1)
        #expect(await routes.list("/api/v1/silences", "silences")?.count == 1)
        #expect(await routes.list("/api/v1/announcements", "announcements")?.count == 1)
        #expect(routes.monitor.client.breakers(["acme"])[0]?.state == .forcedOpen)
    }
}

/// A breaker the client has not taken up yet cannot be acted on, and the answer says so.
@Suite("breaker action before the first apply")
struct BreakerBeforeApplyTests {
    @Test func aBreakerNotSetUpAnswers503NotClosed() async throws {
        let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        var config = LookoutConfig(
            database: ":memory:",
            sources: [SourceConfig(name: "acme", kind: .http, url: "http://127.0.0.1:1/", interval: .seconds(3600), timeout: .seconds(1))])
        config.adminToken = "t"
        let monitor = Monitor(config: config, configPath: nil, logger: logger)
        monitor.start()
        let router = LookoutRoutes.router(LookoutContext(monitor: monitor, database: try LookoutDatabase(path: ":memory:")))
        let response = await router.respond(
            to: HTTPRequest(
                method: "POST", path: "/api/v1/sources/acme/breaker", headers: ["Authorization": "Bearer t"], body: Array(#"{"action":"force_open"}"#.utf8)))
        #expect(response.status == 503)
        monitor.client.configure(upstream: "acme", policy: config.sources[0].policy)
        let again = await router.respond(
            to: HTTPRequest(
                method: "POST", path: "/api/v1/sources/acme/breaker", headers: ["Authorization": "Bearer t"], body: Array(#"{"action":"force_open"}"#.utf8)))
        #expect(again.status == 200)
        #expect(monitor.client.breakers(["acme"])[0]?.state == .forcedOpen)
    }
}
