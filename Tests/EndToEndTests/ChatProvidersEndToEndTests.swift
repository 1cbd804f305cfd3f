import Foundation
import ResilientHTTP
import TestSupport
import Testing

/// Telegram, Mattermost, Google Chat, Matrix, Pushover, Gotify, incident.io and Splunk On-Call:
/// an outage whose upstream says `<b>&*_"x"</b>` fired and resolved through each, every request
/// checked by lookout-sim the way the service documents it; Telegram's and Matrix's rate limits,
/// said in the body, waited out; `lookout hooks test` for each.
@Suite("chat and paging providers end to end", .serialized)
struct ChatProvidersEndToEndTests {
    let http = CurlTransport()
    static let words = #"<b>&*_"x"</b>"#

    func post(_ url: String) async {
        _ = await http.perform(TransferRequest(url: url, method: "POST", timeout: .seconds(5)))
    }

    /// Writes the secrets and a config with `hooks`; returns the config.
    func setUp(_ directory: URL, _ base: String, switchID: String, hooks: String) throws -> URL {
        for (file, secret) in [
            ("telegram.token", "123456:ABC-telegram-token"), ("matrix.token", "syt_matrix_secret_token"),
            ("pushover.token", "azGDORePK8gMaC0QOYAMyEEuzJnyUi"), ("pushover.user", "uQiRzpo4DXghDmr9QzzfQu27cmVRsG"),
            ("gotify.token", "AgotifyAppToken"), ("incidentio.token", "inc_secret_token"),
        ] {
            try "\(secret)\n".write(to: directory.appendingPathComponent(file), atomically: true, encoding: .utf8)
        }
        let detail = Self.words.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let config = directory.appendingPathComponent("lookout.yml")
        try """
        listen: 127.0.0.1:0
        database: \(directory.path)/lookout.sqlite
        external_url: https://status.example.test
        defaults: {interval: 200ms, timeout: 2s, retry: {server_error: {max_attempts: 1}}, circuit_breaker: {failure_threshold: 1000}}
        sources:
          - {name: payments, url: "\(base)/switch/\(switchID)?code=503&detail=\(detail)"}
        alerts:
          evaluation_interval: 200ms
          rules:
            - {name: SourceDown, severity: critical, expr: up == 0, annotations: {summary: "{source} is down"}}
          hooks:
        \(hooks)
        """.write(to: config, atomically: true, encoding: .utf8)
        return config
    }

    static func hooks(_ base: String) -> String {
        """
            - {name: telegram, type: telegram, url: "\(base)/telegram", bot_token_file: telegram.token, chat_id: "-1001234", message_thread_id: 7, group_wait: 0s}
            - {name: mattermost, type: mattermost, url: "\(base)/mattermost/hooks/xyz", channel: oncall, username: lookout, group_wait: 0s}
            - {name: googlechat, type: googlechat, url: "\(base)/googlechat/v1/spaces/AAA/messages?key=k&token=t", group_wait: 0s}
            - {name: matrix, type: matrix, url: "\(base)", room_id: "!room:example.org", access_token_file: matrix.token, group_wait: 0s}
            - {name: pushover, type: pushover, url: "\(base)/pushover/1/messages.json", token_file: pushover.token, user_key_file: pushover.user, group_wait: 0s}
            - {name: gotify, type: gotify, url: "\(base)/gotify", token_file: gotify.token, group_wait: 0s}
            - {name: incidentio, type: incidentio, url: "\(base)/incidentio/v2/alert_events/http/01ABC", token_file: incidentio.token, group_wait: 0s}
            - {name: splunk, type: splunk_oncall, url: "\(base)/splunk/integrations/generic/20131114/alert/API-KEY/routing", group_wait: 0s}
        """
    }

