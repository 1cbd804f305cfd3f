import Foundation
import Synchronization

/// A planned time when some sources may fail: no notifications for them, the page says
/// "Maintenance" with the note, and availability and SLO figures leave it out. One-off (start,
/// end) or recurring (weekdays, a local time of day, a duration, an IANA time zone — daylight
/// saving time included: "02:00 Europe/Berlin" is 02:00 on the wall clock all year).
package struct MaintenanceWindow: Sendable, Equatable {
    package enum Schedule: Sendable, Equatable {
        case once(startMs: Int64, endMs: Int64)
        /// `weekdays` as Calendar numbers (1 = Sunday … 7 = Saturday); `minuteOfDay` local.
        case recurring(weekdays: Set<Int>, minuteOfDay: Int, durationMs: Int64, timeZone: String)

        /// What the config and the admin API accept: a one-off window that ends after it
        /// starts; weekdays 1–7, a minute of the day, up to 7 days, a time zone this machine
        /// knows. A stored window is checked again (a damaged file may hold anything).
        package var isWellFormed: Bool {
            switch self {
            case .once(let startMs, let endMs):
                return startMs < endMs
            case .recurring(let weekdays, let minuteOfDay, let durationMs, let timeZone):
                return !weekdays.isEmpty && weekdays.allSatisfy((1...7).contains) && (0..<1440).contains(minuteOfDay)
                    && durationMs > 0 && durationMs <= 7 * 86_400_000 && TimeZone(identifier: timeZone) != nil
            }
        }
    }

    /// The config's name, or `api-ID` for a window added through the admin API.
    package var name: String
    /// Source names; with `matchers` empty too, the window covers every source.
    package var sources: [String] { didSet { named = Set(sources) } }
    /// `sources` as a set: every source is asked about, and a window may list thousands.
    private var named: Set<String>
    /// Source labels that must all match.
    package var matchers: [String: String]
    package var schedule: Schedule
    package var note: String
    /// The row id of a window added through the admin API.
    package var id: Int64?
    /// A recurring window added through the API recurs between these (ended early by DELETE).
    package var activeFromMs: Int64 = .min
    package var activeUntilMs: Int64 = .max

    package init(
        name: String, sources: [String] = [], matchers: [String: String] = [:], schedule: Schedule, note: String, id: Int64? = nil,
        activeFromMs: Int64 = .min, activeUntilMs: Int64 = .max
    ) {
        self.name = name
        self.sources = sources
        self.named = Set(sources)
        self.matchers = matchers
        self.schedule = schedule
        self.note = note
        self.id = id
        self.activeFromMs = activeFromMs
        self.activeUntilMs = activeUntilMs
    }

    package static let weekdayNames = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]

    /// `mon`, `Monday`… as a Calendar weekday (1 = Sunday); nil for anything else.
    package static func weekday(named name: String) -> Int? {
        guard name.count >= 3, let index = weekdayNames.firstIndex(of: String(name.lowercased().prefix(3))) else { return nil }
        let full = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"][index]
        return full.hasPrefix(name.lowercased()) ? index + 1 : nil
    }

    /// `HH:MM` as minutes after midnight; nil for anything else.
    package static func minuteOfDay(_ text: String) -> Int? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts.allSatisfy({ $0.count == 2 }), let hour = Int(parts[0]), let minute = Int(parts[1]),
            (0..<24).contains(hour), (0..<60).contains(minute)
        else { return nil }
        return hour * 60 + minute
    }

    package func covers(_ source: SourceConfig) -> Bool {
        if sources.isEmpty && matchers.isEmpty { return true }
        if named.contains(source.name) { return true }
        return !matchers.isEmpty && matchers.allSatisfy { source.labels[$0.key] == $0.value }
    }

    /// The occurrence in force at `nowMs` (start and end, in milliseconds since 1970), if any.
    package func occurrence(atMs nowMs: Int64) -> (startMs: Int64, endMs: Int64)? {
        guard activeFromMs <= nowMs, nowMs < activeUntilMs else { return nil }
        switch schedule {
        case .once(let start, let end):
            return start <= nowMs && nowMs < end ? (start, end) : nil
        case .recurring(_, _, let durationMs, _):
            // Occurrences that began on this local day or the days before it could still run.
            let daysBack = Int(min(7, durationMs / 86_400_000 + 1))
            for back in 0...daysBack {
                guard let (startMs, endMs) = occurrence(onLocalDayOffset: -back, from: nowMs) else { continue }
                if startMs <= nowMs && nowMs < endMs { return (startMs, endMs) }
            }
            return nil
        }
    }

    /// The next occurrence starting after `nowMs` and within `withinMs` of it, if any.
    package func next(afterMs nowMs: Int64, withinMs: Int64) -> (startMs: Int64, endMs: Int64)? {
        switch schedule {
        case .once(let start, let end):
            return start > nowMs && start - nowMs <= withinMs && start < activeUntilMs ? (start, end) : nil
        case .recurring:
            for ahead in 0...Int(min(31, withinMs / 86_400_000 + 1)) {
                guard let (startMs, endMs) = occurrence(onLocalDayOffset: ahead, from: nowMs) else { continue }
                if startMs > nowMs && startMs - nowMs <= withinMs && activeFromMs <= startMs && startMs < activeUntilMs { return (startMs, endMs) }
            }
            return nil
        }
    }

    /// A recurring window's occurrence on the local day `offset` days from `nowMs`'s, if that
    /// day is one of its weekdays.
    private func occurrence(onLocalDayOffset offset: Int, from nowMs: Int64) -> (startMs: Int64, endMs: Int64)? {
        guard case .recurring(let weekdays, let minuteOfDay, let durationMs, let zone) = schedule, let timeZone = TimeZone(identifier: zone) else {
            return nil
        }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let now = Date(timeIntervalSince1970: Double(nowMs) / 1000)
        guard let day = calendar.date(byAdding: .day, value: offset, to: now), weekdays.contains(calendar.component(.weekday, from: day)) else {
            return nil
        }
        var parts = calendar.dateComponents([.year, .month, .day], from: day)
        parts.hour = minuteOfDay / 60
        parts.minute = minuteOfDay % 60
        // A time that does not exist that day (the hour skipped in spring) is the first one
        // after it, as Calendar resolves it.
        guard let start = calendar.date(from: parts) else { return nil }
        let startMs = Int64(clamping: Int64((start.timeIntervalSince1970 * 1000).rounded()))
        return (startMs, startMs &+ durationMs)
    }
}

