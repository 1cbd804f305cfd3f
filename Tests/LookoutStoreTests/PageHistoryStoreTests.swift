import Foundation
import GRDB
import Logging
import LookoutCore
import LookoutStore
import Testing

/// What the status page reads back from the store: 90 days of availability and a day of
/// response times after a restart, announcements with their timelines, and what retention keeps.
@Suite("page history in the store")
struct PageHistoryStoreTests {
    let day = HealthWindow.day

    @Test func aRestartRestoresNinetyDaysAndADayOfResponseTimes() throws {
        let database = try LookoutDatabase(path: ":memory:")
        let writer = RecordWriter(database: database, logger: Logger(label: "test"))
        let now = 20_000 * day + 12 * HealthWindow.hour
        for daysAgo in [1, 40, 89] {
            writer.record(ProbeResult(source: "a", timestampMs: now - Int64(daysAgo) * day, ok: daysAgo != 40, durationSeconds: 0.3, latencySeconds: 0.3))
        }
        writer.record(ProbeResult(source: "a", timestampMs: now - 2 * HealthWindow.hour, ok: true, durationSeconds: 0.02, latencySeconds: 0.02))
        writer.flush()
        // Before the tiers are rolled up, and after (the minute rows older than 48 h are then
        // gone): the same history either way.
        let before = SourceRegistry(sources: [SourceConfig(name: "a", url: "http://127.0.0.1/")])
        try HistoryStore.restore(into: before, from: database, nowMs: now)
        let deleted = try Retention(retention: .seconds(30 * 86_400), rawRetention: .seconds(86_400), tiers: RollupRetention()).prune(database, nowMs: now)
        #expect(deleted["probe_rollups"] == 2)  // 40 and 89 days old; the one of yesterday stays
        let registry = SourceRegistry(sources: [SourceConfig(name: "a", url: "http://127.0.0.1/")])
        try HistoryStore.restore(into: registry, from: database, nowMs: now)
        let health = try #require(registry.snapshot(nowMs: now).records.first).health
        #expect(try #require(before.snapshot(nowMs: now).records.first).health.days.buckets(90, nowMs: now) == health.days.buckets(90, nowMs: now))
        let days = health.days.buckets(90, nowMs: now)
        #expect(days[89 - 89]?.probes == 1 && days[89 - 40]?.failures == 1 && days[89 - 1]?.probes == 1)
        #expect(days[89 - 50] == nil)
        let hours = health.latency.quantiles([0.5], last: 24, nowMs: now)
        #expect(hours[23 - 2].map { $0[0] > 0.01 && $0[0] <= 0.025 } == true)  // the 20 ms probe
        #expect(hours[23 - 3] == nil)
    }

    @Test func announcementsKeepTheirTimelineAndRetentionPrunesOnlyOldResolvedOnes() throws {
        let database = try LookoutDatabase(path: ":memory:")
        let store = AnnouncementStore(database: database)
        let now = 20_000 * day
        let old = try store.add(title: "Old", sources: [], first: .init(atMs: now - 40 * day, state: .investigating, message: "a"), createdBy: nil)
        #expect(try store.update(old, with: .init(atMs: now - 39 * day, state: .resolved, message: "fixed")))
        let open = try store.add(title: "Open", sources: ["x"], first: .init(atMs: now - 40 * day, state: .identified, message: "b"), createdBy: nil)
        let recent = try store.add(title: "Recent", sources: [], first: .init(atMs: now - day, state: .resolved, message: "c"), createdBy: nil)
        #expect(try store.update(999, with: .init(atMs: now, state: .resolved, message: "none")) == false)

        let listed = try store.recent(sinceMs: now - 30 * day)
        #expect(listed.map(\.title) == ["Recent", "Open"])  // the old resolved one is past the page's 30 days
        #expect(listed.last?.sources == ["x"] && listed.last?.isOpen == true)

        try Retention(retention: .seconds(30 * 86_400), rawRetention: .seconds(86_400), tiers: RollupRetention()).prune(database, nowMs: now)
        let all = try store.recent(sinceMs: 0)
        #expect(Set(all.map(\.id)) == [String(open), String(recent)])
        #expect(try store.delete(open) && !(try store.delete(open)))
    }
}
