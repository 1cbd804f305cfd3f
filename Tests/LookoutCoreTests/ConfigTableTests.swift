import Foundation
import LookoutAlerting
import LookoutCore
import ResilientHTTP
import Testing

/// Broken config files, each with the exact problem line expected.
@Suite("config problems")
struct ConfigTableTests {
    static let cases: [(String, String)] = [
        (
            "sources:\n  - name: a\n    url: http://x/\n    intervall: 30s\n",
            #"t.yml:4:5: sources[0].intervall: unknown key "intervall"; did you mean "interval"?"#
        ),
        (
            "listn: 127.0.0.1:1\nsources:\n  - {name: a, url: \"http://x/\"}\n",
            #"t.yml:1:1: listn: unknown key "listn"; did you mean "listen"?"#
        ),
        (
            "sources:\n  - name: a\n    url: http://x/\n    interval: 5x\n",
            #"t.yml:4:15: sources[0].interval: "5x" is not a duration (use 500ms, 30s, 5m, 1h)"#
        ),
        (
            "sources:\n  - name: a\n    url: http://x/\n    rate_limit: {rate: fast}\n",
            #"t.yml:4:24: sources[0].rate_limit.rate: "fast" is not a rate (use 5/s, 300/m, 10/h)"#
        ),
        (
            "sources:\n  - name: a\n    url: http://x/\n    retry_budget: {min_retries_per_minute: 9223372036854775807}\n",
            #"t.yml:4:44: sources[0].retry_budget.min_retries_per_minute: "9223372036854775807" must be a whole number from 0 to 1000000"#
        ),
        (
            "sources:\n  - name: a\n    kind: download\n    url: http://x/\n    max_bytes: lots\n",
            #"t.yml:5:16: sources[0].max_bytes: "lots" is not a size (use 512KiB, 100MiB, 8GiB)"#
        ),
        (
            "sources:\n  - name: a\n    url: \"htp:/nope\"\n",
            #"t.yml:3:10: sources[0].url: "htp:/nope" is not a URL (use http://host/path or https://host/path)"#
        ),
        (
            // A scheme that names no host is told by its scheme, not as no URL at all.
            "sources:\n  - name: a\n    url: \"file:///etc/passwd\"\n",
            #"t.yml:3:10: sources[0].url: "file:///etc/passwd" uses file://; only http:// and https:// can be probed"#
        ),
        (
            "sources:\n  - name: a\n    url: \"http:///x\"\n",
            #"t.yml:3:10: sources[0].url: "http:///x" is not a URL (use http://host/path or https://host/path)"#
        ),
        (
            "sources:\n  - name: a\n    url: http://x/\n  - name: a\n    url: http://y/\n",
            #"t.yml:4:11: sources[1].name: "a" is already the name of sources[0]"#
        ),
        (
            "sources:\n  - name: a\n    url: http://x/\n    fallback: b\n",
            #"t.yml:4:15: sources[0].fallback: "b" is not the name of a source"#
        ),
        (
            "sources:\n  - {name: a, url: \"http://x/\", depends_on: [b]}\n",
            #"t.yml:2:46: sources[0].depends_on: "b" is not the name of a source"#
        ),
        (
            "sources:\n  - {name: a, url: \"http://x/\", depends_on: a}\n",
            "t.yml:2:45: sources[0].depends_on: a source cannot depend on itself"
        ),
        (
            "sources:\n  - {name: a, url: \"http://x/\", depends_on: [b]}\n  - {name: b, url: \"http://y/\", depends_on: [c]}\n  - {name: c, url: \"http://z/\", depends_on: [a]}\n",
            "t.yml:4:46: sources[2].depends_on: closes a cycle: a → b → c → a"
        ),
        (
            "sources:\n  - {name: a, url: \"http://x/\", renamed_from: a}\n",
            "t.yml:2:47: sources[0].renamed_from: a source cannot be renamed from its own name"
        ),
        (
            "sources:\n  - {name: a, url: \"http://x/\", renamed_from: [old]}\n  - {name: b, url: \"http://y/\", renamed_from: [old]}\n",
            #"t.yml:3:48: sources[1].renamed_from: "old" is already claimed by sources[0].renamed_from"#
        ),
        (
            "sources:\n  - {name: a, url: \"http://x/\", renamed_from: [b]}\n  - {name: b, url: \"http://y/\"}\n",
            #"t.yml:2:48: sources[0].renamed_from: "b" is the name of sources[1]"#
        ),
        (
            "sources:\n  - name: a\n    url: http://x/\n    expect: {json_path: {path: x, min: 1}}\n",
            "t.yml:4:5: sources[0].expect.json_path: only applies to kind: json"
        ),
        (
            "sources:\n  - name: a\n    kind: rss\n    url: http://x/\n    sha256: abc\n",
            "t.yml:5:5: sources[0].sha256: only applies to kind: download"
        ),
        (
            "sources:\n  - name: a\n    kind: json\n    url: http://x/\n    expect: {min_items: 2}\n",
            "t.yml:5:5: sources[0].expect.min_items: only applies to kind: rss"
        ),
        (
            "sources:\n  - name: a\n    kind: ftp\n    url: http://x/\n",
            #"t.yml:3:11: sources[0].kind: "ftp" is not a kind (use http, json, rss, download, tcp, tls, dns, icmp, grpc, push or flow)"#
        ),
        (
            "sources:\n  - name: a\n    kind: tcp\n    url: http://x/\n",
            #"t.yml:4:10: sources[0].url: "http://x/" is not a tcp:// address (use tcp://host:port)"#
        ),
        (
            "sources:\n  - name: a\n    kind: tls\n    url: tls://x\n",
            #"t.yml:4:10: sources[0].url: "tls://x" names no port (use tls://host:port)"#
        ),
        (
            "sources:\n  - name: a\n    kind: tls\n    url: smtp://x\n",
            #"t.yml:4:10: sources[0].url: "smtp://x" names no port (use smtp://host:port)"#
        ),
        (
            "sources:\n  - name: a\n    kind: tls\n    url: https://x:443\n",
            #"t.yml:4:10: sources[0].url: "https://x:443" is not a tls:// address (use tls://host:port, or smtp://, imap://, pop3:// or postgres://host:port for STARTTLS)"#
        ),
        (
            "sources:\n  - name: a\n    kind: tcp\n    url: tcp://x:5432/db\n",
            #"t.yml:4:10: sources[0].url: "tcp://x:5432/db" has more than a host and a port"#
        ),
        (
            "sources:\n  - name: a\n    url: https://x/\n    ca_file: /nonexistent/ca.pem\n",
            "t.yml:4:14: sources[0].ca_file: cannot read /nonexistent/ca.pem"
        ),
        (
            "sources:\n  - name: a\n    kind: download\n    url: http://x/\n    sha256: abc\n",
            "t.yml:5:13: sources[0].sha256: must be 64 hex digits"
        ),
        (
            "sources:\n  - name: a\n    url: http://x/\n    auth: {oauth2: {token_url: \"http://t/\", client_id: c, client_secret: hunter2}}\n",
            "t.yml:4:74: sources[0].auth.oauth2.client_secret: write secrets as a ${ENV} reference or in client_secret_file, not in the config"
        ),
        (
            "sources:\n  - name: a\n    url: http://x/\n    headers: {X-Key: \"${LOOKOUT_TEST_UNSET}\"}\n",
            "t.yml:4:14: sources[0].headers.X-Key: the environment variable LOOKOUT_TEST_UNSET is not set"
        ),
        (
            "sources:\n  - name: a\n    url: http://x/\n    forward_headers_on_redirect: sometimes\n",
            #"t.yml:4:34: sources[0].forward_headers_on_redirect: "sometimes" must be true or false"#
        ),
        (
            "sources:\n  - {name: a, url: \"http://127.0.0.1:99999/\"}\n",
            #"t.yml:2:20: sources[0].url: "http://127.0.0.1:99999/" names port 99999; a port is 1 to 65535"#
        ),
        (
            "sources:\n  - {name: a, url: \"http://127.0.0.1/a b\"}\n",
            #"t.yml:2:20: sources[0].url: "http://127.0.0.1/a b" holds a space or a control character (percent-encode it: a space is %20)"#
        ),
        (
            "sources:\n  - {name: a, url: \"http://127.0.0.1/\\0x\"}\n",
            #"t.yml:2:20: sources[0].url: "http://127.0.0.1/\u0000x" holds a space or a control character (percent-encode it: a space is %20)"#
        ),
        (
            "sources:\n  - {name: a, url: \"http://x/\", labels: {x-y: z}}\n",
            "t.yml:2:41: sources[0].labels.x-y: is not a label name (letters, digits and _, not starting with a digit or __)"
        ),
        (
            "database: /dev/null\nsources:\n  - {name: a, url: \"http://x/\"}\n",
            #"t.yml:1:11: database: "/dev/null" is not a regular file (a device or socket); name a file for the SQLite database"#
        ),
        (
            "database: /\nsources:\n  - {name: a, url: \"http://x/\"}\n",
            #"t.yml:1:11: database: "/" is a directory; name a file in it (e.g. //lookout.sqlite)"#
        ),
        (
            "shard: {index: 2, count: 2}\nsources:\n  - {name: a, url: \"http://x/\"}\n",
            "t.yml:1:16: shard.index: must be below shard.count (2)"
        ),
        (
            "probe_modules:\n  m: {kind: http, allow: [\"(\"]}\nsources:\n  - {name: a, url: \"http://x/\"}\n",
            #"t.yml:2:27: probe_modules.m.allow[0]: "(" is not a regular expression in Go's syntax (RE2): missing ) at offset 0; blackbox_exporter refuses it too"#
        ),
        (
            "rollup_retention: {minute: 6h}\nsources:\n  - {name: a, url: \"http://x/\"}\n",
            "t.yml:1:28: rollup_retention.minute: must be at least 25h: the status page's 24-hour response-time chart reads minute rows"
        ),
        (
            "rollup_retention: {hour: 1d, minute: 2d}\nsources:\n  - {name: a, url: \"http://x/\"}\n",
            "t.yml:1:26: rollup_retention.hour: must be at least rollup_retention.minute (2d)"
        ),
        (
            "rollup_retention: {weeks: 2}\nsources:\n  - {name: a, url: \"http://x/\"}\n",
            #"t.yml:1:20: rollup_retention.weeks: unknown key "weeks""#
        ),
        (
            "sources:\n  - {name: a, url: \"http://x/\", group: \"\"}\n",
            "t.yml:2:40: sources[0].group: must be 1 to 64 characters, without control characters"
        ),
        (
            "status_page: {public: maybe}\nsources:\n  - {name: a, url: \"http://x/\"}\n",
            #"t.yml:1:23: status_page.public: "maybe" must be true or false"#
        ),
        (
            "announcements:\n  - {title: Down, state: identified, at: \"2026-11-24T10:00:00Z\"}\nsources:\n  - {name: a, url: \"http://x/\"}\n",
            "t.yml:2:5: announcements[0].message: is missing"
        ),
        (
            "announcements:\n  - {title: Down, message: m, state: fixed, at: \"2026-11-24T10:00:00Z\"}\nsources:\n  - {name: a, url: \"http://x/\"}\n",
            #"t.yml:2:38: announcements[0].state: "fixed" is not a state (use investigating, identified, monitoring or resolved)"#
        ),
        (
            "announcements:\n  - {title: Down, message: m, state: identified, at: \"2026-11-24T10:00:00Z\", sources: [b]}\nsources:\n  - {name: a, url: \"http://x/\"}\n",
            #"t.yml:2:87: announcements[0].sources: no source is named "b""#
        ),
        (
            "alerts:\n  hooks:\n    - {name: h, type: pager, url: \"http://x/\"}\nsources:\n  - {name: a, url: \"http://x/\"}\n",
            #"t.yml:3:23: alerts.hooks[0].type: "pager" is not a hook type (use webhook, alertmanager, slack, teams, pagerduty, discord, ntfy, email, telegram, mattermost, googlechat, matrix, pushover, gotify, incidentio or splunk_oncall)"#
        ),
        (
            "alerts:\n  hooks:\n    - name: h\n      url: \"http://x/\"\n      template: \"{{#alerts}}{{rule}}\"\nsources:\n  - {name: a, url: \"http://x/\"}\n",
            "t.yml:5:17: alerts.hooks[0].template: the template does not compile: a section is not closed ({{#x}} without {{/x}}) at template line 1, column 20"
        ),
        (
            "alerts:\n  hooks:\n    - {name: h, type: slack, url: \"http://x/\", template: \"{{x}}\"}\nsources:\n  - {name: a, url: \"http://x/\"}\n",
            "t.yml:3:48: alerts.hooks[0].template: only applies to type: webhook"
        ),
        (
            "alerts:\n  require_https: true\n  hooks:\n    - {name: ok, type: slack, url: \"https://hooks.example/x\"}\n    - {name: h, type: slack, url: \"http://hooks.example/x\"}\nsources:\n  - {name: a, url: \"http://x/\"}\n",
            "t.yml:5:35: alerts.hooks[1].url: must be https:// (alerts.require_https is set): notifications would travel in the clear"
        ),
        (
            "alerts:\n  hooks:\n    - {name: h, type: email, url: \"http://mail.example/\", from: a@example.test, to: [b@example.test]}\nsources:\n  - {name: a, url: \"http://x/\"}\n",
            #"t.yml:3:35: alerts.hooks[0].url: "http://mail.example/" is not an SMTP URL (use smtp://host:587 with STARTTLS, or smtps://host:465)"#
        ),
        (
            "alerts:\n  hooks:\n    - {name: h, type: email, url: \"smtp://mail.example:587\", from: a@example.test}\nsources:\n  - {name: a, url: \"http://x/\"}\n",
            "t.yml:3:7: alerts.hooks[0].to: is missing: the recipients"
        ),
        (
            "alerts:\n  hooks:\n    - {name: h, type: email, url: \"smtp://mail.example:587\", from: a@example.test, to: [\"b at example\"]}\nsources:\n  - {name: a, url: \"http://x/\"}\n",
            #"t.yml:3:88: alerts.hooks[0].to: "b at example" is not a mail address"#
        ),
        (
            "alerts:\n  hooks:\n    - {name: h, type: pagerduty}\nsources:\n  - {name: a, url: \"http://x/\"}\n",
            "t.yml:3:7: alerts.hooks[0].routing_key_file: is missing: a pagerduty hook needs the integration's routing key"
        ),
        (
            "alerts:\n  hooks:\n    - {name: h, type: slack, url: \"http://x/\", routing_key: \"${X}\"}\nsources:\n  - {name: a, url: \"http://x/\"}\n",
            "t.yml:3:48: alerts.hooks[0].routing_key: only applies to type: pagerduty"
        ),
        (
            "alerts:\n  hooks:\n    - {name: h, type: slack, url: \"${LOOKOUT_TEST_UNSET}\"}\nsources:\n  - {name: a, url: \"http://x/\"}\n",
            "t.yml:3:35: alerts.hooks[0].url: the environment variable LOOKOUT_TEST_UNSET is not set"
        ),
        (
            "defaults:\n  retry:\n    server_error: {backoff: random}\nsources:\n  - {name: a, url: \"http://x/\"}\n",
            #"t.yml:3:29: defaults.retry.server_error.backoff: "random" is not a backoff (use exponential, linear or constant)"#
        ),
        (
            "defaults:\n  circuit_breaker: {jitter: 2}\nsources:\n  - {name: a, url: \"http://x/\"}\n",
            #"t.yml:2:29: defaults.circuit_breaker.jitter: "2" must be a number from 0 to 1"#
        ),
        (
            "sources:\n  - name: a\n    url: http://x/\n    require_https: maybe\n",
            #"t.yml:4:20: sources[0].require_https: "maybe" must be true or false"#
        ),
        ("sources: []\n", "t.yml:1:10: sources: must list at least one source"),
    ]

