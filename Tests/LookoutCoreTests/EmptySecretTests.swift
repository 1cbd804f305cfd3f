import Foundation
import LookoutAlerting
import LookoutCore
import Testing

/// An empty secret is a config error wherever it comes from, and a file that does not hold a
/// secret's expected form is named, not shown.
@Suite("empty and misplaced secrets")
struct EmptySecretTests {
    func problems(_ text: String, environment: [String: String] = [:], directory: String = "/tmp") -> [String] {
        do {
            _ = try ConfigLoader.parse(text, file: "t.yml", directory: directory, environment: environment, hooks: NotificationProviders.hookKinds)
            return []
        } catch let error as ConfigError {
            return error.problems.map { "\($0.path): \($0.message)" }
        } catch {
            return ["\(error)"]
        }
    }

    let source = "sources: [{name: a, url: \"http://127.0.0.1:1/\"}]\n"

    /// A new folder holding `name` with `contents`; the caller removes it.
    func folder(with name: String, _ contents: String) throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("secrets-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try contents.write(to: directory.appendingPathComponent(name), atomically: true, encoding: .utf8)
        return directory
    }

    @Test(arguments: ["", " ", "\n"])
    func anEmptyAdminTokenFromTheEnvironmentIsRefused(_ value: String) {
        let found = problems(source + "admin_token: \"${LOOKOUT_TOKEN}\"\n", environment: ["LOOKOUT_TOKEN": value])
        #expect(found == ["admin_token: ${LOOKOUT_TOKEN} is empty: set the environment variable to the secret, or leave admin_token out"])
    }

    @Test func anEmptySecretFileIsRefused() throws {
        let directory = try folder(with: "token", "\n")
        defer { try? FileManager.default.removeItem(at: directory) }
        let found = problems(source + "admin_token_file: token\n", directory: directory.path)
        #expect(found.count == 1 && found[0].hasPrefix("admin_token_file: ") && found[0].hasSuffix("is empty"), "\(found)")
    }

    @Test func aHookURLFileIsNeverEchoed() throws {
        let directory = try folder(with: "shadow", "root:$6$very-secret-hash:19000:0:99999:7:::\n")
        defer { try? FileManager.default.removeItem(at: directory) }
        let found = problems(source + "alerts: {hooks: [{name: chat, type: slack, url_file: shadow}]}\n", directory: directory.path)
        #expect(found.count == 1)
        #expect(found.allSatisfy { !$0.contains("very-secret") && !$0.contains("root:") }, "\(found)")
        let fromEnvironment = problems(
            source + "alerts: {hooks: [{name: chat, type: slack, url: \"${SLACK_URL}\"}]}\n",
            environment: ["SLACK_URL": "https//hooks.slack.test/T000/B000/very-secret"])
        #expect(fromEnvironment.count == 1)
        #expect(fromEnvironment.allSatisfy { !$0.contains("very-secret") }, "\(fromEnvironment)")
    }
}
