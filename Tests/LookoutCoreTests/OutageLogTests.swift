import Logging
import LookoutCore
import ResilientHTTP
import Synchronization
import Testing

/// The log tells a source's outage as it changes — down, failing differently, up again — not a
/// line per failed probe: a thousand sources failing every second used to write a thousand lines
/// a second, and the breaker's refusals among them hid the upstream's own answer.
@Suite("Outage log lines")
struct OutageLogTests {
    let a = SourceConfig(name: "a", url: "http://127.0.0.1/a")
    let b = SourceConfig(name: "b", url: "http://127.0.0.1/b")
    let unavailable = Failure(category: .serverError, reason: "http_503", httpStatus: 503, serverMessage: "maintenance until 10:00")
    let refused = Failure(category: .transient, reason: "connection_refused")
    let breakerOpen = Failure(category: .circuitOpen, reason: "circuit_open")
    let noRoute = Failure(category: .networkUnreachable, reason: "network_unreachable")

    func probe(_ failure: Failure?, at seconds: Int, offline: Bool = false, maintenance: Bool = false) -> ProbeResult {
        var result = ProbeResult(
            source: "a", timestampMs: 1_000_000 + Int64(seconds) * 1000, ok: failure == nil, failure: failure,
            httpStatus: failure?.httpStatus ?? (failure == nil ? 200 : nil))
        result.duringOffline = offline
        result.duringMaintenance = maintenance
        return result
    }

    /// A registry whose log lines are captured, and a way to read them.
    func registry() -> (SourceRegistry, () -> [Captured.Line]) {
        let captured = Captured()
        return (SourceRegistry(sources: [a], logger: captured.logger), { captured.lines.withLock { $0 } })
    }

    /// Lines logged through a registry, as level, message and metadata.
    final class Captured: Sendable {
        struct Line: Sendable {
            var level: Logger.Level
            var message: String
            var metadata: [String: String]
        }
        let lines = Mutex<[Line]>([])

        var logger: Logger {
            Logger(label: "test") { _ in Handler(captured: self) }
        }

        struct Handler: LogHandler {
            let captured: Captured
            var metadata: Logger.Metadata = [:]
            var logLevel: Logger.Level = .info
            subscript(metadataKey key: String) -> Logger.Metadata.Value? {
                get { metadata[key] }
                set { metadata[key] = newValue }
            }
            func log(event: LogEvent) {
                let line = Line(level: event.level, message: "\(event.message)", metadata: (event.metadata ?? [:]).mapValues { "\($0)" })
                captured.lines.withLock { $0.append(line) }
            }
        }
    }

    @Test func anOutageIsThreeLinesHoweverManyProbesFail() {
        let captured = Captured()
        let registry = SourceRegistry(sources: [a], logger: captured.logger)
        registry.record(probe(nil, at: 0))
        for second in 1...50 { registry.record(probe(unavailable, at: second)) }
        // The breaker's refusals are no probes and no news.
        for second in 51...60 { registry.record(probe(breakerOpen, at: second)) }
        for second in 61...70 { registry.record(probe(refused, at: second)) }
        registry.record(probe(nil, at: 130))
        registry.record(probe(nil, at: 131))

        let lines = captured.lines.withLock { $0 }
        #expect(lines.map(\.message) == ["source down", "source still down, failing differently", "source up again"])
        #expect(lines.map(\.level) == [.warning, .warning, .info])
        #expect(lines[0].metadata["source"] == "a")
        #expect(lines[0].metadata["reason"] == "http_503")
        #expect(lines[0].metadata["http_status"] == "503")
        #expect(lines[0].metadata["message"]?.contains("The server said: maintenance until 10:00") == true)
        #expect(lines[0].metadata["down_for"] == nil)
        #expect(lines[1].metadata["reason"] == "connection_refused")
        #expect(lines[1].metadata["previous_reason"] == "http_503")
        #expect(lines[1].metadata["down_for"] == "1m")
        #expect(lines[1].metadata["failed_probes"] == "51")
        #expect(lines[2].metadata["down_for"] == "2m9s")
        #expect(lines[2].metadata["failed_probes"] == "60")
        #expect(lines[2].metadata["last_reason"] == "connection_refused")
    }

