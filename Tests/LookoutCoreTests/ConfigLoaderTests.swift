import LookoutCore
import Testing

@Suite("ConfigLoader")
struct ConfigLoaderTests {
    @Test func readsSourcesWithDefaultsApplied() throws {
        let config = try ConfigLoader.parse(
            """
            listen: 127.0.0.1:9999
            database: ":memory:"
            defaults: {interval: 45s, timeout: 3s}
            sources:
              - name: a
                url: http://127.0.0.1/a
              - name: b
                kind: json
                url: https://example.invalid/b
                interval: 1m30s
            """, file: "t.yml")
        #expect(config.listen == "127.0.0.1:9999")
        #expect(config.database == ":memory:")
        #expect(config.sources.map(\.name) == ["a", "b"])
        #expect(config.sources[0].interval == .seconds(45))
        #expect(config.sources[0].timeout == .seconds(3))
        #expect(config.sources[0].kind == .http)
        #expect(config.sources[1].kind == .json)
        #expect(config.sources[1].interval == .seconds(90))
    }

    @Test func reportsASyntaxErrorWithLineAndColumn() {
        let error = #expect(throws: ConfigError.self) {
            try ConfigLoader.parse("sources:\n  - name: a\n   url: b\n", file: "bad.yml")
        }
        #expect(error?.problems.count == 1)
        #expect(error?.problems.first?.line == 3)
        #expect(error?.problems.first?.description.hasPrefix("bad.yml:3:") == true)
    }

    @Test func reportsEveryProblemAtOnceWithPaths() {
        let error = #expect(throws: ConfigError.self) {
            try ConfigLoader.parse(
                """
                sources:
                  - name: ok
                    url: http://127.0.0.1/
                  - name: "bad name!"
                    url: http://127.0.0.1/
                  - name: c
                    url: not a url
                    interval: 5x
                  - name: ok
                    url: http://127.0.0.1/x
                  - name: d
                    kind: ftp
                    url: http://127.0.0.1/
                """, file: "many.yml")
        }
        let lines = error?.problems.map(\.description) ?? []
        #expect(lines.contains { $0.hasPrefix("many.yml:4:11: sources[1].name: \"bad name!\" must be") })
        #expect(lines.contains { $0.hasPrefix("many.yml:7:10: sources[2].url:") })
        #expect(lines.contains("many.yml:8:15: sources[2].interval: \"5x\" is not a duration (use 500ms, 30s, 5m, 1h)"))
        #expect(lines.contains { $0.hasPrefix("many.yml:9:11: sources[3].name: \"ok\" is already the name of sources[0]") })
        #expect(lines.contains { $0.hasPrefix("many.yml:12:11: sources[4].kind: \"ftp\" is not a kind") })
        #expect(lines.count == 5)
    }

    @Test func requiresSources() {
        let error = #expect(throws: ConfigError.self) { try ConfigLoader.parse("listen: 127.0.0.1:1\n", file: "x.yml") }
        #expect(error?.problems.first?.path == "sources")
    }
}

@Suite("ConfigValues")
struct ConfigValuesTests {
    @Test(arguments: [
        ("500ms", Duration.milliseconds(500)), ("30s", .seconds(30)), ("5m", .seconds(300)), ("1h", .seconds(3600)),
        ("7d", .seconds(7 * 86400)), ("1h30m", .seconds(5400)), ("1.5s", .milliseconds(1500)),
    ])
    func parsesDurations(text: String, expected: Duration) {
        #expect(ConfigValues.duration(text) == expected)
    }

    @Test(arguments: ["", "5x", "s", "10", "1h-", "ms5"])
    func rejectsWhatIsNotADuration(text: String) {
        #expect(ConfigValues.duration(text) == nil)
    }

    @Test func formatsDurations() {
        #expect(ConfigValues.format(.milliseconds(500)) == "500ms")
        #expect(ConfigValues.format(.seconds(90)) == "1m30s")
        #expect(ConfigValues.format(.seconds(3600)) == "1h")
    }
}
