import Foundation
import LookoutCore
import Testing

/// Vendors' status pages in every format Lookout reads, from their documented shapes, and the
/// hostile ones: parsed, escaped, bounded, never a crash, never "operational" by default.
@Suite("vendor status pages")
struct VendorPageTests {
    func parse(_ text: String, as format: VendorPage.Format? = nil, nowMs: Int64 = Timestamp.nowMs()) -> Result<VendorPage, VendorPage.Problem> {
        VendorPage.parse(Array(text.utf8), as: format, nowMs: nowMs)
    }

    static let statuspage = """
        {"page":{"id":"kctbh9vrtdwd","name":"GitHub","url":"https://www.githubstatus.com","time_zone":"Etc/UTC","updated_at":"2026-11-27T08:08:17.044Z"},
         "status":{"indicator":"major","description":"Partial System Outage"},
         "components":[
          {"id":"g1","name":"Platform","status":"partial_outage","group":true,"group_id":null,"components":["c1","c2"],"position":1},
          {"id":"c1","name":"API Requests","status":"partial_outage","group":false,"group_id":"g1","position":2,"description":null},
          {"id":"c2","name":"Webhooks","status":"operational","group":false,"group_id":"g1","position":3},
          {"id":"c3","name":"Pages","status":"operational","group":false,"group_id":null,"position":4}],
         "incidents":[{"id":"i1","name":"Elevated error rates on API","status":"investigating","impact":"major",
           "shortlink":"https://stspg.io/abc","created_at":"2026-11-27T12:07:00Z","updated_at":"2026-11-27T12:09:00Z","started_at":"2026-11-27T12:07:00Z",
           "incident_updates":[{"id":"u2","status":"identified","body":"We found it.<br />A fix is rolling out &amp; errors drop.","created_at":"2026-11-27T12:09:00Z",
             "affected_components":[{"code":"c1","name":"API Requests","old_status":"operational","new_status":"partial_outage"}]},
            {"id":"u1","status":"investigating","body":"Looking.","created_at":"2026-11-27T12:07:00Z","affected_components":null}],
           "components":[{"id":"c1","name":"API Requests","status":"partial_outage"}]}],
         "scheduled_maintenances":[{"id":"m1","name":"Database upgrade","status":"in_progress","impact":"maintenance",
           "scheduled_for":"2026-11-27T11:00:00Z","scheduled_until":"2026-11-27T13:00:00Z","shortlink":"https://stspg.io/m",
           "incident_updates":[],"components":[{"id":"c3","name":"Pages","status":"under_maintenance"}]}]}
        """

    @Test func statuspageSummaryWithGroupsIncidentsAndMaintenance() throws {
        let page = try parse(Self.statuspage).get()
        #expect(page.format == .statuspage)
        #expect(page.name == "GitHub")
        #expect(page.level == .partialOutage)
        #expect(page.components.count == 4)
        #expect(page.components[0].isGroup)
        #expect(page.components[1] == VendorPage.Component(id: "c1", name: "API Requests", level: .partialOutage, groupID: "g1"))
        let incident = try #require(page.incidents.first { !$0.isMaintenance })
        #expect(incident.name == "Elevated error rates on API")
        #expect(incident.impact == .partialOutage)
        #expect(incident.latestUpdate == "We found it. A fix is rolling out & errors drop.")
        #expect(incident.shortlink == "https://stspg.io/abc")
        #expect(incident.startedAtMs == Timestamp.parseRFC3339("2026-11-27T12:07:00Z"))
        #expect(incident.components.contains("c1") && incident.components.contains("API Requests"))
        let maintenance = try #require(page.incidents.first { $0.isMaintenance })
        #expect(maintenance.isMaintenanceInProgress)
        #expect(maintenance.endsAtMs == Timestamp.parseRFC3339("2026-11-27T13:00:00Z"))
    }

