import Foundation
import GRDB
import Logging
import LookoutCore
import LookoutStore
import ResilientHTTP
import Testing

/// SLA reports over whole months with a fake clock: probe results at chosen times go through the
/// registry (which opens and closes outages by the policy) and the writer (which stores them),
/// and the report is worked out by hand beside each case.
@Suite("SLA reports", .serialized)
struct SLAReportTests {
    static let minute: Int64 = 60_000
    static let hour: Int64 = 3_600_000
    static let day: Int64 = 86_400_000

    /// Milliseconds of a UTC date and time.
    static func utc(_ year: Int, _ month: Int, _ day: Int, _ hour: Int = 0, _ minute: Int = 0, zone: String = "UTC") -> Int64 {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: zone)!
        let date = calendar.date(from: DateComponents(year: year, month: month, day: day, hour: hour, minute: minute))!
        return Int64(date.timeIntervalSince1970 * 1000)
    }

    /// A source, a registry and a writer over an in-memory database, fed results by time.
    final class Run {
        let database: LookoutDatabase
        let writer: RecordWriter
        let registry: SourceRegistry
        var sources: [SourceConfig]

        init(_ sources: [SourceConfig]) throws {
            database = try LookoutDatabase(path: ":memory:")
            writer = RecordWriter(database: database, logger: Logger(label: "test"))
            registry = SourceRegistry(sources: sources)
            self.sources = sources
            let writer = writer
            registry.onOutageEdge { edge in writer.enqueue(.outageEdge(edge, location: "eu-west")) }
        }

        /// One probe of `source` at `atMs`.
        func probe(_ source: String, atMs: Int64, ok: Bool) {
            let failure = ok ? nil : Failure(category: .serverError, reason: "http_503", httpStatus: 503, detail: "HTTP 503", serverMessage: "database is down")
            let result = ProbeResult(source: source, timestampMs: atMs, ok: ok, failure: failure, httpStatus: ok ? 200 : 503)
            registry.record(result)
            writer.record(result)
        }

        /// Probes from `fromMs` to `toMs` (exclusive), failing inside `down`: every `every` from two
        /// steps before a down span to two after it, and every 30 minutes (on the same grid)
        /// elsewhere — what an outage's edges need, at a thirtieth of the work for a month, so the
        /// suite does not hold the test process's threads for long.
        func probe(_ source: String, fromMs: Int64, toMs: Int64, every: Int64, down: [Range<Int64>] = [], dense: Bool = false) {
            let sparse = dense ? every : max(every, (30 * 60_000 / every) * every)
            let zones = down.map { ($0.lowerBound - 2 * every)..<($0.upperBound + 2 * every) }
            var at = fromMs
            while at < toMs {
                probe(source, atMs: at, ok: !down.contains { $0.contains(at) })
                if zones.contains(where: { $0.contains(at) }) {
                    at += every
                    continue
                }
                // The next zone's first step on the grid, if it comes before the sparse step.
                var next = at + sparse
                for zone in zones where zone.lowerBound > at {
                    let first = fromMs + ((zone.lowerBound - fromMs + every - 1) / every) * every
                    if first > at { next = min(next, first) }
                }
                at = next
            }
            writer.flush()
        }

        /// Lookout ran (heartbeats) over each span.
        func ran(_ spans: [Range<Int64>]) throws {
            let runs = RunStore(database: database)
            for span in spans {
                _ = try runs.begin(nowMs: span.lowerBound)
                try runs.alive(startedAtMs: span.lowerBound, nowMs: span.upperBound)
            }
        }

        func report(_ period: String, nowMs: Int64, windows: [MaintenanceWindow] = []) throws -> SLAReport {
            let reports = try SLAStore(database: database).reports(sources: sources, period: try SLAPeriod(parsing: period), windows: windows, nowMs: nowMs)
            return try #require(reports.first)
        }
    }

    static func source(_ sla: SLASettings, name: String = "payments-api") -> SourceConfig {
        var source = SourceConfig(name: name, url: "http://127.0.0.1:1/")
        source.sla = sla
        return source
    }

    static var promised: SLASettings {
        var sla = SLASettings()
        sla.target = 0.9995
        sla.credits = [.init(below: 0.9995, credit: 0.10), .init(below: 0.99, credit: 0.25), .init(below: 0.95, credit: 1)]
        sla.exclude = [.maintenance]
        sla.claimWithin = .seconds(60 * 86_400)
        return sla
    }

    /// November 2026 (30 days, 2,592,000 s), 99.95 % promised. Outage A: 3 Nov 10:00–10:20
    /// (1,200 s). Outage B: 20 Nov 08:00–08:30, of which 08:00–08:10 falls in a maintenance
    /// window of 07:50–08:10 (1,200 s excluded in all). By hand:
    /// - measured = 2,592,000 − 1,200 = 2,590,800 s; downtime = 1,200 + 1,200 = 2,400 s
    /// - uptime = 2,588,400 ÷ 2,590,800 = 99.90737 %: below 99.95 % (10 %), not below 99 %
    /// - budget = 2,590,800 × 0.0005 = 1,295.4 s; A uses 1,200 s, B's counted part starts
    ///   at 08:10 and spends the last 95.4 s by 08:11:35.4
    /// - claim by 1 Dec + 60 days = 30 Jan 2027
    @Test func aMonthWithTwoOutagesAndMaintenanceIsWorkedOutByHand() throws {
        let run = try Run([Self.source(Self.promised)])
        let start = Self.utc(2026, 11, 1)
        let end = Self.utc(2026, 12, 1)
        try run.ran([start - Self.day..<end + Self.day])
        let outageA = Self.utc(2026, 11, 3, 10)..<Self.utc(2026, 11, 3, 10, 20)
        let outageB = Self.utc(2026, 11, 20, 8)..<Self.utc(2026, 11, 20, 8, 30)
        run.probe("payments-api", fromMs: start - Self.hour, toMs: end + Self.hour, every: Self.minute, down: [outageA, outageB])
        let window = MaintenanceWindow(
            name: "db-upgrade", sources: ["payments-api"], schedule: .once(startMs: Self.utc(2026, 11, 20, 7, 50), endMs: Self.utc(2026, 11, 20, 8, 10)),
            note: "database upgrade")
        let report = try run.report("2026-11", nowMs: end + Self.day, windows: [window])
        #expect(report.startMs == start && report.endMs == end && report.complete)
        #expect(report.excludedMs == 1_200_000)
        #expect(report.unmeasuredMs == 0)
        #expect(report.measuredMs == 2_590_800_000)
        #expect(report.downtimeMs == 2_400_000)
        #expect(report.uptime == 2_588_400.0 / 2_590_800.0)
        #expect(report.budgetMs == 1_295_400)
        #expect(report.budgetLeftMs == -1_104_600)
        #expect(report.budgetExhaustedAtMs == Self.utc(2026, 11, 20, 8, 11) + 35_400)
        #expect(report.credit == SLASettings.Credit(below: 0.9995, credit: 0.10))
        #expect(report.claimByDay == "2027-01-30")
        #expect(report.outages.count == 2)
        let a = report.outages[0]
        #expect(a.startMs == outageA.lowerBound && a.endMs == outageA.upperBound && a.countedMs == 1_200_000)
        #expect(a.stored.failedProbes == 20 && a.stored.reason == "http_503" && a.stored.httpStatus == 503)
        #expect(a.stored.serverMessage == "database is down" && a.stored.location == "eu-west")
        let b = report.outages[1]
        #expect(b.excludedMs == 600_000 && b.countedMs == 1_200_000)
        #expect(report.missedSentence == "payments-api: 99.9074% in November against 99.95% promised — a 10% credit; claim by 2027-01-30")
        #expect(report.budgetSentence == "payments-api has used its 21m 35s of downtime for November: 99.95% promised, 99.9074%")
    }

    /// Lookout stopped from 10 Nov 00:00 to 11 Nov 00:00: that day is neither up nor down, and
    /// an outage under way when it stopped counts only up to the stop.
    @Test func aDayWithLookoutStoppedIsNotMeasured() throws {
        let run = try Run([Self.source(Self.promised)])
        let start = Self.utc(2026, 11, 1)
        let end = Self.utc(2026, 12, 1)
        let stop = Self.utc(2026, 11, 10)
        let restart = Self.utc(2026, 11, 11)
        try run.ran([start - Self.day..<stop, restart..<end + Self.day])
        // Down from 23:50 before the stop, up at the first probe after the restart.
        run.probe("payments-api", fromMs: start - Self.hour, toMs: stop, every: Self.minute, down: [stop - 10 * Self.minute..<stop])
        run.probe("payments-api", fromMs: restart, toMs: end + Self.hour, every: Self.minute)
        let report = try run.report("2026-11", nowMs: end + Self.day)
        #expect(report.unmeasuredMs == Self.day)
        #expect(report.unmeasured.spans == [stop..<restart])
        #expect(report.measuredMs == 29 * Self.day)
        #expect(report.downtimeMs == 10 * Self.minute)
        #expect(report.outages.count == 1 && report.outages[0].unmeasuredMs == Self.day)
        #expect(report.uptime == Double(29 * Self.day - 10 * Self.minute) / Double(29 * Self.day))
    }

    /// March 2026 in Europe/Berlin loses an hour (29 March), October gains one: the month's
    /// length and bounds are the wall clock's.
    @Test func daylightSavingMonthsAreAnHourShortOrLong() throws {
        var sla = Self.promised
        sla.timeZone = "Europe/Berlin"
        let berlin = TimeZone(identifier: "Europe/Berlin")!
        let march = try SLAPeriod(parsing: "2026-03").bounds(in: berlin)
        #expect(march.startMs == Self.utc(2026, 2, 28, 23) && march.endMs == Self.utc(2026, 3, 31, 22))
        #expect(march.endMs - march.startMs == 31 * Self.day - Self.hour)
        let october = try SLAPeriod(parsing: "2026-10").bounds(in: berlin)
        #expect(october.endMs - october.startMs == 31 * Self.day + Self.hour)
        let run = try Run([Self.source(sla)])
        try run.ran([march.startMs - Self.day..<march.endMs + Self.day])
        run.probe("payments-api", fromMs: march.startMs, toMs: march.endMs, every: 30 * Self.minute)
        let report = try run.report("2026-03", nowMs: march.endMs + Self.day)
        // 743 hours at 99.95 %: 1,337.4 s of budget.
        #expect(report.budgetMs == 1_337_400)
        #expect(report.measuredMs == 743 * Self.hour && report.uptime == 1)
        // A source never probed was never measured.
        let unseen = try Run([Self.source(sla)])
        try unseen.ran([march.startMs - Self.day..<march.endMs + Self.day])
        #expect(try unseen.report("2026-03", nowMs: march.endMs).uptime == nil)
    }

    /// 100 %: no budget, the first second down spends it. 0 %: the whole month is budget.
    @Test func targetsOfAHundredAndOfZeroPercent() throws {
        let start = Self.utc(2026, 11, 1)
        let end = Self.utc(2026, 12, 1)
        let blip = Self.utc(2026, 11, 5)..<Self.utc(2026, 11, 5, 0, 2)
        for target in [1.0, 0.0] {
            var sla = SLASettings()
            sla.target = target
            let run = try Run([Self.source(sla)])
            try run.ran([start - Self.day..<end + Self.day])
            run.probe("payments-api", fromMs: start, toMs: end, every: Self.minute, down: [blip])
            let report = try run.report("2026-11", nowMs: end)
            #expect(report.downtimeMs == 2 * Self.minute)
            if target == 1 {
                #expect(report.budgetMs == 0 && !report.met)
                #expect(report.budgetExhaustedAtMs == blip.lowerBound)
                #expect(report.budgetRemainingRatio == -1)
            } else {
                #expect(report.budgetMs == 30 * Self.day && report.met)
                #expect(report.budgetExhaustedAtMs == nil)
            }
        }
    }

    /// A source renamed on 15 Nov (`renamed_from`) keeps the outage its old name had.
    @Test func aSourceRenamedMidMonthKeepsItsPeriodWhole() throws {
        let start = Self.utc(2026, 11, 1)
        let end = Self.utc(2026, 12, 1)
        let renameAt = Self.utc(2026, 11, 15)
        let old = try Run([Self.source(Self.promised, name: "payments")])
        try old.ran([start - Self.day..<end + Self.day])
        old.probe("payments", fromMs: start, toMs: renameAt, every: Self.minute, down: [Self.utc(2026, 11, 3)..<Self.utc(2026, 11, 3, 0, 30)])
        var renamed = Self.source(Self.promised)
        renamed.renamedFrom = ["payments"]
        try SourceIds().sync(old.database, sources: [renamed], nowMs: renameAt)
        old.sources = [renamed]
        let report = try old.report("2026-11", nowMs: end)
        #expect(report.source == "payments-api")
        #expect(report.unmeasuredMs == 0)
        #expect(report.downtimeMs == 30 * Self.minute)
    }

    /// Down from 30 Nov 23:00 to 1 Dec 01:00 UTC: an hour in each month.
    @Test func anOutageOverTheMonthsEndIsSplitInBoth() throws {
        let run = try Run([Self.source(Self.promised)])
        let start = Self.utc(2026, 11, 1)
        let down = Self.utc(2026, 11, 30, 23)..<Self.utc(2026, 12, 1, 1)
        try run.ran([start - Self.day..<Self.utc(2027, 1, 2)])
        run.probe("payments-api", fromMs: start, toMs: Self.utc(2027, 1, 1), every: 5 * Self.minute, down: [down])
        let november = try run.report("2026-11", nowMs: Self.utc(2027, 1, 1))
        let december = try run.report("2026-12", nowMs: Self.utc(2027, 1, 1))
        #expect(november.downtimeMs == Self.hour && december.downtimeMs == Self.hour)
        #expect(november.outages[0].goesOnAfter && !november.outages[0].beganBefore && november.outages[0].endMs == Self.utc(2026, 12, 1))
        #expect(december.outages[0].beganBefore && december.outages[0].startMs == Self.utc(2026, 12, 1))
    }

    /// `raw_retention: 1d` deletes a month's raw results, except those of an outage whose claim
    /// window is open; once it has closed they go too, and the outage's row stays for the report.
    @Test func rawResultsOfAnOutageInAClaimWindowSurvivePruning() throws {
        let run = try Run([Self.source(Self.promised)])
        let start = Self.utc(2026, 11, 1)
        let end = Self.utc(2026, 12, 1)
        let outage = Self.utc(2026, 11, 3, 10)..<Self.utc(2026, 11, 3, 10, 20)
        try run.ran([start..<end])
        run.probe("payments-api", fromMs: start, toMs: end, every: 10 * Self.minute, down: [outage], dense: true)
        func rows(_ span: Range<Int64>) throws -> Int {
            try run.database.writer.read { db in
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM raw_results WHERE ts_ms >= ? AND ts_ms < ?", arguments: [span.lowerBound, span.upperBound]) ?? 0
            }
        }
        #expect(try rows(start..<end) == 30 * 144)
        let keep = SLAStore.keep(for: run.sources)
        #expect(keep == .seconds((60 + 31) * 86_400))
        let retention = Retention(retention: .seconds(90 * 86_400), rawRetention: .seconds(86_400), tiers: nil, claimKeep: keep)
        // Ten days after the month: the outage's 2 failed probes and its first success stay.
        let deleted = try retention.prune(run.database, nowMs: end + 10 * Self.day)
        #expect(try rows(outage.lowerBound..<outage.upperBound + 1) == 3)
        #expect(try rows(start..<end) == 3)
        #expect(deleted["probe_results"] == 30 * 144 - 3)
        // Past the claim window they go; the report still has the outage.
        try retention.prune(run.database, nowMs: end + 100 * Self.day)
        #expect(try rows(start..<end) == 0)
        #expect(try run.report("2026-11", nowMs: end + 100 * Self.day).downtimeMs == 20 * Self.minute)
    }

    /// The vendor's word is evidence: its acknowledgement and lag on the outage; with
    /// `exclude: [vendor_maintenance]`, the minutes its page said maintenance was in progress
    /// are left out like our own windows.
    @Test func theVendorsAcknowledgementAndAnnouncedMaintenanceAreInTheReport() throws {
        var sla = Self.promised
        sla.exclude = [.vendorMaintenance]
        let run = try Run([Self.source(sla)])
        let start = Self.utc(2026, 11, 1)
        let end = Self.utc(2026, 12, 1)
        try run.ran([start - Self.day..<end + Self.day])
        let outage = Self.utc(2026, 11, 3, 10)..<Self.utc(2026, 11, 3, 10, 20)
        run.probe("payments-api", fromMs: start, toMs: Self.utc(2026, 11, 3, 10, 5), every: Self.minute, down: [outage])
        // While it is down, the vendor's page acknowledges it 4 minutes in.
        try VendorStore(database: run.database).save(
            VendorWatch.Saved(
                followed: [
                    "payments-api": .init(
                        vendor: "acme", downSinceMs: outage.lowerBound, acknowledgedAtMs: outage.lowerBound + 4 * Self.minute, incident: "Elevated errors")
                ]))
        run.probe("payments-api", fromMs: Self.utc(2026, 11, 3, 10, 5), toMs: end, every: Self.minute, down: [outage])
        // The vendor announced maintenance from 10:10 to 10:15, read once a minute.
        let store = SLAStore(database: run.database)
        let first10: Int64 = Self.utc(2026, 11, 3, 10, 10)
        for step in 0...5 {
            try store.noteVendorMaintenance(["payments-api"], nowMs: first10 + Int64(step) * Self.minute, continuesWithinMs: 2 * Self.minute)
        }
        let report = try run.report("2026-11", nowMs: end)
        let first = try #require(report.outages.first)
        #expect(first.vendorLagMs == 4 * Self.minute && first.stored.vendorIncident == "Elevated errors")
        #expect(report.excludedMs == 5 * Self.minute && first.excludedMs == 5 * Self.minute)
        #expect(report.downtimeMs == 15 * Self.minute)
        // Without vendor_maintenance in `exclude`, the same minutes count.
        run.sources[0].sla?.exclude = []
        #expect(try run.report("2026-11", nowMs: end).downtimeMs == 20 * Self.minute)
    }

    @Test func periodsAndTheirProblems() throws {
        #expect(try SLAPeriod(parsing: "2026-11").description == "2026-11")
        #expect(try SLAPeriod(parsing: "2026-W53").title == "week 53 of 2026")
        for bad in ["2026-13", "2026-00", "26-11", "2026-W54", "2027-W53", "2026-11-01", "", "2026-1x"] {
            #expect(throws: SLAPeriod.Problem.self) { try SLAPeriod(parsing: bad) }
        }
        let week = try SLAPeriod(parsing: "2026-W48").bounds(in: TimeZone(identifier: "UTC")!)
        #expect(week.startMs == Self.utc(2026, 11, 23) && week.endMs == Self.utc(2026, 11, 30))
        #expect(SLAReport.duration(1_296_000) == "21m 36s")
        #expect(SLAReport.duration(3 * Self.day + 5 * Self.hour + 7) == "3d 5h")
        #expect(SLAReport.duration(Self.hour + 5_000) == "1h")
    }
}
