import LookoutCore
import Testing

@testable import LookoutAlerting

/// Alert changes the database refuses wait in memory, in order and bounded.
@Suite("unstored alert changes")
struct UnstoredChangesTests {
    func change(_ index: Int, firing: Bool = true) -> AlertChange {
        let alert = Alert(
            fingerprint: "f\(index)", rule: "SourceDown", source: "s\(index)", severity: "critical", labels: [:],
            annotations: [:], startedAtMs: Int64(index), resolvedAtMs: firing ? nil : Int64(index) + 1)
        return firing ? .firing(alert) : .resolved(alert)
    }

    @Test func keepsBatchesInOrder() {
        var unstored = AlertService.UnstoredChanges()
        #expect(unstored.append([change(1), change(2)], atMs: 1000, limit: 10) == 0)
        #expect(unstored.append([], atMs: 2000, limit: 10) == 0)
        #expect(unstored.append([change(1, firing: false)], atMs: 3000, limit: 10) == 0)
        #expect(unstored.batches.map(\.atMs) == [1000, 3000])
        #expect(unstored.batches.flatMap(\.changes) == [change(1), change(2), change(1, firing: false)])
        #expect(unstored.dropped == 0)
    }

    @Test func dropsTheOldestPastTheBoundAndCountsThem() {
        var unstored = AlertService.UnstoredChanges()
        _ = unstored.append((0..<3).map { change($0) }, atMs: 1, limit: 4)
        _ = unstored.append((3..<5).map { change($0) }, atMs: 2, limit: 4)
        #expect(unstored.batches.flatMap(\.changes) == (1..<5).map { change($0) })
        #expect(unstored.dropped == 1)
        #expect(unstored.append((5..<10).map { change($0) }, atMs: 3, limit: 4) == 5)
        #expect(unstored.batches.count == 1)
        #expect(unstored.batches[0].changes == (6..<10).map { change($0) })
        #expect(unstored.dropped == 6)
    }
}