    @Test func whatASourceWatchesDecidesWhatTheVendorSaysAboutIt() throws {
        let page = try parse(Self.statuspage).get()
        var reading = VendorWatch.Reading(config: VendorStatusConfig(url: "https://www.githubstatus.com", components: ["API Requests"]))
        reading.page = page
        reading.lastSuccessMs = 1
        let since = try #require(Timestamp.parseRFC3339("2026-11-27T12:03:00Z"))
        let api = VendorView.of(reading, config: reading.config)
        #expect(api.state == .problem)
        #expect(api.link == "https://stspg.io/abc")
        #expect(
            api.sentence(downSinceMs: since)
                == "GitHub's status page reports it: ‘Elevated error rates on API’ (incident since 12:07 UTC, 4m after we saw it)")
        #expect(api.sentence(downSinceMs: nil).hasSuffix("while our probes pass"))
        // A watched group brings its members; a component by id works as by name.
        #expect(VendorView.of(reading, config: VendorStatusConfig(url: "x", components: ["g1"])).state == .problem)
        let webhooks = VendorStatusConfig(url: "https://www.githubstatus.com", components: ["webhooks"])
        // The incident names API Requests only: Webhooks is operational.
        #expect(VendorView.of(reading, config: webhooks).state == .operational)
        #expect(VendorView.of(reading, config: webhooks).sentence(downSinceMs: since) == "GitHub's status page reports nothing yet (all operational)")
        let pages = VendorView.of(reading, config: VendorStatusConfig(url: "x", components: ["Pages"]))
        #expect(pages.state == .maintenance)
        #expect(pages.sentence(downSinceMs: since) == "GitHub's status page reports maintenance: ‘Database upgrade’ until 13:00 UTC")
        // A component the page does not list is said, not taken for operational.
        let typo = VendorView.of(reading, config: VendorStatusConfig(url: "x", components: ["APl Requests"]))
        #expect(typo.state == .unreadable)
        #expect(typo.sentence(downSinceMs: since).contains("lists none of the components APl Requests"))
    }

    @Test func incidentIOLeavesListsOut() throws {
        let page = try parse(
            """
            {"page":{"id":"01JMDK9XYNY6RXSED6SDWW50WY","name":"OpenAI","url":"https://status.openai.com/","updated_at":"2026-11-27T08:00:00Z"},
             "status":{"indicator":"none","description":"All Systems Operational"},
             "components":[{"id":"01A","name":"APIs","status":"operational","position":1,"group":null}]}
            """
        ).get()
        #expect(page.level == .operational)
        #expect(page.incidents.isEmpty)
        #expect(page.components.map(\.name) == ["APIs"])
    }

    /// incident.io's widget API names only what an incident or maintenance affects: a watched
    /// component none names is working, one an incident names is as bad as the incident.
    @Test func incidentIOWidget() throws {
        let page = try parse(
            """
            {"page_title":"Acme Status","page_url":"https://status.acme.test",
             "ongoing_incidents":[{"id":"01INC","name":"Elevated API errors","status":"identified","url":"https://status.acme.test/incidents/01INC",
               "current_worst_impact":"full_outage","last_update_at":"2026-11-27T10:05:00Z","last_update_message":"<p>We are <b>rolling back</b></p>",
               "affected_components":[{"id":"01API","name":"API","group_name":"Core"}]}],
             "in_progress_maintenances":[{"id":"01MNT","name":"Database upgrade","status":"maintenance_in_progress","url":"https://status.acme.test/m",
               "last_update_at":"2026-11-27T09:00:00Z","last_update_message":null,"started_at":"2026-11-27T09:00:00Z","scheduled_end_at":"2026-11-27T11:00:00Z",
               "affected_components":[{"id":"01DB","name":"Dashboard"}]}],
             "scheduled_maintenances":[{"id":"01SCH","name":"Network work","status":"maintenance_scheduled","starts_at":"2026-12-01T00:00:00Z",
               "ends_at":"2026-12-01T02:00:00Z","affected_components":[]}]}
            """
        ).get()
        #expect(page.format == .incidentIOWidget && page.name == "Acme Status")
        #expect(page.level == .majorOutage)
        #expect(page.incidents.map(\.name) == ["Elevated API errors", "Database upgrade", "Network work"])
        #expect(page.incidents[0].latestUpdate == "We are rolling back")
        #expect(page.incidents[0].components == ["01API", "API"])
        #expect(page.incidents[1].isMaintenanceInProgress && page.incidents[1].endsAtMs == Timestamp.parseRFC3339("2026-11-27T11:00:00Z"))
        #expect(!page.incidents[2].isMaintenanceInProgress && page.incidents[2].isOpen)
        var reading = VendorWatch.Reading(config: VendorStatusConfig(url: "https://status.acme.test"))
        reading.page = page
        reading.lastSuccessMs = 1
        let api = VendorView.of(reading, config: VendorStatusConfig(url: "https://status.acme.test", components: ["API"]))
        #expect(api.state == .problem && api.incident?.name == "Elevated API errors")
        let dashboard = VendorView.of(reading, config: VendorStatusConfig(url: "https://status.acme.test", components: ["Dashboard"]))
        #expect(dashboard.state == .maintenance)
        let billing = VendorView.of(reading, config: VendorStatusConfig(url: "https://status.acme.test", components: ["Billing"]))
        #expect(billing.state == .operational, "a component no incident names works")
        // Nothing going on: operational, found as the widget by its lists.
        let quiet = try parse(#"{"page_title":"Acme","ongoing_incidents":[],"in_progress_maintenances":[],"scheduled_maintenances":[]}"#).get()
        #expect(quiet.format == .incidentIOWidget && quiet.level == .operational)
        // An impact in words Lookout does not know is still an incident.
        let odd = try parse(#"{"ongoing_incidents":[{"name":"x","current_worst_impact":"catastrophic"}]}"#).get()
        #expect(odd.level == .degraded)
        #expect(VendorStatusConfig(url: "https://status.acme.test/api/v1/summary").candidates.map(\.url) == ["https://status.acme.test/api/v1/summary"])
        // Under a base URL every candidate is read by its shape, as with format: it would be.
        let candidates = VendorStatusConfig(url: "https://status.acme.test").candidates
        #expect(candidates.contains { $0.url == "https://status.acme.test/api/v1/summary" } && candidates.allSatisfy { $0.format == nil })
    }

    @Test func instatusInBothShapes() throws {
        let old = try parse(
            """
            {"page":{"name":"Acme","url":"https://acme.instatus.com","status":"HASISSUES"},
             "activeIncidents":[{"id":"ck1","name":"Login errors","started":"2026-11-27T10:00:00.000Z","status":"INVESTIGATING","impact":"MAJOROUTAGE","url":"https://acme.instatus.com/ck1"}],
             "activeMaintenances":[{"id":"ck2","name":"Upgrade","start":"2026-11-27T09:00:00.000Z","status":"INPROGRESS","duration":"60","url":"https://acme.instatus.com/ck2"}]}
            """
        ).get()
        #expect(old.format == .instatus)
        #expect(old.level == .degraded)
        #expect(old.incidents.map(\.name) == ["Login errors", "Upgrade"])
        #expect(old.incidents[0].impact == .majorOutage)
        #expect(old.incidents[1].isMaintenanceInProgress)
        #expect(old.incidents[1].endsAtMs == Timestamp.parseRFC3339("2026-11-27T10:00:00Z"))
        let new = try parse(#"{"page":{"name":"Acme","url":"https://acme.instatus.com","updated":"x"},"status":{"text":"ok","type":"UP"}}"#).get()
        #expect(new.format == .instatus && new.level == .operational)
    }

    @Test func betterStackIndex() throws {
        let page = try parse(
            """
            {"data":{"id":"1","type":"status_page","attributes":{"company_name":"Acme","aggregate_state":"degraded"}},
             "included":[
              {"id":"10","type":"status_page_resource","attributes":{"public_name":"API","status":"downtime"}},
              {"id":"11","type":"status_page_resource","attributes":{"public_name":"Website","status":"operational"}},
              {"id":"20","type":"status_report","attributes":{"title":"API down","report_type":"manual","starts_at":"2026-11-27T10:00:00Z","ends_at":null,
                "aggregate_state":"downtime","affected_resources":[{"status_page_resource_id":"10","status":"downtime"}]}},
              {"id":"21","type":"status_report","attributes":{"title":"Old","report_type":"manual","starts_at":"2026-11-20T10:00:00Z","ends_at":"2026-11-20T11:00:00Z","aggregate_state":"resolved"}}]}
            """
        ).get()
        #expect(page.format == .betterstack)
        #expect(page.level == .degraded)
        #expect(page.components.map(\.level) == [.majorOutage, .operational])
        #expect(page.incidents.map(\.name) == ["API down"])
        #expect(page.incidents[0].components.contains("API"))
    }

    @Test func statuspageHistoryAtomAndRSS() throws {
        let now = try #require(Timestamp.parseRFC3339("2026-11-27T12:30:00Z"))
        let atom = try parse(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <feed xml:lang="en-US" xmlns="http://www.w3.org/2005/Atom">
              <id>tag:status.example.com,2005:/history</id>
              <title>Example Status - Incident History</title>
              <updated>2026-11-27T12:10:00Z</updated>
              <entry>
                <id>tag:status.example.com,2005:Incident/6390341</id>
                <published>2026-11-27T12:07:00Z</published>
                <updated>2026-11-27T12:10:00Z</updated>
                <link rel="alternate" type="text/html" href="https://status.example.com/incidents/abc"/>
                <title>Elevated &lt;b&gt;errors&lt;/b&gt;</title>
                <content type="html">&lt;p&gt;&lt;small&gt;Nov &lt;var data-var='date'&gt;27&lt;/var&gt;, &lt;var data-var='time'&gt;12:10&lt;/var&gt; UTC&lt;/small&gt;&lt;br&gt;&lt;strong&gt;Identified&lt;/strong&gt; - A fix is rolling out.&lt;/p&gt;</content>
              </entry>
              <entry>
                <id>tag:status.example.com,2005:Incident/1</id>
                <published>2026-11-20T12:07:00Z</published>
                <updated>2026-11-20T13:00:00Z</updated>
                <link rel="alternate" type="text/html" href="https://status.example.com/incidents/old"/>
                <title>Old one</title>
                <content type="html">&lt;p&gt;&lt;strong&gt;Resolved&lt;/strong&gt; - Fixed.&lt;/p&gt;</content>
              </entry>
            </feed>
            """, nowMs: now
        ).get()
        #expect(atom.format == .feed)
        #expect(atom.name == "Example Status - Incident History")
        #expect(atom.level == .degraded)
        #expect(atom.incidents.count == 1)
        #expect(atom.incidents[0].name == "Elevated <b>errors</b>")
        #expect(atom.incidents[0].status == "identified")
        #expect(atom.incidents[0].latestUpdate == "A fix is rolling out.")
        #expect(atom.incidents[0].shortlink == "https://status.example.com/incidents/abc")
        let rss = try parse(
            """
            <rss version="2.0"><channel><title>X</title><description>Statuspage</description>
            <item><title>Queue delays</title><description><![CDATA[<p><strong>Monitoring</strong> - Better.</p>]]></description>
            <pubDate>Fri, 27 Nov 2026 12:00:00 +0000</pubDate><link>https://x.example/incidents/q</link><guid>https://x.example/incidents/q</guid></item>
            </channel></rss>
            """, nowMs: now
        ).get()
        #expect(rss.incidents.map(\.name) == ["Queue delays"])
        #expect(rss.incidents[0].startedAtMs == Timestamp.parseRFC3339("2026-11-27T12:00:00Z"))
        #expect(rss.incidents[0].latestUpdate == "Better.")
    }

    /// Entities are decoded once: in escaped text by the XML, in a CDATA section only by the
    /// HTML inside it. A title that says `&amp;` (one Lookout reading another's feed) keeps it.
    @Test func entitiesAreDecodedOnce() throws {
        let now = try #require(Timestamp.parseRFC3339("2026-11-27T12:30:00Z"))
        let feed = try parse(
            """
            <rss version="2.0"><channel><title>Fish &amp;amp; Chips status</title><description>x</description>
            <item><title>Write &amp;amp; read</title><description><![CDATA[<p><strong>Identified</strong> - Tom &amp;amp; Jerry &lt;3</p>]]></description>
            <pubDate>Fri, 27 Nov 2026 12:00:00 +0000</pubDate><guid>a</guid></item>
            </channel></rss>
            """, nowMs: now
        ).get()
        #expect(feed.incidents.first?.name == "Write &amp; read")
        #expect(feed.incidents.first?.latestUpdate == "Tom &amp; Jerry <3")
        #expect(XMLSlice.decodeEntities("&amp;lt; &lt; &bogus; & &amp;amp;") == "&lt; < &bogus; & &amp;")
    }

    @Test(arguments: [
        ("", "the page is empty"),
        ("<html><body>Status</body></html>", "not a feed"),
        ("<feed><entry>", "not well-formed"),
        ("[1,2]", "neither JSON nor a feed"),
        (#"{"hello":"world"}"#, "in no format Lookout reads"),
        (#"{"page":{"name":"x"},"status":"#, "not a JSON object"),
        (#"{"data":{"attributes":5}}"#, "in no format"),
    ])
    func whatIsNotAPageSaysWhy(_ text: String, _ expected: String) {
        guard case .failure(let problem) = parse(text) else {
            Issue.record("\(text) parsed")
            return
        }
        #expect(problem.message.contains(expected), "\(problem.message)")
    }

    /// Containers are counted before any is built: 60,000 components (3.5 MB) or a 4 MB page of
    /// `[]` is refused at once; a real summary (hundreds) is read.
    @Test func aPageOfTooManyObjectsOrListsIsNotBuilt() throws {
        let component = #"{"id":"c","name":"Component","status":"operational","group":false},"#
        let huge = #"{"status":{"indicator":"none"},"components":["# + String(repeating: component, count: 60_000).dropLast() + "]}"
        guard case .failure(let tooMany) = parse(huge) else {
            Issue.record("60,000 components were read")
            return
        }
        #expect(tooMany.message.contains("more than 20000 JSON objects and lists"))
        let lists = "{\"components\":" + String(repeating: "[", count: 30_000) + String(repeating: "]", count: 30_000) + "}"
        guard case .failure(let nested) = parse(lists) else {
            Issue.record("30,000 lists were read")
            return
        }
        #expect(nested.message.contains("JSON objects and lists"))
        let fine = #"{"status":{"indicator":"none"},"components":["# + String(repeating: component, count: 300).dropLast() + "]}"
        #expect(try !parse(fine).get().components.isEmpty)
    }

    @Test func hostilePagesAreBoundedAndEscapedAndNeverOperationalByDefault() throws {
        // Wrong types everywhere: skipped, not trapped.
        let wrong = try parse(
            #"{"status":{"indicator":7},"components":[5,"x",{"id":1,"name":["a"]},{"id":2,"name":"B","status":"on fire"}],"incidents":{"a":1},"scheduled_maintenances":[{"id":null}]}"#
        ).get()
        #expect(wrong.level == .unknown)
        #expect(wrong.components == [VendorPage.Component(id: "2", name: "B", level: .unknown)])
        #expect(wrong.incidents.isEmpty)
        var reading = VendorWatch.Reading(config: VendorStatusConfig(url: "https://x.example"))
        reading.page = wrong
        #expect(VendorView.of(reading, config: reading.config).state == .unreadable)
        // Control characters and bidi overrides are spelled out; long names are cut.
        let long = String(repeating: "A", count: 5_000)
        let nasty = try parse(
            #"{"status":{"indicator":"none"},"components":[{"id":"c","name":"\u001b[31mred\u202e\#(long)","status":"operational"}]}"#
        ).get()
        let name = nasty.components[0].name
        #expect(!name.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x202E })
        #expect(name.count <= VendorPage.maxText)
        // A javascript: link is no link.
        let link = try parse(#"{"status":{"indicator":"minor"},"incidents":[{"id":"i","name":"x","shortlink":"javascript:alert(1)"}]}"#).get()
        #expect(link.incidents[0].shortlink == nil)
        // 10 MB of objects is refused before it is parsed.
        let bomb = "{\"components\":[" + Array(repeating: "{}", count: 300_000).joined(separator: ",") + "]}"
        guard case .failure(let problem) = parse(bomb) else {
            Issue.record("a page of 300,000 objects parsed")
            return
        }
        #expect(problem.message.contains("more than"))
        // Many entries: at most maxItems are kept.
        let many =
            "{\"status\":{\"indicator\":\"none\"},\"components\":["
            + (0..<2_000).map { "{\"id\":\"\($0)\",\"name\":\"c\($0)\",\"status\":\"operational\"}" }.joined(separator: ",") + "]}"
        #expect(try parse(many).get().components.count == VendorPage.maxItems)
    }

    @Test func rfc822TimesReadAndWrite() throws {
        let ms = try #require(Timestamp.parseRFC3339("2026-11-27T03:10:43Z"))
        #expect(Timestamp.rfc822(ms) == "Fri, 27 Nov 2026 03:10:43 GMT")
        #expect(Timestamp.parseRFC822("Fri, 27 Nov 2026 03:10:43 GMT") == ms)
        #expect(Timestamp.parseRFC822("27 Nov 2026 04:10:43 +0100") == ms)
        #expect(Timestamp.parseRFC822("27 Nov 2026 03:10 Z") == ms - 43_000)
        for bad in ["", "Fri, 99 Nov 2026 03:10:43 GMT", "Fri, 27 Xyz 2026 03:10:43 GMT", "27 Nov 2026 25:00:00 GMT", "27 Nov 2026 03:10:43 +99999"] {
            #expect(Timestamp.parseRFC822(bad) == nil, "\(bad)")
        }
    }

    @Test func vendorStatusConfig() throws {
        let config = try ConfigLoader.parse(
            """
            sources:
              - {name: api, url: "http://127.0.0.1:1/", group: payments}
              - {name: web, url: "http://127.0.0.1:1/", group: payments, vendor_status: {url: "https://status.other.example/history.atom"}}
              - {name: solo, url: "http://127.0.0.1:1/", vendor_status: {url: "https://www.githubstatus.com", components: [API Requests], format: statuspage, interval: 5m, respect_maintenance: true}}
            groups:
              payments: {vendor_status: {url: "https://status.stripe.com"}}
            """, file: "t.yml")
        #expect(config.sources[0].vendorStatus?.url == "https://status.stripe.com")
        #expect(config.sources[1].vendorStatus?.url == "https://status.other.example/history.atom")
        let solo = try #require(config.sources[2].vendorStatus)
        #expect(solo.components == ["API Requests"] && solo.format == .statuspage && solo.interval == .seconds(300) && solo.respectMaintenance)
        #expect(solo.candidates.map(\.url) == ["https://www.githubstatus.com/api/v2/summary.json"])
        #expect(config.sources[0].vendorStatus?.candidates.count == 5)
        #expect(config.sources[1].vendorStatus?.candidates.map(\.url) == ["https://status.other.example/history.atom"])
        for (yaml, expected) in [
            ("vendor_status: {url: x}", "sources[0].vendor_status.url"),
            ("vendor_status: {components: [a]}", "needs a url"),
            ("vendor_status: {url: \"https://s.example\", interval: 10s}", "too often"),
            ("vendor_status: {url: \"https://s.example\", format: html}", "is not a format"),
            ("vendor_status: {url: \"https://s.example\", component: [a]}", "did you mean \"components\""),
        ] {
            #expect(throws: (any Error).self) { try ConfigLoader.parse("sources: [{name: a, url: \"http://127.0.0.1:1/\", \(yaml)}]", file: "t.yml") }
            do {
                _ = try ConfigLoader.parse("sources: [{name: a, url: \"http://127.0.0.1:1/\", \(yaml)}]", file: "t.yml")
            } catch {
                #expect("\(error)".contains(expected), "\(error)")
            }
        }
        do {
            _ = try ConfigLoader.parse("sources: [{name: a, url: \"http://127.0.0.1:1/\", group: pay}]\ngroups: {paymnets: {}}", file: "t.yml")
            Issue.record("an unknown group was accepted")
        } catch {
            #expect("\(error)".contains("did you mean \"pay\""), "\(error)")
        }
    }

    /// Row 5 of the third attack: a document in no known shape is no page, in every format and
    /// detected; never "all operational".
    @Test(arguments: [nil] + VendorPage.Format.allCases.filter { $0 != .feed }.map(Optional.some))
    func aDocumentInNoKnownShapeIsUnreadable(_ format: VendorPage.Format?) {
        for document in ["{}", #"{"page": {}}"#, #"{"data": {}}"#] {
            guard case .failure = VendorPage.parse(Array(document.utf8), as: format) else {
                Issue.record("\(document) as \(format.map { "\($0)" } ?? "detected") read as a page")
                continue
            }
        }
    }
}
