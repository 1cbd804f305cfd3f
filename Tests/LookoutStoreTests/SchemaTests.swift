import GRDB
import LookoutStore
import Testing

/// A new database is made in one step from `LookoutDatabase.currentSchema`, any other through
/// the migrations it has not had: the two must leave nothing SQLite keeps different.
@Suite("schema")
struct SchemaTests {
    /// Every object's SQL, then every table's rows, as lines of text.
    static func contents(_ writer: any DatabaseWriter) throws -> [String] {
        try writer.read { db in
            var lines = try Row.fetchAll(db, sql: "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name").map(\.description)
            for table in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name") {
                lines += try Row.fetchAll(db, sql: "SELECT * FROM \(table.quotedDatabaseIdentifier) ORDER BY 1").map { "\(table): \($0)" }
            }
            return lines
        }
    }

    /// `currentSchema` as it should read for the database `writer` holds: each object's SQL in the
    /// order it was made, each table with rows followed by one `INSERT` of them.
    static func schemaText(_ writer: any DatabaseWriter) throws -> String {
        try writer.read { db in
            var statements: [String] = []
            let objects = try Row.fetchAll(
                db, sql: "SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL AND name != 'sqlite_sequence' ORDER BY rowid")
            for object in objects {
                let name: String = object["name"]
                statements.append(object["sql"] + ";")
                guard object["type"] as String == "table", name != "grdb_migrations" else { continue }
                let columns = try Row.fetchAll(db, sql: "PRAGMA table_info(\(name.quotedDatabaseIdentifier))").map { row in
                    "quote(\((row["name"] as String).quotedDatabaseIdentifier))"
                }
                let values = try String.fetchAll(
                    db, sql: "SELECT '(' || \(columns.joined(separator: " || ', ' || ")) || ')' FROM \(name.quotedDatabaseIdentifier) ORDER BY 1")
                if !values.isEmpty { statements.append("INSERT INTO \(name) VALUES \(values.joined(separator: ", "));") }
            }
            return statements.joined(separator: "\n")
        }
    }

    static func migrated(upTo identifier: String? = nil) throws -> DatabaseQueue {
        let queue = try DatabaseQueue()
        if let identifier { try LookoutDatabase.migrator.migrate(queue, upTo: identifier) } else { try LookoutDatabase.migrator.migrate(queue) }
        return queue
    }

    @Test func aNewDatabaseIsWhatTheMigrationsMake() throws {
        let migrated = try Self.migrated()
        let made = try DatabaseQueue()
        #expect(try LookoutDatabase.prepareSchema(made) == .madeFromText)
        #expect(
            LookoutDatabase.currentSchemaCovers == LookoutDatabase.migrator.migrations.last,
            "a migration was added: print the text below into currentSchema and name it in currentSchemaCovers")
        let expected = try Self.contents(migrated)
        let actual = try Self.contents(made)
        let text = try Self.schemaText(migrated)
        #expect(
            LookoutDatabase.currentSchema == text,
            "LookoutDatabase.currentSchema (Schema+Current.swift) is not what the migrations make; it should read:\n\(text)")
        #expect(actual == expected)
        #expect(try made.read { db in try LookoutDatabase.migrator.hasCompletedMigrations(db) })
        // Made twice from the same text, and printed back, the schema reads the same.
        #expect(try Self.schemaText(made) == text)
    }

    /// A database from an older Lookout is upgraded through the migrations it lacks, never
    /// remade: its rows stay.
    @Test func anOlderDatabaseTakesOnlyTheMigrationsItLacks() throws {
        let older = try Self.migrated(upTo: "v15: sla outages")
        try older.write { db in try db.execute(sql: "INSERT INTO sources (name, first_seen_ms) VALUES ('kept', 1)") }
        #expect(try LookoutDatabase.prepareSchema(older) == .migrated)
        let expected = try Self.migrated()
        try expected.write { db in try db.execute(sql: "INSERT INTO sources (name, first_seen_ms) VALUES ('kept', 1)") }
        #expect(try Self.contents(older) == Self.contents(expected))
    }

    /// A file someone else's tables are in is not taken for a new one: the migrations run over it
    /// as they always did, and its table stays.
    @Test func aDatabaseWithOtherTablesIsMigratedNotRemade() throws {
        let queue = try DatabaseQueue()
        try queue.write { db in try db.execute(sql: "CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('mine')") }
        #expect(try LookoutDatabase.prepareSchema(queue) == .migrated)
        #expect(try queue.read { db in try String.fetchAll(db, sql: "SELECT body FROM notes") } == ["mine"])
        #expect(try queue.read { db in try LookoutDatabase.migrator.hasCompletedMigrations(db) })
    }

    /// A migration the text does not cover yet (added, the text not printed again) still reaches
    /// a new database, after the text; one the text does not know at all leaves it all to the
    /// migrator.
    @Test func aMigrationAfterTheTextRunsOnANewDatabase() throws {
        var migrator = LookoutDatabase.migrator
        migrator.registerMigration("v99: later") { db in try db.execute(sql: "CREATE TABLE later (x INTEGER)") }
        let queue = try DatabaseQueue()
        let how = try LookoutDatabase.prepareSchema(
            queue, migrator: migrator, schema: LookoutDatabase.currentSchema, covering: LookoutDatabase.currentSchemaCovers)
        #expect(how == .madeFromText)
        #expect(try queue.read { db in try db.tableExists("later") && migrator.hasCompletedMigrations(db) })
        let unknown = try DatabaseQueue()
        let whole = try LookoutDatabase.prepareSchema(unknown, migrator: migrator, schema: "CREATE TABLE wrong (x)", covering: "v0: none")
        #expect(whole == .migrated)
        #expect(try unknown.read { db in try !db.tableExists("wrong") && db.tableExists("later") && migrator.hasCompletedMigrations(db) })
    }
}
