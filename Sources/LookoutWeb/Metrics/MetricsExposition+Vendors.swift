import LookoutCore

/// `lookout_vendor_*`: whether each vendor's page reads, whether it admits a problem on what a
/// source watches, and how it did on our outages. Written only when a source has `vendor_status`.
extension MetricsExposition {
    static func renderVendors(_ watch: VendorWatch, _ snapshot: RegistrySnapshot, _ writer: ExpositionWriter) {
        let readings = watch.readings
        guard !readings.isEmpty else { return }
        let place = place(snapshot)
        writer.family("lookout_vendor_page_up", type: .gauge, help: "Whether the vendor's status page was read at its last try (1) or not (0).")
        for reading in readings where reading.lastSuccessMs != nil || reading.problem != nil {
            // One series per configured page: several pages on one host differ by `page`.
            writer.sample(
                "lookout_vendor_page_up", labels: [("vendor", reading.vendor), ("page", reading.config.url)] + place, value: reading.problem == nil ? 1 : 0)
        }
        writer.family(
            "lookout_vendor_reports_problem", type: .gauge,
            help: "Whether the source's vendor admits a problem (an incident, or a watched component not operational) on its own status page.")
        for source in snapshot.sources {
            guard let config = source.vendorStatus else { continue }
            let view = watch.view(config)
            guard view.state != .unread && view.state != .unreadable else { continue }
            writer.sample(
                "lookout_vendor_reports_problem", labels: [("source", source.name), ("vendor", view.vendor)] + place, value: view.reportsProblem ? 1 : 0)
        }
        let records = watch.records
        let vendors = Array(Set(readings.map(\.vendor))).sorted()
        writer.family(
            "lookout_vendor_outages_acknowledged_total", type: .counter,
            help: "Our outages of a source that its vendor acknowledged on its status page before they ended.")
        for vendor in vendors {
            writer.sample("lookout_vendor_outages_acknowledged_total", labels: [("vendor", vendor)] + place, value: Double(records[vendor]?.acknowledged ?? 0))
        }
        writer.family(
            "lookout_vendor_outages_unacknowledged_total", type: .counter, help: "Our outages of a source that its vendor never acknowledged before they ended."
        )
        for vendor in vendors {
            writer.sample(
                "lookout_vendor_outages_unacknowledged_total", labels: [("vendor", vendor)] + place, value: Double(records[vendor]?.unacknowledged ?? 0))
        }
        writer.family(
            "lookout_vendor_acknowledgement_delay_seconds", type: .summary,
            help: "From the start of our outage to the vendor's incident, over the outages it acknowledged (0 when it was first).")
        for vendor in vendors {
            let record = records[vendor] ?? VendorWatch.Record()
            writer.sample("lookout_vendor_acknowledgement_delay_seconds_sum", labels: [("vendor", vendor)] + place, value: record.lagSecondsSum)
            writer.sample("lookout_vendor_acknowledgement_delay_seconds_count", labels: [("vendor", vendor)] + place, value: Double(record.acknowledged))
        }
    }
}
