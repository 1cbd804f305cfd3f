import Foundation
import Yams

/// A blackbox_exporter `grpc` module: which service's health to ask for, and whether over TLS.
package struct GRPCModuleSettings: Sendable, Equatable {
    /// "" asks about the server as a whole.
    package var service = ""
    package var tls = false

    package init() {}
}

/// blackbox's `grpc` prober, read from its file.
extension ConfigReader {
    mutating func readBlackboxGRPC(_ node: Node?, _ path: String, into module: inout ProbeModule) {
        var settings = GRPCModuleSettings()
        defer { module.grpc = settings }
        guard let node else { return }
        guard let fields = mapping(node, path, known: ["service", "tls", "tls_config", "preferred_ip_protocol", "ip_protocol_fallback"]) else { return }
        if let node = fields["service"]?.value, let text = string(node, "\(path).service") { settings.service = text }
        if let node = fields["tls"]?.value, let flag = bool(node, "\(path).tls") { settings.tls = flag }
        if let node = fields["tls_config"]?.value { readBlackboxTLSConfig(node, "\(path).tls_config", into: &module) }
        if let node = fields["preferred_ip_protocol"]?.value, let text = string(node, "\(path).preferred_ip_protocol"), !["ip4", "ip6"].contains(text) {
            problem(node, "\(path).preferred_ip_protocol", "\"\(text)\" is not ip4 or ip6")
        }
        if let node = fields["ip_protocol_fallback"]?.value { _ = bool(node, "\(path).ip_protocol_fallback") }
    }
}