    /// While Lookout itself is offline every source fails for a reason of its own: nothing is
    /// announced, and a source still down once it is back online is announced then, with the
    /// failures it has had since.
    @Test func failuresWhileOfflineAreAnnouncedOnlyOnceOnlineAgain() {
        let captured = Captured()
        let registry = SourceRegistry(sources: [a], logger: captured.logger)
        for second in 1...5 { registry.record(probe(refused, at: second, offline: true)) }
        #expect(captured.lines.withLock { $0.isEmpty })
        registry.record(probe(unavailable, at: 6))
        registry.record(probe(nil, at: 7))
        // Down and up again while offline: never said, so no "up again" either.
        registry.record(probe(refused, at: 8, offline: true))
        registry.record(probe(nil, at: 9))

        let lines = captured.lines.withLock { $0 }
        #expect(lines.map(\.message) == ["source down", "source up again"])
        #expect(lines[0].metadata["failed_probes"] == "6")
        #expect(lines[0].metadata["down_for"] == "5s")
        #expect(lines[0].metadata["reason"] == "http_503")
        #expect(lines[1].metadata["down_for"] == "6s")
    }

    /// An offline spell in the middle of an outage is not the upstream's doing: the cause stays
    /// its 503, so the 503 after it is no change, and the outage ends naming the 503.
    @Test func anOfflineSpellDoesNotChangeTheCause() {
        let (registry, lines) = registry()
        registry.record(probe(unavailable, at: 1))
        for second in 2...4 { registry.record(probe(refused, at: second, offline: true)) }
        registry.record(probe(unavailable, at: 5))
        registry.record(probe(nil, at: 6))
        #expect(lines().map(\.message) == ["source down", "source up again"])
        #expect(lines().last?.metadata["last_reason"] == "http_503")
        #expect(lines().last?.metadata["failed_probes"] == "5")
    }

    /// A cause is announced once per outage: one that alternates between two reasons is two
    /// lines, not one a probe.
    @Test func alternatingCausesAreAnnouncedOnce() {
        let (registry, lines) = registry()
        for second in 1...40 { registry.record(probe(second % 2 == 0 ? unavailable : refused, at: second)) }
        #expect(lines().map(\.message) == ["source down", "source still down, failing differently"])
        #expect(lines().map { $0.metadata["reason"] } == ["connection_refused", "http_503"])
    }

    /// A planned outage is no warning: told at info, marked as maintenance.
    @Test func anOutageInMaintenanceIsToldAtInfo() {
        let (registry, lines) = registry()
        registry.record(probe(unavailable, at: 1, maintenance: true))
        registry.record(probe(refused, at: 2))
        #expect(lines().map(\.level) == [.info, .warning])
        #expect(lines().map { $0.metadata["maintenance"] } == ["true", nil])
    }

    /// A source removed from the config mid-outage gets a last line, so a reader pairing "down"
    /// with its end is not left with an open outage; one that was up goes quietly.
    @Test func aSourceRemovedWhileDownGetsALastLine() {
        let (registry, lines) = registry()
        registry.apply([a, b])
        registry.record(probe(unavailable, at: 1))
        registry.record(probe(unavailable, at: 2))
        registry.record(ProbeResult(source: "b", timestampMs: 1_001_000, ok: true))
        registry.apply([])
        #expect(lines().map(\.message) == ["source down", "source removed from the config while down"])
        #expect(lines().last?.metadata["source"] == "a")
        #expect(lines().last?.metadata["failed_probes"] == "2")
        #expect(lines().last?.metadata["last_reason"] == "http_503")
    }

    /// A network failure is told at its second probe in a row: a blip of one probe tells
    /// nothing, and neither does a network loss that Lookout then recognises as its own.
    @Test func aNetworkFailureIsToldAtItsSecondProbeInARow() {
        let (registry, lines) = registry()
        registry.record(probe(noRoute, at: 1))
        registry.record(probe(nil, at: 2))
        #expect(lines().isEmpty)
        // Lookout's network goes: one failure before the monitor knows, then offline, then back.
        registry.record(probe(noRoute, at: 3))
        for second in 4...6 { registry.record(probe(noRoute, at: second, offline: true)) }
        registry.record(probe(nil, at: 7))
        #expect(lines().isEmpty)
        // The upstream's own: told at the second failure, counted from the first.
        registry.record(probe(noRoute, at: 10))
        registry.record(probe(noRoute, at: 20))
        registry.record(probe(nil, at: 30))
        #expect(lines().map(\.message) == ["source down", "source up again"])
        #expect(lines().first?.metadata["reason"] == "network_unreachable")
        #expect(lines().first?.metadata["down_for"] == "10s")
        #expect(lines().first?.metadata["failed_probes"] == "2")
        #expect(lines().last?.metadata["down_for"] == "20s")
    }

