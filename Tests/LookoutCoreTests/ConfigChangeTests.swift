import LookoutAlerting
import LookoutCore
import Testing

/// What a reload changed, by name (issue "Operator polish II": an audit trail; "Nothing told is
/// lost…", row 15: a reload that changed `listen` or `database` said it succeeded and ignored them).
@Suite("config change")
struct ConfigChangeTests {
    func config(_ text: String) throws -> LookoutConfig { try ConfigLoader.parse(text, file: "t.yml", hooks: NotificationProviders.hookKinds) }

    @Test func namesWhatWasAddedRemovedAndChangedAndWhatWaitsForARestart() throws {
        let before = try config(
            """
            listen: 127.0.0.1:9464
            sources:
              - {name: kept, url: "http://127.0.0.1/k"}
              - {name: edited, url: "http://127.0.0.1/e"}
              - {name: gone, url: "http://127.0.0.1/g"}
            alerts:
              hooks: [{name: chat, type: webhook, url: "http://127.0.0.1/hook"}]
            """)
        let after = try config(
            """
            listen: 0.0.0.0:9464
            retention: 10d
            sources:
              - {name: kept, url: "http://127.0.0.1/k"}
              - {name: edited, url: "http://127.0.0.1/e", interval: 5s}
              - {name: new, url: "http://127.0.0.1/n"}
            alerts:
              hooks: [{name: chat, type: webhook, url: "http://127.0.0.1/hook", group_wait: 5s}, {name: pager, type: webhook, url: "http://127.0.0.1/p"}]
            """)
        let change = ConfigChange(from: before, to: after)
        #expect(change.sourcesAdded == ["new"])
        #expect(change.sourcesRemoved == ["gone"])
        #expect(change.sourcesChanged == ["edited"])
        #expect(change.hooksAdded == ["pager"])
        #expect(change.hooksChanged == ["chat"])
        #expect(change.hooksRemoved.isEmpty)
        #expect(change.needsRestart == ["listen: 127.0.0.1:9464 → 0.0.0.0:9464", "retention: 30d → 10d"])
        #expect(
            change.metadata == [
                "sources_added": "new", "sources_removed": "gone", "sources_changed": "edited", "hooks_added": "pager", "hooks_changed": "chat",
            ])
        #expect(ConfigChange(from: after, to: after) == ConfigChange(from: before, to: before))
        #expect(ConfigChange(from: after, to: after).metadata.isEmpty)
    }
}

/// check-config's lines (issue "Operator polish II"): warnings come with the errors of the same
/// pass, and a problem under `sources[N]` or `alerts.hooks[N]` names what is there.
@Suite("config problems for people")
struct ConfigProblemNamingTests {
    @Test func warningsComeWithErrorsAndNameTheirSource() throws {
        let text = """
            sources:
              - {name: alpha, url: "http://127.0.0.1/"}
              - {name: payments, url: "http://127.0.0.1/", interval: 5s, timeout: 1h}
              - {name: beta, url: "http://127.0.0.1/", interval: 5x}
            alerts:
              hooks: [{name: chat, type: webhook, url: "ftp://x/"}]
            """
        let error = try #require(throws: ConfigError.self) { try ConfigLoader.parse(text, file: "t.yml", hooks: NotificationProviders.hookKinds) }
        #expect(error.problems.map(\.naming).contains(#"t.yml:4:54: sources[2].interval (source "beta"): "5x" is not a duration (use 500ms, 30s, 5m, 1h)"#))
        #expect(error.problems.contains { $0.path.hasPrefix("alerts.hooks[0]") && $0.subject == #"hook "chat""# })
        #expect(error.warnings.map(\.naming).contains { $0.hasPrefix(#"t.yml:3:71: sources[1].timeout (source "payments"): 1h is longer than the interval"#) })
        // description stays as it was: tools that read FILE:LINE:COLUMN: PATH: keep working.
        #expect(error.problems.map(\.description).contains(#"t.yml:4:54: sources[2].interval: "5x" is not a duration (use 500ms, 30s, 5m, 1h)"#))
    }
}
