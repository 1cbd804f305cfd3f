import LookoutCore
import LookoutStore

/// The 90 UTC days the bars show, oldest first, labelled once per render (not per source).
struct DayAxis {
    static let count = 90
    let startsMs: [Int64]
    let labels: [String]
    /// `<i title="27 Aug: ` and `<i class="X" title="27 Aug: ` per day, as bytes: a page for
    /// 1,000 sources writes 90,000 of them.
    let plainPrefixes: [[UInt8]]

    /// A maintenance occurrence that began on day `day`, for the sources its window covers.
    struct Maintenance {
        var day: Int
        var window: MaintenanceWindow
        var text: String
    }

    /// The occurrences of `windows` that began in the 90 days (a window of the admin API that
    /// has ended is no longer known).
    func maintenance(_ windows: [MaintenanceWindow]) -> [Maintenance] {
        var found: [Maintenance] = []
        for window in windows {
            for (index, start) in startsMs.enumerated() {
                guard let (from, to) = window.next(afterMs: start - 1, withinMs: HealthWindow.day - 1) else { continue }
                let note = window.note.isEmpty ? window.name : window.note
                found.append(Maintenance(day: index, window: window, text: "maintenance \(Timestamp.clock(from).dropLast(4))–\(Timestamp.clock(to)): \(note)"))
            }
        }
        return found
    }

    init(nowMs: Int64) {
        let today = HealthWindow.floor(nowMs, to: HealthWindow.day)
        startsMs = (0..<DayAxis.count).map { today - Int64(DayAxis.count - 1 - $0) * HealthWindow.day }
        labels = startsMs.map { Timestamp.day($0) }
        plainPrefixes = labels.map { Array("<i title=\"\($0.split(separator: " ").prefix(2).joined(separator: " ")): ".utf8) }
    }
}

