import LookoutCore

/// What the vendors say on their own status pages (`vendor_status`), on the on-call page: a line
/// per source that watches one, and a section with each vendor's page and its record on our
/// outages.
extension StatusPage {
    /// Each source's vendor view, for the sources that have one.
    static func vendorViews(_ snapshot: RegistrySnapshot, watch: VendorWatch) -> [String: VendorView] {
        var views: [String: VendorView] = [:]
        for source in snapshot.sources {
            if let config = source.vendorStatus { views[source.name] = watch.view(config, source: source.name) }
        }
        return views
    }

    /// "Vendor: GitHub's status page reports it: ‘…’ (incident since 12:07 UTC, 4m after we saw
    /// it)", linked to the vendor's incident or page; nothing on the public page, nor while the
    /// page is unread.
    static func vendorLine(_ record: SourceRecord, _ view: View) -> String {
        guard !view.isPublic, let vendor = view.vendors[record.name], vendor.state != .unread else { return "" }
        let down = record.outage.down ? record.incident?.downSinceMs : nil
        // While our probes pass, only what matters: the vendor admitting something, or its page failing.
        guard down != nil || vendor.state != .operational else { return "" }
        let sentence = HTML.escape(vendor.sentence(downSinceMs: down))
        let link = vendor.link.hasPrefix("https://") || vendor.link.hasPrefix("http://") ? vendor.link : ""
        let words = link.isEmpty ? sentence : "<a href=\"\(HTML.escape(link))\" rel=\"noopener\">\(sentence)</a>"
        return "<br><small class=\"vendor vendor-\(vendor.state.rawValue)\">Vendor: \(words)</small>"
    }

    /// The vendors' pages: how each reads, and how it did on our outages (StatusGator's grade:
    /// how many it acknowledged, how late on average, how many never).
    func vendorsSection(_ view: View) -> String {
        guard !view.isPublic else { return "" }
        let readings = context.monitor.vendors.readings
        guard !readings.isEmpty else { return "" }
        let records = context.monitor.vendors.records
        var html = "<section class=\"vendors\" aria-label=\"Vendor status pages\"><details><summary>Vendor status pages (\(readings.count))</summary><ul>"
        for reading in readings {
            let page = HTML.escape(reading.page?.name ?? reading.vendor)
            var line = "<li><a href=\"\(HTML.escape(reading.config.url))\" rel=\"noopener\">\(page)</a> "
            if let problem = reading.problem {
                let since = reading.failingSinceMs.map { " since " + StatusPage.time(Timestamp.clock($0), atMs: $0) } ?? ""
                line += "<span class=\"state down\">cannot be read</span>\(since): \(HTML.escape(problem))"
            } else if let page = reading.page {
                let state = page.level.isProblem ? "down" : page.level == .operational ? "ok" : "maintenance"
                line += "<span class=\"state \(state)\">\(HTML.escape(page.level.words))</span>"
                let open = page.incidents.filter { $0.isOpen && !$0.isMaintenance }.count
                if open > 0 { line += " · \(open) open incident\(open == 1 ? "" : "s")" }
            } else {
                line += "<span class=\"state pending\">not read yet</span>"
            }
            let record = records[reading.vendor] ?? VendorWatch.Record()
            let outages = record.acknowledged + record.unacknowledged
            if outages > 0 {
                let lag =
                    record.acknowledged > 0
                    ? ", on average \(Timestamp.human(Int64(record.lagSecondsSum / Double(record.acknowledged) * 1000))) after we saw them" : ""
                line += "<br><small class=\"hint\">Acknowledged \(record.acknowledged) of our \(outages) outage\(outages == 1 ? "" : "s")\(lag)</small>"
            }
            html += line + "</li>"
        }
        return html + "</ul></details></section>\n"
    }
}
