import LookoutCore

/// The incident history as Atom and RSS, in Statuspage's shape: one entry per incident, its
/// content the updates newest first as `<p><small>Nov 27, 12:07 UTC</small><br><strong>Resolved
/// </strong> - words</p>`, so readers of vendors' feeds (Lookout's own among them) read ours.
enum HistoryFeed {
    static func atom(_ model: StatuspageModel) -> String {
        let base = model.pageURL == "/" ? "" : model.pageURL
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<feed xml:lang=\"en-US\" xmlns=\"http://www.w3.org/2005/Atom\">\n"
        xml += "  <id>tag:lookout,2005:/history</id>\n"
        xml += "  <link rel=\"alternate\" type=\"text/html\" href=\"\(HTML.escape(base + "/"))\"/>\n"
        xml += "  <link rel=\"self\" type=\"application/atom+xml\" href=\"\(HTML.escape(base + "/history.atom"))\"/>\n"
        xml += "  <title>\(HTML.escape(model.pageName)) Status - Incident History</title>\n"
        xml += "  <updated>\(Timestamp.rfc3339(model.incidents.map(\.updatedAtMs).max() ?? model.nowMs))</updated>\n"
        xml += "  <author><name>\(HTML.escape(model.pageName))</name></author>\n"
        for incident in model.incidents + model.maintenances {
            xml += "  <entry>\n"
            xml += "    <id>tag:lookout,2005:Incident/\(HTML.escape(incident.id))</id>\n"
            xml += "    <published>\(Timestamp.rfc3339(incident.startedAtMs))</published>\n"
            xml += "    <updated>\(Timestamp.rfc3339(incident.updatedAtMs))</updated>\n"
            xml += "    <link rel=\"alternate\" type=\"text/html\" href=\"\(HTML.escape(incident.link))\"/>\n"
            xml += "    <title>\(HTML.escape(incident.name))</title>\n"
            xml += "    <content type=\"html\">\(HTML.escape(content(incident)))</content>\n"
            xml += "  </entry>\n"
        }
        return xml + "</feed>\n"
    }

    static func rss(_ model: StatuspageModel) -> String {
        let base = model.pageURL == "/" ? "" : model.pageURL
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<rss version=\"2.0\" xmlns:dc=\"http://purl.org/dc/elements/1.1/\">\n  <channel>\n"
        xml += "    <title>\(HTML.escape(model.pageName)) Status - Incident History</title>\n"
        xml += "    <link>\(HTML.escape(base + "/"))</link>\n"
        xml += "    <description>Statuspage</description>\n"
        xml += "    <pubDate>\(Timestamp.rfc822(model.incidents.map(\.updatedAtMs).max() ?? model.nowMs))</pubDate>\n"
        for incident in model.incidents + model.maintenances {
            xml += "    <item>\n"
            xml += "      <title>\(HTML.escape(incident.name))</title>\n"
            xml += "      <description>\(HTML.escape(content(incident)))</description>\n"
            xml += "      <pubDate>\(Timestamp.rfc822(incident.startedAtMs))</pubDate>\n"
            xml += "      <link>\(HTML.escape(incident.link))</link>\n"
            xml += "      <guid isPermaLink=\"false\">\(HTML.escape(incident.id))</guid>\n"
            xml += "    </item>\n"
        }
        return xml + "  </channel>\n</rss>\n"
    }

    /// The updates, newest first, as HTML (escaped again when put in the feed).
    static func content(_ incident: StatuspageModel.Incident) -> String {
        var html = incident.isMaintenance ? "<p><strong>THIS IS A SCHEDULED EVENT</strong></p>" : ""
        for update in incident.updates {
            let label = update.status.replacingOccurrences(of: "_", with: " ").capitalized
            html += "<p><small>\(HTML.escape(Timestamp.day(update.atMs))), \(HTML.escape(Timestamp.clock(update.atMs)))</small><br>"
            html += "<strong>\(HTML.escape(label))</strong> - \(HTML.escape(update.body))</p>"
        }
        return html
    }
}