/// The maintenance in force now, per source: the config's windows and those added through the
/// admin API. Asked for every probe and evaluation, so it keeps the answer for a few seconds.
package final class MaintenanceCalendar: Sendable {
    /// What a source in maintenance shows.
    package struct Entry: Sendable, Equatable {
        package var window: String
        package var note: String
        package var endsAtMs: Int64
    }

    private struct State {
        var configured: [MaintenanceWindow] = []
        var added: [MaintenanceWindow] = []
        /// The `reload` whose read `added` holds.
        var addedTicket: UInt64 = 0
        var sources: [SourceConfig] = []
        /// Sources whose vendor announces maintenance in progress on what they watch, and asked
        /// that it count (`vendor_status.respect_maintenance`).
        var vendor: [String: Entry] = [:]
        var cache: (atMs: Int64, entries: [String: Entry])?
    }

    private let state = Mutex(State())
    /// How long an answer is reused.
    static let cacheMs: Int64 = 5_000

    package init() {}

    package func set(configured: [MaintenanceWindow], sources: [SourceConfig]) {
        state.withLock {
            $0.configured = configured
            $0.sources = sources
            $0.cache = nil
        }
    }

    /// The windows added through the admin API (kept in SQLite by the caller).
    package func set(added: [MaintenanceWindow]) {
        state.withLock {
            $0.added = added
            $0.cache = nil
        }
    }

    /// Takes the added windows from `read` (the store, after a change was written), unless a
    /// reload that began later has already been kept: each change to the store is followed by
    /// its own `reload`, and the last one to begin read after every change was written, so what
    /// is kept in the end is what is stored. Without it, a DELETE racing POSTs could leave the
    /// ended window in force.
    package func reload(from read: () throws -> [MaintenanceWindow]) rethrows {
        let ticket = reloads.add(1, ordering: .sequentiallyConsistent).newValue
        let added = try read()
        state.withLock { state in
            guard ticket > state.addedTicket else { return }
            state.added = added
            state.addedTicket = ticket
            state.cache = nil
        }
    }

    private let reloads = Atomic<UInt64>(0)

    package var windows: [MaintenanceWindow] { state.withLock { $0.configured + $0.added } }

    /// The sources a vendor's maintenance in progress covers now (replacing the last list).
    package func set(vendor entries: [String: Entry]) {
        state.withLock { state in
            guard state.vendor != entries else { return }
            state.vendor = entries
            state.cache = nil
        }
    }

    /// The sources in maintenance at `nowMs`, with the window that covers each.
    package func entries(atMs nowMs: Int64) -> [String: Entry] {
        state.withLock { state in
            if let cache = state.cache, cache.atMs <= nowMs, nowMs - cache.atMs < MaintenanceCalendar.cacheMs { return cache.entries }
            var entries: [String: Entry] = [:]
            for window in state.configured + state.added {
                guard let (_, end) = window.occurrence(atMs: nowMs) else { continue }
                for source in state.sources where entries[source.name] == nil && window.covers(source) {
                    entries[source.name] = Entry(window: window.name, note: window.note, endsAtMs: end)
                }
            }
            for (name, entry) in state.vendor where entries[name] == nil && entry.endsAtMs > nowMs { entries[name] = entry }
            state.cache = (nowMs, entries)
            return entries
        }
    }
}