    /// Fails the source until a firing and a resolved notification reached every path.
    func outage(_ base: String, _ lookoutConfig: URL, switchID: String, paths: [String]) async throws -> [[String: Any]] {
        let (lookout, _) = try await startLookout(config: lookoutConfig)
        await post("\(base)/switch/\(switchID)/on")
        _ = try await eventually("a firing notification through every provider") { () -> Bool? in
            let entries = try await simulatorWebhookLog(base).filter { $0["throttled"] as? Bool != true }
            return paths.allSatisfy { path in entries.contains { ($0["path"] as? String)?.hasPrefix(path) == true } } ? true : nil
        }
        await post("\(base)/switch/\(switchID)/off")
        let entries = try await eventually("a resolved notification through every provider") { () -> [[String: Any]]? in
            let entries = try await simulatorWebhookLog(base).filter { $0["throttled"] as? Bool != true }
            return paths.allSatisfy { path in entries.filter { ($0["path"] as? String)?.hasPrefix(path) == true }.count >= 2 } ? entries : nil
        }
        #expect(try await lookout.terminate() == 0)
        return entries
    }

    @Test func anOutageReachesEveryProviderAsItsServiceDocuments() async throws {
        let directory = try makeTemporaryDirectory("chat-providers")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (sim, base) = try await startSimulator()
        let switchID = "chat-\(UUID().uuidString.prefix(8))"
        let config = try setUp(directory, base, switchID: switchID, hooks: Self.hooks(base))
        // Telegram says its wait in `parameters.retry_after`, Matrix in `retry_after_ms`, neither
        // in a header: each one's first request is told to wait 8 s, longer than any backoff of
        // Lookout's own would (1 s) before a second try.
        await post("\(base)/providers/throttle?count=1&retry_after=8&path=/telegram/")
        await post("\(base)/providers/throttle?count=1&retry_after=8&path=/_matrix/")
        let paths = [
            "/telegram/", "/mattermost/", "/googlechat/", "/_matrix/", "/pushover/", "/gotify/", "/incidentio/", "/splunk/",
        ]
        let entries = try await outage(base, config, switchID: switchID, paths: paths)
        for entry in entries {
            #expect(entry["problem"] is NSNull, "\(entry["path"] ?? "") refused: \(entry["problem"] ?? "") — \(entry["raw"] ?? "")")
        }
        let log = try await simulatorWebhookLog(base)
        for prefix in ["/telegram/", "/_matrix/"] {
            let throttled = try #require(log.first { $0["throttled"] as? Bool == true && ($0["path"] as? String)?.hasPrefix(prefix) == true })
            let retried = try #require(log.first { $0["throttled"] as? Bool != true && ($0["path"] as? String)?.hasPrefix(prefix) == true })
            let waited = ((retried["received_at_ms"] as? Int) ?? 0) - ((throttled["received_at_ms"] as? Int) ?? 0)
            #expect(waited >= 8000, "\(prefix) was retried after \(waited) ms")
            // The same notification; for Matrix, the same transaction.
            if prefix == "/_matrix/" { #expect(throttled["path"] as? String == retried["path"] as? String) }
        }
        func received(_ path: String) -> [[String: Any]] {
            entries.filter { ($0["path"] as? String)?.hasPrefix(path) == true }
        }
        func payloads(_ path: String) -> [[String: Any]] { received(path).compactMap { $0["payload"] as? [String: Any] } }
        let html = "&lt;b&gt;&amp;*_&quot;x&quot;&lt;/b&gt;"

        // Telegram: the token in the path only, HTML escaped, the topic, the link.
        let telegram = received("/telegram/")
        #expect(telegram.first?["path"] as? String == "/telegram/bot123456:ABC-telegram-token/sendMessage")
        let telegramText = payloads("/telegram/").map { $0["text"] as? String ?? "" }
        #expect(telegramText.first?.contains(html) == true, "\(telegramText)")
        #expect(telegramText.first?.hasPrefix("🔴 <b>payments down since") == true, "\(telegramText)")
        #expect(telegramText.last?.hasPrefix("✅ <b>payments recovered") == true, "\(telegramText)")
        #expect(payloads("/telegram/").first?["message_thread_id"] as? Int == 7)
        #expect(payloads("/telegram/").first?["chat_id"] as? Int == -1_001_234)

        // Mattermost: a red then green attachment, Markdown escaped.
        let mattermost = payloads("/mattermost/").compactMap { ($0["attachments"] as? [[String: Any]])?.first }
        #expect(mattermost.map { $0["color"] as? String ?? "" } == ["#cf222e", "#1a7f37"])
        let mattermostText = (mattermost.first?["text"] as? String) ?? ""
        #expect(mattermostText.contains(#"\<b\>&\*\_"x"\</b\>"#), "\(mattermostText)")
        #expect(payloads("/mattermost/").first?["channel"] as? String == "oncall")

        // Google Chat: one thread for the outage's down and recovered; the card escaped.
        let chat = payloads("/googlechat/")
        #expect(Set(chat.compactMap { ($0["thread"] as? [String: Any])?["threadKey"] as? String }) == ["lookout-payments"])
        #expect(received("/googlechat/").allSatisfy { ($0["query"] as? [String: String])?["messageReplyOption"] == "REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD" })
        let card = String(describing: chat.first?["cardsV2"] ?? "")
        #expect(card.contains("&lt;b&gt;"), "\(card)")
        let chatText = (chat.first?["text"] as? String) ?? "<"
        #expect(!chatText.contains("<"), "\(chatText)")

        // Matrix: PUT with the bearer token, one transaction id per notification, HTML escaped.
        let matrix = received("/_matrix/")
        #expect(matrix.allSatisfy { $0["method"] as? String == "PUT" && $0["authorization"] as? String == "Bearer syt_matrix_secret_token" })
        #expect(Set(matrix.compactMap { $0["path"] as? String }).count == matrix.count)
        #expect((payloads("/_matrix/").first?["formatted_body"] as? String)?.contains(html) == true)
        #expect((payloads("/_matrix/").first?["body"] as? String)?.contains(Self.words) == true)

        // Pushover: the keys in the body, high priority firing, quiet recovery, the page's link.
        let pushover = payloads("/pushover/")
        #expect(pushover.allSatisfy { $0["token"] as? String == "azGDORePK8gMaC0QOYAMyEEuzJnyUi" && $0["user"] as? String == "uQiRzpo4DXghDmr9QzzfQu27cmVRsG" })
        #expect(pushover.map { $0["priority"] as? Int ?? 9 } == [1, -1])
        #expect((pushover.first?["url"] as? String)?.hasPrefix("https://status.example.test/") == true)
        #expect((pushover.first?["message"] as? String)?.contains(Self.words) == true)

        // Gotify: the token in its header, priority from severity.
        #expect(received("/gotify/").allSatisfy { $0["gotify_key"] as? String == "AgotifyAppToken" })
        #expect(payloads("/gotify/").map { $0["priority"] as? Int ?? 0 } == [8, 2])

        // incident.io: firing then resolved under one deduplication key, the bearer token.
        let incident = payloads("/incidentio/")
        #expect(incident.map { $0["status"] as? String ?? "" } == ["firing", "resolved"])
        #expect(Set(incident.compactMap { $0["deduplication_key"] as? String }).count == 1)
        #expect(received("/incidentio/").allSatisfy { $0["authorization"] as? String == "Bearer inc_secret_token" })

        // Splunk On-Call: CRITICAL then RECOVERY for one entity.
        let splunk = payloads("/splunk/")
        #expect(splunk.map { $0["message_type"] as? String ?? "" } == ["CRITICAL", "RECOVERY"])
        #expect(Set(splunk.compactMap { $0["entity_id"] as? String }).count == 1)

        // No token is stored.
        let stored = try String(contentsOf: directory.appendingPathComponent("lookout.sqlite"), encoding: .isoLatin1)
        for secret in ["123456:ABC-telegram-token", "syt_matrix_secret_token", "azGDORePK8gMaC0QOYAMyEEuzJnyUi", "AgotifyAppToken", "inc_secret_token"] {
            #expect(!stored.contains(secret), "\(secret) is in the database")
        }

        // A test notification through each, from the command line.
        let binary = ChildProcess.binDirectory.appendingPathComponent("lookout").path
        for hook in ["telegram", "mattermost", "googlechat", "matrix", "pushover", "gotify", "incidentio", "splunk"] {
            let tested = try await runTool(binary, ["hooks", "test", hook, "--config", config.path])
            #expect(tested.status == 0, "\(hook): \(tested.output)")
        }
        let all = try await simulatorWebhookLog(base).filter { $0["throttled"] as? Bool != true }
        #expect(all.filter { $0["problem"] is NSNull }.count == entries.count + 8)
        #expect(try await sim.terminate() == 0)
    }
}