    /// Within an outage too, a new cause that is a network failure waits for its second probe.
    @Test func anOutageTurningIntoANetworkFailureSaysSoAtItsSecondProbe() {
        let (registry, lines) = registry()
        registry.record(probe(unavailable, at: 1))
        registry.record(probe(noRoute, at: 2))
        registry.record(probe(unavailable, at: 3))
        #expect(lines().map(\.message) == ["source down"])
        registry.record(probe(noRoute, at: 4))
        registry.record(probe(noRoute, at: 5))
        #expect(lines().map(\.message) == ["source down", "source still down, failing differently"])
        // Not the held-back failure's own reason: the one told before.
        #expect(lines().last?.metadata["previous_reason"] == "http_503")
        #expect(lines().last?.metadata["failed_probes"] == "5")
    }

    /// After a restart an outage goes on where it was: shown at once with its last cause, told
    /// as if Lookout had not stopped (no second "down" for the same cause), and its end says how
    /// long the source was down and how many probes failed, before the restart included.
    @Test func anOutageRestoredAfterARestartGoesOn() throws {
        let (registry, lines) = registry()
        registry.restoreOutage(source: "a", downSinceMs: 1_000_000 - 600_000, failedProbes: 20, cause: probe(refused, at: -30))
        registry.restoreOutage(source: "unknown", downSinceMs: 0, failedProbes: 1, cause: probe(refused, at: -30))
        let restored = try #require(registry.snapshot(nowMs: 1_000_000).records.first?.incident)
        #expect(restored.cause.failure?.reason == "connection_refused")
        #expect(restored.failedProbes == 20)
        #expect(lines().isEmpty)
        // A call the breaker refused changes nothing.
        registry.record(probe(breakerOpen, at: 1))
        #expect(registry.snapshot(nowMs: 1_001_000).records.first?.incident == restored)
        registry.record(probe(refused, at: 3))
        #expect(lines().isEmpty)
        registry.record(probe(unavailable, at: 5))
        let incident = try #require(registry.snapshot(nowMs: 1_005_000).records.first?.incident)
        #expect(incident.downSinceMs == 1_000_000 - 600_000)
        registry.record(probe(nil, at: 10))
        #expect(lines().map(\.message) == ["source still down, failing differently", "source up again"])
        #expect(lines()[0].metadata["previous_reason"] == "connection_refused")
        #expect(lines()[0].metadata["down_for"] == "10m5s")
        #expect(lines()[0].metadata["failed_probes"] == "22")
        #expect(lines()[1].metadata["down_for"] == "10m10s")
    }

    /// A network failure of one probe was held back before the stop: told at its second.
    @Test func aRestoredNetworkFailureOfOneProbeWasNotTold() throws {
        let (registry, lines) = registry()
        registry.restoreOutage(source: "a", downSinceMs: 1_000_000 - 30_000, failedProbes: 1, cause: probe(noRoute, at: -30))
        registry.record(probe(noRoute, at: 0))
        #expect(lines().map(\.message) == ["source down"])
        #expect(lines().first?.metadata["failed_probes"] == "2")
    }

    @Test func aRestoredOutageThatEndedMeanwhileEndsAtTheFirstSuccess() throws {
        let (registry, lines) = registry()
        registry.restoreOutage(source: "a", downSinceMs: 1_000_000 - 600_000, failedProbes: 20, cause: probe(refused, at: -30))
        registry.record(probe(nil, at: 5))
        registry.record(probe(unavailable, at: 10))
        #expect(lines().map(\.message) == ["source up again", "source down"])
        #expect(lines()[0].metadata["down_for"] == "10m5s")
        #expect(lines()[0].metadata["failed_probes"] == "20")
        #expect(lines()[1].metadata["down_for"] == nil)
        #expect(try #require(registry.snapshot(nowMs: 1_010_000).records.first?.incident).downSinceMs == 1_010_000)
        // Nor does a restore reach a source probed since the start.
        registry.restoreOutage(source: "a", downSinceMs: 0, failedProbes: 5, cause: probe(refused, at: -30))
        registry.record(probe(nil, at: 11))
        registry.record(probe(unavailable, at: 12))
        #expect(try #require(registry.snapshot(nowMs: 1_012_000).records.first?.incident).downSinceMs == 1_012_000)
    }

    @Test func aSourceThatStaysUpLogsNothing() {
        let (registry, lines) = registry()
        for second in 1...100 { registry.record(probe(nil, at: second)) }
        #expect(lines().isEmpty)
    }
}
