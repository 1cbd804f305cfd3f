import Foundation
import GRDB
import LookoutCore

/// The `rdap_bootstrap` table: the one copy of IANA's RDAP bootstrap file Lookout last fetched.
package struct RDAPStore: Sendable {
    let database: LookoutDatabase

    package init(database: LookoutDatabase) {
        self.database = database
    }

    package func save(_ bootstrap: DomainWatch.SavedBootstrap) throws {
        try database.writer.write { db in
            try db.execute(
                sql: "INSERT OR REPLACE INTO rdap_bootstrap (id, fetched_at_ms, body) VALUES (1, ?, ?)",
                arguments: [bootstrap.fetchedAtMs, Data(bootstrap.bytes)])
        }
    }

    /// The kept copy, or nil; a row of the wrong shape (a damaged file) is none.
    package func load() throws -> DomainWatch.SavedBootstrap? {
        try database.writer.read { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT fetched_at_ms, body FROM rdap_bootstrap WHERE id = 1"),
                let fetched = row.integer("fetched_at_ms"), let body = row["body"] as Data?
            else { return nil }
            return DomainWatch.SavedBootstrap(bytes: Array(body), fetchedAtMs: fetched)
        }
    }
}
