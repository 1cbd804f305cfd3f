import Foundation
import LookoutCore
import Testing

@testable import LookoutAlerting

/// What each provider's notification says first, as a phone's lock screen shows it: which
/// source, since when, what the upstream said; and the upstream's words stay text in every
/// format, whatever markup they hold.
@Suite("notifications on a lock screen")
struct LockScreenTests {
    let began = Timestamp.parseRFC3339("2026-11-23T19:10:14.135Z")!

    /// What each hook type needs besides its type.
    let extra = [
        "pagerduty": #"url: "http://127.0.0.1:1/oncall", routing_key: "${HOME}""#,
        "email": #"url: "smtp://127.0.0.1:1", starttls: false, from: lookout@example.test, to: [oncall@example.test]"#,
    ]

    func hook(_ type: String) throws -> HookConfig {
        try #require(
            try ConfigLoader.parse(
                """
                sources: [{name: acme, url: "http://127.0.0.1:1/"}]
                alerts:
                  hooks: [{name: h, type: \(type), \(extra[type] ?? #"url: "http://127.0.0.1:1/oncall""#)}]
                """, file: "t.yml", hooks: NotificationProviders.hookKinds
            ).hooks.first)
    }

    /// `acme`'s SourceDown, firing or resolved after `minutes`, its upstream having said `said`.
    func body(_ type: String, said: String = "busy", minutes: Int64 = 4, resolved: Bool = false) throws -> [String: Any] {
        var alert = Alert(
            fingerprint: "SourceDown/acme", rule: "SourceDown", source: "acme", severity: "critical",
            labels: ["alertname": "SourceDown", "severity": "critical", "source": "acme"],
            annotations: [
                "description": "Error while probing acme: the server answered 503. The server said: \(said)", "down_since": "2026-11-23T19:10:14.135Z",
            ],
            startedAtMs: began + 5 * 60_000, resolvedAtMs: nil, id: 1)
        let now = began + minutes * 60_000
        if resolved { alert.resolvedAtMs = now }
        let send = NotificationGroups.Send(hook: "h", status: resolved ? "resolved" : "firing", alerts: [alert], groupLabels: ["source": "acme"])
        let text = ProviderPayloads.body(for: try hook(type), send, externalURL: "https://status.test", nowMs: now)
        return try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    /// A certificate warning on a source that works is not "acme is down".
    @Test func aCertificateWarningSaysWhatItIs() throws {
        let alert = Alert(
            fingerprint: "cert/acme", rule: "CertificateExpiresSoon", source: "acme", severity: "warning",
            labels: ["alertname": "CertificateExpiresSoon", "severity": "warning", "source": "acme"],
            annotations: ["summary": "acme: its TLS certificate expires in less than 14 days", Alert.notAnOutage: "false"],
            startedAtMs: began, resolvedAtMs: nil, id: 2)
        let send = NotificationGroups.Send(hook: "h", status: "firing", alerts: [alert], groupLabels: ["source": "acme"])
        let slack = ProviderPayloads.body(for: try hook("slack"), send, externalURL: "https://status.test", nowMs: began + 60_000)
        #expect(slack.contains("acme: its TLS certificate expires in less than 14 days"))
        #expect(!slack.contains("is down") && !slack.contains("down since"))
    }

    @Test func theFirstLineSaysWhichSourceSinceWhenAndWhatTheUpstreamSaid() throws {
        let line = "acme down since 19:10 UTC: the server answered 503. The server said: busy"
        #expect(try body("slack")["text"] as? String == "🔴 " + line)
        #expect(try body("discord")["content"] as? String == "🔴 " + DiscordProvider.discordText(line))
        let ntfy = try body("ntfy")
        #expect(ntfy["title"] as? String == "acme down since 19:10 UTC")
        #expect((ntfy["message"] as? String)?.hasPrefix("Cause: the server answered 503. The server said: busy\nDown for 4m, since 19:10 UTC") == true)
        let pagerDuty = try #require(try body("pagerduty")["payload"] as? [String: Any])
        #expect(pagerDuty["summary"] as? String == line)
        // When the outage began, not when the rule's `for` let the alert fire five minutes later.
        #expect(pagerDuty["timestamp"] as? String == "2026-11-23T19:10:14.135Z")
        let resolvedMail = try body("email", minutes: 12, resolved: true)
        #expect((resolvedMail["text"] as? String)?.hasPrefix("acme recovered after 12m\n\nCause was: ") == true)
        let teams = String(describing: try body("teams"))
        #expect(teams.contains("acme down since 19:10 UTC"))
    }

    @Test func aTestNotificationLooksLikeOneEverywhere() throws {
        func object(_ type: String) throws -> [String: Any] {
            let text = HookTest.payload(for: try hook(type), externalURL: "https://status.test", nowMs: began)
            return try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        }
        let slack = try object("slack")
        #expect((slack["text"] as? String)?.hasPrefix("🧪 Test: ") == true)
        #expect(((slack["attachments"] as? [[String: Any]])?.first?["color"] as? String) == "#6e7781")
        #expect((try object("discord")["content"] as? String)?.hasPrefix("🧪 Test: ") == true)
        let ntfy = try object("ntfy")
        #expect(ntfy["tags"] as? [String] == ["test_tube"] && ntfy["priority"] as? Int == 3)
        #expect((try object("email")["subject"] as? String)?.hasPrefix("Test: ") == true)
        #expect(!String(describing: try object("teams")).contains("Attention"))
    }

    @Test func aServiceWideAlertIsNotSaidTwice() throws {
        let summary = "Some sources fail while others work, in more than 30% of the last rounds"
        let alert = Alert(
            fingerprint: "PartialFailuresHigh", rule: "PartialFailuresHigh", source: nil, severity: "warning",
            labels: ["alertname": "PartialFailuresHigh", "severity": "warning"], annotations: ["summary": summary],
            startedAtMs: began, resolvedAtMs: nil, id: 1)
        let send = NotificationGroups.Send(hook: "h", status: "firing", alerts: [alert], groupLabels: ["source": ""])
        for type in ["slack", "discord"] {
            let text = ProviderPayloads.body(for: try hook(type), send, externalURL: "https://status.test", nowMs: began)
            let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
            let line = try #require((object["text"] ?? object["content"]) as? String)
            #expect(line == "🔴 " + (type == "discord" ? DiscordProvider.discordText(summary) : summary), "\(type): \(line)")
        }
    }

    @Test func aResolutionSaysHowLongItLastedAndWhatTheCauseWas() throws {
        #expect(try body("slack", minutes: 12, resolved: true)["text"] as? String == "✅ acme recovered after 12m")
        let section = try slackSection(try body("slack", minutes: 12, resolved: true))
        #expect(section.hasPrefix("Was down for 12m\n*Cause was:* the server answered 503."))
        let ntfy = try body("ntfy", minutes: 12, resolved: true)
        #expect(ntfy["title"] as? String == "acme recovered after 12m")
        #expect((ntfy["message"] as? String)?.hasPrefix("Cause was: ") == true)
    }

    /// In its first minute an outage is "Down since 19:10 UTC", not "Down for 0s".
    @Test func aNewOutageSaysSinceWhenNotDownForNoTime() throws {
        let ntfy = try body("ntfy", minutes: 0)
        #expect((ntfy["message"] as? String)?.hasSuffix("\nDown since 19:10 UTC") == true)
    }

    func slackSection(_ body: [String: Any]) throws -> String {
        let blocks = try #require((body["attachments"] as? [[String: Any]])?.first?["blocks"] as? [[String: Any]])
        return try #require((blocks.first { $0["type"] as? String == "section" }?["text"] as? [String: Any])?["text"] as? String)
    }

    /// An upstream that answers with Slack's or Discord's markup pages nobody and hides no link.
    @Test func anUpstreamsMarkupStaysText() throws {
        let hostile = "<!channel> reset at <https://evil.test|status.example.test> & [Reset](https://evil.test) **now** @everyone"
        let slack = try body("slack", said: hostile)
        for text in [slack["text"] as? String ?? "", try slackSection(slack)] {
            #expect(text.contains("&lt;!channel&gt; reset at &lt;https://evil.test|status.example.test&gt; &amp; [Reset]"))
            #expect(!text.contains("<!channel>") && !text.contains("<https://"))
        }
        let discord = try body("discord", said: hostile)
        #expect((discord["allowed_mentions"] as? [String: Any])?["parse"] as? [Any] != nil)
        #expect(((discord["allowed_mentions"] as? [String: Any])?["parse"] as? [Any])?.isEmpty == true)
        let description = try #require((discord["embeds"] as? [[String: Any]])?.first?["description"] as? String)
        #expect(description.contains(#"\[Reset\](https://evil.test) \*\*now\*\* \@everyone"#))
        #expect(!description.contains("[Reset](") && !(discord["content"] as? String ?? "").contains("[Reset]("))
        // A URL stays as it is (Discord links it; a backslash would break it), the text after it is escaped again.
        #expect(DiscordProvider.discordText("see https://status.test/inc_42?a=*b* for _details_") == #"see https://status.test/inc_42?a=*b* for \_details\_"#)
        // Teams: the upstream's words are a TextRun (plain text), not a TextBlock (markdown).
        let card = try #require(
            ((try body("teams", said: hostile)["attachments"] as? [[String: Any]])?.first?["content"] as? [String: Any])?["body"] as? [[String: Any]])
        let textBlocks = card.filter { $0["type"] as? String == "TextBlock" }.compactMap { $0["text"] as? String }
        #expect(!textBlocks.contains { $0.contains("[Reset]") })
        let runs = card.compactMap { $0["inlines"] as? [[String: Any]] }.flatMap { $0 }.compactMap { $0["text"] as? String }
        #expect(runs.contains { $0.contains("[Reset](https://evil.test)") })
    }

    /// A cause of several kilobytes (multi-byte, as a JSON error's text may be) is cut on its
    /// own: since when and the alerts still reach the reader, and ntfy's body fits its 4,096 bytes.
    @Test func aLongCauseLeavesTheLinesAfterItWhole() throws {
        let long = String(repeating: "Überlastung – ", count: 600)
        let section = try slackSection(try body("slack", said: long))
        #expect(section.hasPrefix("Down for 4m, since 19:10 UTC\n"))
        #expect(section.hasSuffix("*Alerts:* SourceDown (critical)"))
        #expect(section.count < 3000)
        let ntfy = try #require(try body("ntfy", said: long)["message"] as? String)
        #expect(ntfy.utf8.count <= 4096)
        #expect(ntfy.hasSuffix("\nDown for 4m, since 19:10 UTC"))
        // At the boundary: as many whole characters as fit with the "…", never a split one.
        let cut = ProviderPayloads.clip(String(repeating: "é", count: 3000), bytes: 4096)
        #expect(cut.utf8.count == 4095 && cut.hasSuffix("é…"))
        #expect(ProviderPayloads.clip(String(repeating: "a", count: 5000), bytes: 4096) == String(repeating: "a", count: 4093) + "…")
        #expect(ProviderPayloads.clip("short", bytes: 4096) == "short")
        #expect(ProviderPayloads.clip("longer", bytes: 2) == "")
        // Email and the webhook keep the whole cause; only chat lines are cut.
        let mail = try body("email", said: long)
        #expect((mail["text"] as? String)?.contains(String(long.prefix(3000))) == true)
        #expect((mail["text"] as? String)?.hasPrefix("acme down since 19:10 UTC\n\nCause: Error while probing acme") == true)
    }
}
