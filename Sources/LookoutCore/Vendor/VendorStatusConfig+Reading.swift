import Yams

/// `vendor_status: {url, components, format, interval, respect_maintenance}`.
extension VendorStatusConfig: ConfigReadable {
    enum Key: String, ConfigKey {
        case url, components, format, interval
        case respectMaintenance = "respect_maintenance"
    }

    mutating func read(_ fields: ConfigSection<Key>, _ reader: inout ConfigReader) {
        if let value = reader.url(fields[.url]) { url = value } else if !fields.has(.url) { reader.problem(fields.node, fields.path, "needs a url") }
        if let entry = fields[.components], let names = reader.strings(entry) {
            if names.count > 100 { reader.problem(entry, "at most 100 components (\(names.count) listed)") }
            components = Array(names.prefix(100))
        }
        if let entry = fields[.format], let word = reader.string(entry) {
            switch word {
            case "auto": format = nil
            case "statuspage", "incident.io", "incidentio": format = .statuspage
            case "instatus": format = .instatus
            case "betterstack", "better_stack": format = .betterstack
            case "atom", "rss", "feed": format = .feed
            case "incident.io-widget", "incidentio_widget", "incidentio-widget": format = .incidentIOWidget
            default:
                reader.problem(entry, "\"\(word)\" is not a format (use auto, statuspage, incident.io, incident.io-widget, instatus, betterstack, atom or rss)")
            }
        }
        if let entry = fields[.interval], let value = reader.duration(entry) {
            if value < VendorStatusConfig.minimumInterval {
                reader.problem(entry, "\(ConfigValues.format(value)) is too often for someone else's page (at least 1m)")
            } else {
                interval = value
            }
        }
        if let value = reader.bool(fields[.respectMaintenance]) { respectMaintenance = value }
    }
}

extension ConfigReader {
    /// A `vendor_status` entry, or nil when it has problems (reported).
    mutating func vendorStatus(_ entry: ConfigEntry) -> VendorStatusConfig? {
        let before = problems.count
        var config = VendorStatusConfig(url: "")
        read(entry, into: &config)
        return problems.count == before && !config.url.isEmpty ? config : nil
    }
}
