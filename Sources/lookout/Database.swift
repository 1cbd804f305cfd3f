import ArgumentParser
import Foundation
import LookoutCore
import LookoutService
import LookoutStore

struct DatabaseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "db", abstract: "Maintains the SQLite database.", subcommands: [Prune.self, Backup.self, Check.self])

    struct Backup: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "backup",
            abstract: "Copies the database to a new file, consistently (safe while serve runs; a plain cp misses the WAL).")

        @Option(help: "The SQLite database.")
        var db: String

        @Option(help: "The new file (must not exist).")
        var to: String

        func run() async throws {
            do {
                let size = try DatabaseMaintenance.backup(db, to: to)
                print("\(db): backed up to \(to) (\(size / 1024) KiB, integrity check ok)")
            } catch {
                printError("lookout: \(error)")
                throw ExitCode(1)
            }
        }
    }

    struct Check: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "check",
            abstract: "Runs SQLite's full integrity check (safe while serve runs); exit 0 when sound, 1 when not.")

        @Option(help: "The SQLite database.")
        var db: String

        func run() async throws {
            do {
                let problems = try DatabaseMaintenance.check(db)
                guard problems.isEmpty else {
                    printError("lookout: \(db) is damaged (integrity_check):")
                    for problem in problems { printError("  \(problem)") }
                    throw ExitCode(1)
                }
                print("\(db): ok (integrity_check)")
            } catch let exit as ExitCode {
                throw exit
            } catch {
                printError("lookout: \(error)")
                throw ExitCode(1)
            }
        }
    }

    struct Prune: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "prune",
            abstract: "Deletes rows older than a duration, in small chunks (safe while serve runs).")

        @Option(help: "The SQLite database.")
        var db: String

        @Option(help: "Delete rows older than this, e.g. 30d.")
        var olderThan: String

        @Option(help: "Raw probe_results older than this are deleted too (default: --older-than).")
        var rawOlderThan: String?

        @Option(help: "The config, for its rollup_retention (without it the rollup tiers are not pruned).")
        var config: String?

        func validate() throws {
            guard ConfigValues.duration(olderThan) != nil else {
                throw ValidationError("--older-than \"\(olderThan)\" is not a duration (use 24h, 7d, 30d)")
            }
            if let rawOlderThan, ConfigValues.duration(rawOlderThan) == nil {
                throw ValidationError("--raw-older-than \"\(rawOlderThan)\" is not a duration")
            }
            guard FileManager.default.fileExists(atPath: db) else { throw ValidationError("\(db) does not exist") }
        }

        func run() async throws {
            let database: LookoutDatabase
            do {
                database = try LookoutDatabase(path: db)
            } catch {
                printError("lookout: \(error)")
                throw ExitCode(1)
            }
            let retention = ConfigValues.duration(olderThan)!
            let raw = rawOlderThan.flatMap(ConfigValues.duration) ?? retention
            // The rollup tiers are kept as long as the config says: without it, they are rolled
            // up but not pruned.
            var tiers: RollupRetention?
            var claimKeep = SLAStore.defaultKeep
            if let config {
                do {
                    let loaded = try LookoutApp.loadConfig(path: config)
                    tiers = loaded.rollupRetention
                    claimKeep = SLAStore.keep(for: loaded.sources)
                } catch {
                    printError("lookout: \(error)")
                    throw ExitCode(1)
                }
            }
            let deleted = try Retention(retention: retention, rawRetention: raw, tiers: tiers, claimKeep: claimKeep)
                .prune(database, nowMs: Timestamp.nowMs())
            for (table, count) in deleted.sorted(by: { $0.key < $1.key }) where count > 0 {
                print("\(table): \(count) rows deleted")
            }
            print("\(db): pruned \(deleted.values.reduce(0, +)) rows older than \(olderThan)")
        }
    }
}
