import Foundation
import Yams

/// A blackbox_exporter `icmp` module: which family first, and the echo request's shape.
package struct ICMPModuleSettings: Sendable, Equatable {
    /// blackbox_exporter resolves IPv6 first unless told `preferred_ip_protocol: ip4`.
    package var preferIPv6 = true
    package var payloadSize = 0
    package var ttl: Int?
    package var dontFragment = false

    package init() {}
}

/// blackbox's `icmp` prober, read from its file.
extension ConfigReader {
    mutating func readBlackboxICMP(_ node: Node?, _ path: String, into module: inout ProbeModule) {
        var settings = ICMPModuleSettings()
        defer { module.icmp = settings }
        guard let node else { return }
        guard
            let fields = mapping(
                node, path, known: ["preferred_ip_protocol", "ip_protocol_fallback", "payload_size", "dont_fragment", "ttl", "source_ip_address"])
        else { return }
        readBlackboxSourceAddress(fields, path, into: &module)
        if let node = fields["preferred_ip_protocol"]?.value, let text = string(node, "\(path).preferred_ip_protocol") {
            if ["ip4", "ip6"].contains(text) {
                settings.preferIPv6 = text == "ip6"
            } else {
                problem(node, "\(path).preferred_ip_protocol", "\"\(text)\" is not ip4 or ip6")
            }
        }
        if let node = fields["ip_protocol_fallback"]?.value { _ = bool(node, "\(path).ip_protocol_fallback") }
        if let node = fields["payload_size"]?.value, let size = int(node, "\(path).payload_size", range: 0...65_000) { settings.payloadSize = size }
        if let node = fields["ttl"]?.value, let ttl = int(node, "\(path).ttl", range: 0...255) { settings.ttl = ttl == 0 ? nil : ttl }
        if let node = fields["dont_fragment"]?.value, let flag = bool(node, "\(path).dont_fragment") { settings.dontFragment = flag }
    }
}
