import DNSLookup
import Foundation
import Yams

/// A blackbox_exporter `dns` module: the question, the rcodes that pass, and the expressions the
/// records of each section are held to.
package struct DNSModuleSettings: Sendable, Equatable {
    package var queryName = ""
    /// blackbox_exporter asks for ANY when no type is given.
    package var queryType = "ANY"
    package var queryClass = "IN"
    package var overTCP = false
    /// blackbox's `dns_over_tls`: over TCP in TLS, as the module's `tls_config` says (port 853
    /// unless the target names one).
    package var overTLS = false
    package var recursionDesired = true
    package var validRcodes = ["NOERROR"]
    package var answer = RecordChecks()
    package var authority = RecordChecks()
    package var additional = RecordChecks()

    package init() {}

    /// `validate_answer_rrs` and its siblings: regular expressions over each record's text
    /// (`name TTL CLASS TYPE RDATA`), as blackbox_exporter's `validRRs` applies them.
    package struct RecordChecks: Sendable, Equatable {
        package var failIfMatches: [String] = []
        package var failIfAllMatch: [String] = []
        package var failIfNotMatches: [String] = []
        package var failIfNoneMatches: [String] = []

        package init() {}

        /// Whether `records` pass; nil when they do, else which check failed.
        package func problem(_ records: [String]) -> String? {
            if records.isEmpty, !failIfNotMatches.isEmpty { return "no records, and fail_if_not_matches_regexp wants them" }
            if records.isEmpty, !failIfNoneMatches.isEmpty { return "no records, and fail_if_none_matches_regexp wants one" }
            var allMatch = true
            var anyMatch = false
            for record in records {
                if let pattern = failIfMatches.first(where: { RegexCache.matches($0, record) }) {
                    return "\(record) matches \(pattern) (fail_if_matches_regexp)"
                }
                if let pattern = failIfNotMatches.first(where: { !RegexCache.matches($0, record) }) {
                    return "\(record) does not match \(pattern) (fail_if_not_matches_regexp)"
                }
                for pattern in failIfAllMatch where !RegexCache.matches(pattern, record) { allMatch = false }
                for pattern in failIfNoneMatches where RegexCache.matches(pattern, record) { anyMatch = true }
            }
            // As blackbox_exporter reads it: the check fails when *not* every record matches.
            if !failIfAllMatch.isEmpty, !allMatch { return "not every record matches fail_if_all_match_regexp" }
            if !failIfNoneMatches.isEmpty, !anyMatch { return "no record matches fail_if_none_matches_regexp" }
            return nil
        }
    }

    /// What is wrong with `answer` by the module's rules (rcode, then each section), or nil.
    package func problem(_ answer: DNSAnswer) -> String? {
        guard validRcodes.contains(answer.rcodeName) else {
            return "the DNS server answered \(answer.rcodeName), not \(validRcodes.joined(separator: " or ")) (valid_rcodes)"
        }
        for (section, checks, records) in [
            ("answer", self.answer, answer.answer), ("authority", authority, answer.authority), ("additional", additional, answer.additional),
        ] {
            if let problem = checks.problem(records.map(\.text)) { return "\(section) section: \(problem)" }
        }
        return nil
    }
}

/// blackbox's `dns` prober, read from its file.
extension ConfigReader {
    static let blackboxDNSRcodes = ["NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN", "NOTIMP", "REFUSED", "YXDOMAIN", "YXRRSET", "NXRRSET", "NOTAUTH", "NOTZONE"]

