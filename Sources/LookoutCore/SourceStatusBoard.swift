import Synchronization

/// The latest known state of every source, kept in memory for `/metrics` and the status page.
public final class SourceStatusBoard: ProbeResultSink {
    /// What the board knows of one source.
    public struct Entry: Sendable, Equatable {
        public var source: SourceConfig
        public var last: ProbeResult?
        public var lastSuccessMs: Int64?
        public var successes: UInt64 = 0
        public var failures: UInt64 = 0
        public var duration = Histogram()
    }

    private let entries: Mutex<[String: Entry]>
    private let order: [String]

    public init(sources: [SourceConfig]) {
        order = sources.map(\.name)
        entries = Mutex(Dictionary(uniqueKeysWithValues: sources.map { ($0.name, Entry(source: $0)) }))
    }

    public func record(_ result: ProbeResult) {
        entries.withLock { entries in
            guard var entry = entries[result.source] else { return }
            entry.last = result
            if result.ok {
                entry.successes += 1
                entry.lastSuccessMs = result.timestampMs
            } else {
                entry.failures += 1
            }
            entry.duration.observe(result.durationSeconds)
            entries[result.source] = entry
        }
    }

    /// Every source in config order.
    public func snapshot() -> [Entry] {
        let entries = entries.withLock { $0 }
        return order.compactMap { entries[$0] }
    }

    /// True once every source has been probed at least once.
    public var everySourceProbed: Bool {
        entries.withLock { $0.values.allSatisfy { $0.last != nil } }
    }
}