    @Test(arguments: cases)
    func reportsTheExactProblem(text: String, expected: String) {
        do {
            _ = try ConfigLoader.parse(text, file: "t.yml", environment: [:], hooks: NotificationProviders.hookKinds)
            Issue.record("no problem reported; expected \(expected)")
        } catch let error as ConfigError {
            #expect(error.problems.map(\.description).contains(expected), "got: \(error.description)")
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    /// One problem per cause: a source with a bad display_name keeps its name, so the
    /// maintenance window, group and announcement naming it are no errors of their own.
    @Test func aSourcesOwnProblemDoesNotCascade() {
        let yaml = """
            sources:
              - {name: evil-1, url: "http://127.0.0.1:1/", display_name: "", depends_on: [ok-1]}
              - {name: ok-1, url: "http://127.0.0.1:1/", fallback: evil-1}
            maintenance:
              - {name: m, sources: [evil-1], start: "2026-11-24T10:00:00Z", end: "2026-11-24T11:00:00Z"}
            announcements:
              - {title: Down, message: m, state: identified, at: "2026-11-24T10:00:00Z", sources: [evil-1]}
            """
        let error = #expect(throws: ConfigError.self) { try ConfigLoader.parse(yaml, file: "t.yml", hooks: NotificationProviders.hookKinds) }
        #expect(error?.problems.map(\.path) == ["sources[0].display_name"], "\(error?.description ?? "")")
    }

    @Test func nestedDefaultsAreOverriddenKeyByKey() throws {
        let config = try ConfigLoader.parse(
            """
            defaults:
              interval: 45s
              retry:
                server_error: {max_attempts: 5, base: 3s}
              circuit_breaker: {failure_threshold: 7, open_timeout: 2m}
              rate_limit: {rate: 300/m, burst: 4}
            sources:
              - name: a
                url: http://127.0.0.1/a
                retry:
                  server_error: {max_attempts: 2}
                circuit_breaker: {open_timeout: 30s}
              - name: b
                url: http://127.0.0.1/b
                interval: 10s
            """, file: "t.yml", environment: [:], hooks: NotificationProviders.hookKinds)
        let a = config.sources[0].policy
        #expect(a.retry.rules[.serverError]?.maxAttempts == 2)
        #expect(a.retry.rules[.serverError]?.base == .seconds(3))
        #expect(a.retry.rules[.serverError]?.max == .seconds(30))
        #expect(a.retry.rules[.transient] == RetryPolicy.standard.rules[.transient])
        #expect(a.breaker.failureThreshold == 7)
        #expect(a.breaker.openTimeout == .seconds(30))
        #expect(a.rateLimit == RateLimitSettings(perSecond: 5, burst: 4))
        #expect(config.sources[0].interval == .seconds(45))
        #expect(config.sources[1].interval == .seconds(10))
        #expect(config.sources[1].policy.breaker.openTimeout == .seconds(120))
        #expect(config.sources[1].policy.retry.rules[.serverError]?.maxAttempts == 5)
    }

    @Test func readsSecretsFromFilesAndTheEnvironment() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cfg-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try "s3cret\n".write(to: directory.appendingPathComponent("secret.txt"), atomically: true, encoding: .utf8)
        try "admin-token\n".write(to: directory.appendingPathComponent("admin.token"), atomically: true, encoding: .utf8)
        try "bearer\n".write(to: directory.appendingPathComponent("token.txt"), atomically: true, encoding: .utf8)
        let config = try ConfigLoader.parse(
            """
            admin_token_file: admin.token
            sources:
              - name: a
                url: http://127.0.0.1/a
                headers: {X-Api-Key: "key-${API_KEY}"}
                auth:
                  oauth2: {token_url: "http://127.0.0.1/token", client_id: lookout, client_secret_file: secret.txt, scopes: [read]}
              - name: b
                url: http://127.0.0.1/b
                auth: {bearer_token_file: token.txt}
            """, file: "t.yml", directory: directory.path, environment: ["API_KEY": "abc"], hooks: NotificationProviders.hookKinds)
        #expect(config.adminToken == "admin-token")
        #expect(config.sources[0].headers == [HeaderField("X-Api-Key", "key-abc")])
        #expect(!config.sources[0].forwardHeadersOnRedirect)
        #expect(
            config.sources[0].policy.auth
                == .oauth2(
                    OAuth2ClientCredentials(
                        tokenURL: "http://127.0.0.1/token", clientID: "lookout", clientSecret: "s3cret", scopes: ["read"])))
        #expect(config.sources[1].policy.auth == .bearerTokenFile(path: directory.appendingPathComponent("token.txt").path))
    }

    @Test func headersGoToAnotherOriginOnlyWhenASourceSaysSo() throws {
        let config = try ConfigLoader.parse(
            """
            defaults: {forward_headers_on_redirect: true}
            sources:
              - {name: a, url: "http://127.0.0.1/a", headers: {X-Api-Key: k}}
              - {name: b, url: "http://127.0.0.1/b", headers: {X-Api-Key: k}, forward_headers_on_redirect: false}
            """, file: "t.yml", hooks: NotificationProviders.hookKinds)
        #expect(config.sources.map(\.forwardHeadersOnRedirect) == [true, false])
    }

    @Test func shardsSplitSourcesWithoutOverlap() {
        let names = (0..<1000).map { "source-\($0)" }
        let shards = (0..<3).map { Shard(index: $0, count: 3) }
        for name in names {
            #expect(shards.filter { $0.owns(name) }.count == 1)
        }
        let sizes = shards.map { shard in names.filter { shard.owns($0) }.count }
        #expect(sizes.allSatisfy { $0 > 250 })
        #expect(Shard.parse("1/2") == Shard(index: 1, count: 2))
        #expect(Shard.parse("2/2") == nil)
    }
}
