import ArgumentParser
import Foundation
import LookoutCore
import LookoutService
import ResilientHTTP

/// How a client command finds the running Lookout: `--url` and `--token` when given, else what
/// the config says (`--config`, or `LOOKOUT_CONFIG`): its `listen` address and admin token
/// (`admin_token_file` included), else `http://127.0.0.1:9464` and `LOOKOUT_ADMIN_TOKEN`.
struct ServerConnection: ParsableArguments {
    @Option(help: "The running Lookout (default: the config's listen address, else http://127.0.0.1:9464).")
    var url: String?

    @Option(help: "The config file the server runs with, to find its address and admin token (default: $LOOKOUT_CONFIG).")
    var config: String?

    @Option(help: "The admin token (default: $LOOKOUT_ADMIN_TOKEN, else the config's).")
    var token: String?

    /// The config named by `--config` or `LOOKOUT_CONFIG`; exits 2 when it cannot be read.
    func loadedConfig(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> LookoutConfig? {
        guard let path = config ?? environment["LOOKOUT_CONFIG"].flatMap({ $0.isEmpty ? nil : $0 }) else { return nil }
        do {
            return try LookoutApp.loadConfig(path: path)
        } catch {
            printError("lookout: \(error)")
            throw ExitCode(2)
        }
    }

    /// The base URL, without a trailing slash.
    func base(_ loaded: LookoutConfig?) -> String {
        if let url { return url.hasSuffix("/") ? String(url.dropLast()) : url }
        guard let listen = loaded?.listen else { return "http://127.0.0.1:9464" }
        return "http://" + ServerConnection.reachable(listen)
    }

    /// The admin token: `--token`, `LOOKOUT_ADMIN_TOKEN`, then the config's.
    func adminToken(_ loaded: LookoutConfig?, environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        token ?? environment["LOOKOUT_ADMIN_TOKEN"].flatMap { $0.isEmpty ? nil : $0 } ?? loaded?.adminToken
    }

    /// A listen address a client can connect to: a wildcard host (`0.0.0.0`, `[::]`, none)
    /// becomes loopback.
    static func reachable(_ listen: String) -> String {
        guard let colon = listen.lastIndex(of: ":") else { return listen }
        let host = listen[..<colon]
        let port = listen[listen.index(after: colon)...]
        switch host {
        case "", "0.0.0.0", "*": return "127.0.0.1:\(port)"
        case "[::]", "::": return "[::1]:\(port)"
        default: return listen
        }
    }
}
