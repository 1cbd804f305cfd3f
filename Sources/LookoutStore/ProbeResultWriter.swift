import Foundation
import GRDB
import LookoutCore
import Logging
import Synchronization

/// Queues probe results and writes them in batches, one transaction a second (or sooner when
/// many are waiting), so the prober never waits for the disk.
public final class ProbeResultWriter: ProbeResultSink {
    private let database: LookoutDatabase
    private let pending = Mutex<[ProbeResult]>([])
    private let logger: Logger
    static let batchLimit = 1000

    public init(database: LookoutDatabase, logger: Logger) {
        self.database = database
        self.logger = logger
    }

    public func record(_ result: ProbeResult) {
        pending.withLock { $0.append(result) }
    }

    /// Flushes every second until cancelled, then once more.
    public func run() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(1))
            flush()
        }
        flush()
    }

    /// Writes everything queued so far; on failure the rows stay queued for the next try.
    public func flush() {
        let batch = pending.withLock { pending -> [ProbeResult] in
            defer { pending.removeAll() }
            return pending
        }
        guard !batch.isEmpty else { return }
        do {
            try database.writer.write { db in
                for result in batch { try ProbeResultWriter.insert(result, db) }
            }
        } catch {
            logger.error("cannot write probe results", metadata: ["error": "\(error)", "rows": "\(batch.count)"])
            pending.withLock { $0.insert(contentsOf: batch, at: 0) }
        }
    }

    static func insert(_ result: ProbeResult, _ db: Database) throws {
        let statement = try db.cachedStatement(
            sql: """
                INSERT INTO probe_results (ts_ms, source, ok, category, reason, http_status, attempts, duration_ms, bytes, message)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """)
        try statement.execute(
            arguments: [
                result.timestampMs, result.source, result.ok, result.failure?.category.rawValue, result.failure?.reason,
                result.httpStatus, result.attempts, result.durationSeconds * 1000, result.bytes, result.message,
            ])
    }

    /// How many rows are waiting to be written.
    public var pendingCount: Int { pending.withLock { $0.count } }
}
