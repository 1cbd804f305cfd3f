import GRDB
import LookoutStore
import Testing

/// SQLite's memory has one ceiling for every connection of the pool (the soft heap limit,
/// process-wide), and its use is measured for `lookout_db_memory_bytes`.
@Suite("database memory")
struct DatabaseMemoryTests {
    @Test func openingTheDatabaseSetsSQLitesCeiling() throws {
        let database = try LookoutDatabase(path: ":memory:")
        let limit = try database.writer.read { db in try Int.fetchOne(db, sql: "PRAGMA soft_heap_limit") }
        #expect(limit == LookoutDatabase.memoryCeilingBytes)
        #expect(LookoutDatabase.memoryUsedBytes > 0)
    }
}