/// Inline SVG and bar charts: no scripts, no external assets.
extension StatusPage {
    /// One segment per day, coloured by availability, its title saying the day, the figure and
    /// `notes` (the alerts that fired, maintenance; already escaped); days without probes say
    /// "no data".
    static func uptimeBars(_ days: [BucketCounts?], notes: [Int: String] = [:], axis: DayAxis) -> String {
        var out: [UInt8] = []
        uptimeBars(days, notes: notes, axis: axis, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    static func uptimeBars(_ days: [BucketCounts?], notes: [Int: String], axis: DayAxis, into out: inout [UInt8]) {
        // The summary goes before the segments but is known after them: written into a gap.
        let opening = out.count
        var probes: UInt64 = 0
        var failures: UInt64 = 0
        var firstDay: Int?
        for (index, day) in days.enumerated() {
            // An ok day is a plain <i> (green by default); the others carry their grade.
            let availability = day.flatMap(HealthWindow.availability)
            var grade: String?
            if let day, let availability {
                if firstDay == nil { firstDay = index }
                probes += UInt64(day.probes)
                failures += UInt64(day.failures)
                grade = availability >= 0.999 ? nil : availability >= 0.99 ? "w" : availability >= 0.95 ? "m" : "d"
            } else {
                grade = "n"
            }
            if let grade {
                out.append(contentsOf: "<i class=\"\(grade)\" title=\"".utf8)
                out.append(contentsOf: axis.plainPrefixes[index].dropFirst(10))
            } else {
                out.append(contentsOf: axis.plainPrefixes[index])
            }
            if let day, let availability {
                out.append(contentsOf: percent(availability).utf8)
                if day.failures > 0 { out.append(contentsOf: " up (\(day.failures) of \(day.probes) probes failed)".utf8) }
            } else {
                out.append(contentsOf: "no data".utf8)
            }
            if let note = notes[index] {
                out.append(contentsOf: " · ".utf8)
                out.append(contentsOf: note.utf8)
            }
            out.append(contentsOf: "\"></i>".utf8)
        }
        let overall = HealthWindow.availability(probes: probes, failures: failures).map { percent($0) + " up" } ?? "no data yet"
        let span = firstDay.map { DayAxis.count - $0 } ?? 0
        out.insert(contentsOf: "<div class=\"bars\" role=\"img\" aria-label=\"Availability per day over 90 days: \(overall)\">".utf8, at: opening)
        out.append(
            contentsOf:
                "</div><div class=\"axis\"><span>90 days ago</span><span>\(overall)\(span > 0 && span < DayAxis.count ? " over \(span) day\(span == 1 ? "" : "s")" : "")</span><span>today</span></div>"
                .utf8)
    }

    /// What a source's day segments add to their titles: the alerts that fired that day and the
    /// maintenance that covered it.
    static func dayNotes(_ source: SourceConfig, episodes: [AlertStore.Episode], maintenance: [DayAxis.Maintenance], axis: DayAxis) -> [Int: String] {
        var notes: [Int: [String]] = [:]
        if !episodes.isEmpty {
            for index in 0..<DayAxis.count {
                let start = axis.startsMs[index]
                let end = start + HealthWindow.day
                let those = episodes.filter { $0.startedAtMs < end && ($0.resolvedAtMs ?? Int64.max) > start }
                guard !those.isEmpty else { continue }
                let names = Set(those.map(\.rule)).sorted().joined(separator: ", ")
                notes[index, default: []].append("\(those.count) alert\(those.count == 1 ? "" : "s"): \(names)")
            }
        }
        for entry in maintenance where entry.window.covers(source) {
            notes[entry.day, default: []].append(entry.text)
        }
        return notes.mapValues { HTML.escape($0.joined(separator: " · ")) }
    }
    /// p50 and p95 per hour over the last 24 hours, with the scale and the hours on the axes.
    /// `latest`: the p50 and p95 the label gives as the latest, the row's (the last 64 attempts);
    /// nil: the newest hour's, estimated from its buckets.
    static func responseChart(_ hours: [[Double]?], latest recent: [Double]? = nil) -> String {
        let values = hours.compactMap { $0 }
        guard !values.isEmpty else { return "<p class=\"rt-none\">Response time: no probes in the last 24 hours</p>" }
        let peak = values.map { $0[1] }.max() ?? 0
        let top = niceCeiling(peak)
        let width = 240.0
        let height = 60.0
        let left = 40.0
        let step = (width - left) / Double(max(1, hours.count - 1))
        func path(_ which: Int) -> String {
            var d: [UInt8] = []
            for (index, hour) in hours.enumerated() {
                guard let hour else { continue }
                let x = left + Double(index) * step
                let y = height - 2 - min(1, hour[which] / top) * (height - 4)
                let joined = index > 0 && hours[index - 1] != nil
                let alone = !joined && (index + 1 >= hours.count || hours[index + 1] == nil)
                // An hour alone (the first after a start, one between gaps) is a short dash, not
                // an invisible point.
                for (letter, at) in alone ? [("M", max(left, x - 4)), ("L", x)] : [(joined ? "L" : "M", x)] {
                    d.append(contentsOf: letter.utf8)
                    appendTenths(at, to: &d)
                    d.append(UInt8(ascii: " "))
                    appendTenths(y, to: &d)
                    d.append(UInt8(ascii: " "))
                }
            }
            return String(decoding: d, as: UTF8.self)
        }
        let latest = recent ?? values[values.count - 1]
        let label =
            "Response time per hour over the last 24 hours: latest p50 \(milliseconds(latest[0])), p95 \(milliseconds(latest[1])); peak p95 \(milliseconds(peak))"
        var svg = "<svg class=\"rt\" viewBox=\"0 0 \(Int(width)) \(Int(height + 12))\" role=\"img\" aria-label=\"\(label)\">"
        svg += "<text x=\"\(Int(left - 4))\" y=\"8\" text-anchor=\"end\">\(milliseconds(top))</text>"
        svg += "<text x=\"\(Int(left - 4))\" y=\"\(Int(height))\" text-anchor=\"end\">0</text>"
        svg += "<line class=\"axis\" x1=\"\(Int(left))\" y1=\"2\" x2=\"\(Int(left))\" y2=\"\(Int(height - 2))\"/>"
        svg += "<line class=\"axis\" x1=\"\(Int(left))\" y1=\"\(Int(height - 2))\" x2=\"\(Int(width))\" y2=\"\(Int(height - 2))\"/>"
        svg += "<path class=\"p95\" d=\"\(path(1))\"/><path class=\"p50\" d=\"\(path(0))\"/>"
        svg += "<text x=\"\(Int(left))\" y=\"\(Int(height + 11))\">24 h ago</text>"
        svg += "<text x=\"\(Int(width))\" y=\"\(Int(height + 11))\" text-anchor=\"end\">now</text></svg>"
        return "<figure class=\"rt\">" + svg + "<figcaption><span class=\"k50\">p50</span> <span class=\"k95\">p95</span> response time</figcaption></figure>"
    }

    /// 1, 2 or 5 times a power of ten at or above `value` (seconds), for an axis top.
    static func niceCeiling(_ value: Double) -> Double {
        guard value > 0, value.isFinite else { return 0.001 }
        var scale = 0.001
        while scale * 10 <= value { scale *= 10 }
        for factor in [1.0, 2, 5, 10] where scale * factor >= value { return scale * factor }
        return scale * 10
    }

    /// An inline SVG of the last hour's error rate per minute, drawn over the minutes that have
    /// probes (so the first minutes after a start fill the width); gaps where nothing was probed.
    static func sparkline(_ all: [Double?]) -> String {
        let first = all.firstIndex { $0 != nil } ?? all.count
        let rates = all[first...]
        let width = 120.0
        let height = 24.0
        let step = width / Double(max(1, rates.count - 1))
        // Built as bytes: 120 numbers per row, and String appends cost more than the numbers.
        var path: [UInt8] = []
        path.reserveCapacity(rates.count * 12)
        var drawing = false
        for (offset, rate) in rates.enumerated() {
            guard let rate else {
                drawing = false
                continue
            }
            let y = height - 1 - min(1, max(0, rate)) * (height - 2)
            // A single minute is a level line across, not a dot.
            for x in rates.count == 1 ? [0, width] : [Double(offset) * step] {
                path.append(drawing ? UInt8(ascii: "L") : UInt8(ascii: "M"))
                appendTenths(x, to: &path)
                path.append(UInt8(ascii: " "))
                appendTenths(y, to: &path)
                path.append(UInt8(ascii: " "))
                drawing = true
            }
        }
        let worst = rates.compactMap { $0 }.max() ?? 0
        let minutes = rates.count
        return
            "<svg class=\"spark\(worst == 0 ? " zero" : "")\" width=\"120\" height=\"24\" viewBox=\"0 0 120 24\" role=\"img\" aria-label=\"error rate over the last \(minutes) minute\(minutes == 1 ? "" : "s"), at most \(Int((worst * 100).rounded()))%\"><path d=\"\(String(decoding: path, as: UTF8.self))\"/></svg>"
    }

    /// A non-negative coordinate with one decimal, as ASCII digits.
    static func appendTenths(_ value: Double, to out: inout [UInt8]) {
        let tenths = Int(max(0, value) * 10 + 0.5)
        var whole = tenths / 10
        var digits = InlineArray<20, UInt8>(repeating: 0)
        var count = 0
        repeat {
            digits[count] = UInt8(48 + whole % 10)
            whole /= 10
            count += 1
        } while whole > 0
        for index in stride(from: count - 1, through: 0, by: -1) { out.append(digits[index]) }
        out.append(UInt8(ascii: "."))
        out.append(UInt8(48 + tenths % 10))
    }

    static func milliseconds(_ seconds: Double) -> String {
        seconds < 1 ? fixed(seconds * 1000, 0) + " ms" : fixed(seconds, 2) + " s"
    }

    /// An availability as people read it: `100%`, `99.95%`, `87.3%`; never rounded up to 100.
    static func percent(_ ratio: Double) -> String {
        guard ratio < 1 else { return "100%" }
        let hundredths = (max(0, ratio) * 10_000).rounded(.down) / 100
        return fixed(hundredths, hundredths >= 99 ? 2 : 1) + "%"
    }

    /// `value` with `places` decimals, without Foundation's slow `String(format:)`.
    static func fixed(_ value: Double, _ places: Int) -> String {
        guard value.isFinite else { return "–" }
        var scale: Int64 = 1
        for _ in 0..<places { scale *= 10 }
        let scaled = Int64((abs(value) * Double(scale)).rounded())
        var text = (value < 0 && scaled != 0 ? "-" : "") + String(scaled / scale)
        if places > 0 {
            let fraction = String(scaled % scale)
            text += "." + String(repeating: "0", count: places - fraction.count) + fraction
        }
        return text
    }

    /// A relative time with the absolute one for machines and on hover: `<time>4m</time>`.
    static func time(_ text: String, atMs: Int64) -> String {
        let absolute = HTML.escape(Timestamp.rfc3339(atMs))
        return "<time datetime=\"\(absolute)\" title=\"\(absolute)\">\(HTML.escape(text))</time>"
    }
}
