import ArgumentParser
import Foundation
import LookoutCore
import ResilientHTTP

/// `lookout silence add|list|expire`: the silences API of a running Lookout, from a shell.
struct SilenceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "silence",
        abstract: "Adds, lists and expires silences on a running Lookout.",
        discussion: "Adding and expiring need the admin token: --token, LOOKOUT_ADMIN_TOKEN in the environment, or the config's (--config or LOOKOUT_CONFIG).",
        subcommands: [Add.self, List.self, Expire.self])

    struct Connection: ParsableArguments {
        @OptionGroup var server: ServerConnection

        /// Sends the request; prints the API's error and exits 1 (2 when Lookout cannot be reached).
        func call(_ method: String, _ path: String, body: [String: Any]? = nil) async throws -> [String: Any] {
            let loaded = try server.loadedConfig()
            let base = server.base(loaded)
            var headers: [(name: String, value: String)] = [("Accept", "application/json")]
            if let token = server.adminToken(loaded) { headers.append(("Authorization", "Bearer \(token)")) }
            var bytes: [UInt8]?
            if let body {
                bytes = Array(try JSONSerialization.data(withJSONObject: body, options: [.sortedKeys]))
                headers.append(("Content-Type", "application/json"))
            }
            let result = await CurlTransport.lookout().perform(
                TransferRequest(url: base + path, method: method, headers: headers, body: bytes, timeout: .seconds(10)))
            guard let status = result.httpStatus else {
                printError("lookout: cannot reach \(base): \(result.curlMessage)")
                throw ExitCode(2)
            }
            let document = (try? JSONSerialization.jsonObject(with: Data(result.body))) as? [String: Any] ?? [:]
            guard (200..<300).contains(status) else {
                printError("lookout: \(document["message"] as? String ?? "Lookout answered \(status)")")
                throw ExitCode(1)
            }
            return document
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add",
            abstract: "Silences the alerts matching every --match until --duration from now.",
            discussion: "Example: lookout silence add --match source=acme --duration 2h --comment 'vendor maintenance'")

        @OptionGroup var connection: Connection

        @Option(name: .customLong("match"), help: "LABEL=VALUE (alertname, severity, source or a rule label); repeat for more.")
        var matchers: [String] = []

        @Option(help: "How long, e.g. 30m or 2h.")
        var duration = "1h"

        @Option(help: "Why, for the people who see it on the page.")
        var comment = ""

        func run() async throws {
            var labels: [String: String] = [:]
            for matcher in matchers {
                let parts = matcher.split(separator: "=", maxSplits: 1).map(String.init)
                guard parts.count == 2, !parts[0].isEmpty else { throw ValidationError("--match \(matcher): expected LABEL=VALUE") }
                labels[parts[0]] = parts[1]
            }
            guard !labels.isEmpty else { throw ValidationError("give at least one --match LABEL=VALUE") }
            let length: Duration
            do { length = try ConfigValues.parseDuration(duration) } catch { throw ValidationError("--duration \(duration): \(error)") }
            let ends = Timestamp.nowMs() + length.totalMilliseconds
            let answer = try await connection.call(
                "POST", "/api/v1/silences", body: ["matchers": labels, "ends_at": Timestamp.rfc3339(ends), "comment": comment])
            printText("silence \(answer["id"] as? Int ?? 0) until \(answer["ends_at"] as? String ?? "?")")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "Lists the silences in force or still to come.")

        @OptionGroup var connection: Connection

        func run() async throws {
            let answer = try await connection.call("GET", "/api/v1/silences")
            let silences = answer["silences"] as? [[String: Any]] ?? []
            if silences.isEmpty { print("no silences") }
            for silence in silences {
                let matchers = (silence["matchers"] as? [String: String] ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(
                    separator: ",")
                let comment = silence["comment"] as? String ?? ""
                printText("\(silence["id"] as? Int ?? 0)  \(matchers)  until \(silence["ends_at"] as? String ?? "?")\(comment.isEmpty ? "" : "  \(comment)")")
            }
        }
    }

    struct Expire: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "expire", abstract: "Ends a silence now.")

        @OptionGroup var connection: Connection

        @Argument(help: "The silence's number (see `lookout silence list`).")
        var id: Int64

        func run() async throws {
            _ = try await connection.call("DELETE", "/api/v1/silences/\(id)")
            print("silence \(id) expired")
        }
    }
}
