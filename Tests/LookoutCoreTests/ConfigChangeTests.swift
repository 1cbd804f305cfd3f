import LookoutCore
import Testing

/// What a reload changed, by name (issue "Operator polish II": an audit trail; "Nothing told is
/// lost…", row 15: a reload that changed `listen` or `database` said it succeeded and ignored them).
@Suite("config change")
struct ConfigChangeTests {
    func config(_ text: String) throws -> LookoutConfig { try ConfigLoader.parse(text, file: "t.yml") }

    @Test func namesWhatWasAddedRemovedAndChangedAndWhatWaitsForARestart() throws {
        let before = try config("""
            listen: 127.0.0.1:9464
            sources:
              - {name: kept, url: "http://127.0.0.1/k"}
              - {name: edited, url: "http://127.0.0.1/e"}
              - {name: gone, url: "http://127.0.0.1/g"}
            alerts:
              hooks: [{name: chat, type: webhook, url: "http://127.0.0.1/hook"}]
            """)
        let after = try config("""
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
        #expect(change.metadata == [
            "sources_added": "new", "sources_removed": "gone", "sources_changed": "edited", "hooks_added": "pager", "hooks_changed": "chat",
        ])
        #expect(ConfigChange(from: after, to: after) == ConfigChange(from: before, to: before))
        #expect(ConfigChange(from: after, to: after).metadata.isEmpty)
    }
}