    mutating func readBlackboxDNS(_ node: Node?, _ path: String, moduleNode: Node, into module: inout ProbeModule) {
        let known = [
            "dns_over_tls", "tls_config", "source_ip_address", "query_name", "query_type", "query_class", "transport_protocol", "preferred_ip_protocol",
            "ip_protocol_fallback",
            "recursion_desired",
            "valid_rcodes", "validate_answer_rrs", "validate_authority_rrs", "validate_additional_rrs",
        ]
        var settings = DNSModuleSettings()
        defer { module.dns = settings }
        guard let node else {
            problem(moduleNode, "\(path).query_name", "is missing: the name the module asks about")
            return
        }
        guard let fields = mapping(node, path, known: known) else { return }
        readBlackboxSourceAddress(fields, path, into: &module)
        if let name = fields["query_name"].flatMap({ string($0.value, "\(path).query_name") }), !name.isEmpty {
            settings.queryName = name
        } else {
            problem(fields["query_name"]?.value ?? node, "\(path).query_name", "is missing: the name the module asks about")
        }
        if let node = fields["query_type"]?.value, let text = string(node, "\(path).query_type"), !text.isEmpty {
            if DNSTarget.types.contains(text.uppercased()) || text.uppercased() == "ANY" {
                settings.queryType = text.uppercased()
            } else {
                problem(
                    node, "\(path).query_type",
                    "\"\(text)\" is not a record type Lookout asks for (use \((DNSTarget.types.sorted() + ["ANY"]).joined(separator: ", ")))")
            }
        }
        if let node = fields["query_class"]?.value, let text = string(node, "\(path).query_class"), !text.isEmpty {
            if ["IN", "CH"].contains(text.uppercased()) {
                settings.queryClass = text.uppercased()
            } else {
                problem(node, "\(path).query_class", "\"\(text)\" is not IN or CH")
            }
        }
        if let node = fields["transport_protocol"]?.value, let text = string(node, "\(path).transport_protocol"), !text.isEmpty {
            if ["udp", "tcp"].contains(text) {
                settings.overTCP = text == "tcp"
            } else {
                problem(node, "\(path).transport_protocol", "\"\(text)\" is not udp or tcp")
            }
        }
        if let node = fields["dns_over_tls"]?.value, let flag = bool(node, "\(path).dns_over_tls") {
            settings.overTLS = flag
            // blackbox fails every probe of such a module ("Expected transport protocol tcp for DoT").
            if flag && !settings.overTCP {
                problem(node, "\(path).dns_over_tls", "needs transport_protocol: tcp, as in blackbox_exporter (which fails every probe without it)")
            }
        }
        if let node = fields["tls_config"]?.value { readBlackboxTLSConfig(node, "\(path).tls_config", into: &module) }
        if let node = fields["preferred_ip_protocol"]?.value, let text = string(node, "\(path).preferred_ip_protocol"), !["ip4", "ip6"].contains(text) {
            problem(node, "\(path).preferred_ip_protocol", "\"\(text)\" is not ip4 or ip6")
        }
        if let node = fields["ip_protocol_fallback"]?.value { _ = bool(node, "\(path).ip_protocol_fallback") }
        if let node = fields["recursion_desired"]?.value, let flag = bool(node, "\(path).recursion_desired") { settings.recursionDesired = flag }
        if let node = fields["valid_rcodes"]?.value, let codes = strings(node, "\(path).valid_rcodes") {
            for code in codes where !ConfigReader.blackboxDNSRcodes.contains(code) {
                problem(node, "\(path).valid_rcodes", "\"\(code)\" is not an rcode (use \(ConfigReader.blackboxDNSRcodes.joined(separator: ", ")))")
            }
            settings.validRcodes = codes
        }
        for (key, section) in [
            ("validate_answer_rrs", \DNSModuleSettings.answer), ("validate_authority_rrs", \.authority), ("validate_additional_rrs", \.additional),
        ] {
            guard let node = fields[key]?.value else { continue }
            let place = "\(path).\(key)"
            guard
                let checks = mapping(
                    node, place, known: ["fail_if_matches_regexp", "fail_if_all_match_regexp", "fail_if_not_matches_regexp", "fail_if_none_matches_regexp"])
            else { continue }
            var read = DNSModuleSettings.RecordChecks()
            read.failIfMatches = regexes(checks["fail_if_matches_regexp"]?.value, "\(place).fail_if_matches_regexp")
            read.failIfAllMatch = regexes(checks["fail_if_all_match_regexp"]?.value, "\(place).fail_if_all_match_regexp")
            read.failIfNotMatches = regexes(checks["fail_if_not_matches_regexp"]?.value, "\(place).fail_if_not_matches_regexp")
            read.failIfNoneMatches = regexes(checks["fail_if_none_matches_regexp"]?.value, "\(place).fail_if_none_matches_regexp")
            settings[keyPath: section] = read
        }
    }
}
