import LookoutCore
import LookoutStore

/// The 90 UTC days the bars show, oldest first, labelled once per render (not per source).
struct DayAxis {
    static let count = 90
    let startsMs: [Int64]
    let labels: [String]
    /// Each day's title as its segments start it (`27 Aug: `), as bytes: a page for 1,000
    /// sources writes 90,000 of them.
    let titles: [[UInt8]]
    /// Each day's whole segment when it has no probes, and when all its probes passed, without
    /// a note: most segments of most pages, one copy each.
    let noDataSegments: [[UInt8]]
    let fullSegments: [[UInt8]]

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
        titles = labels.map { Array("\($0.split(separator: " ").prefix(2).joined(separator: " ")): ".utf8) }
        noDataSegments = titles.map { BarBytes.openings[BarBytes.noDataGrade] + $0 + BarBytes.noData + BarBytes.close }
        fullSegments = titles.map { title in
            var segment = BarBytes.openings[BarBytes.plain] + title
            StatusPage.appendPercent(1, to: &segment)
            return segment + BarBytes.close
        }
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
        for index in days.indices {
            // An ok day is a plain <i> (green by default); the others carry their grade. Written
            // as bytes from constant pieces: 90 segments a source, and a String interpolation
            // or conversion each cost more than the bytes (190 M instructions a page at 1,000).
            let day = days[index]
            let note = notes.isEmpty ? nil : notes[index]
            if note == nil {
                // No probes, or all passed: the day's whole segment, made once per render.
                guard let day, day.probes > 0 else {
                    out += axis.noDataSegments[index]
                    continue
                }
                if day.failures == 0 {
                    if firstDay == nil { firstDay = index }
                    probes += UInt64(day.probes)
                    out += axis.fullSegments[index]
                    continue
                }
            }
            let availability = day.flatMap(HealthWindow.availability)
            var grade: Int?
            if let day, let availability {
                if firstDay == nil { firstDay = index }
                probes += UInt64(day.probes)
                failures += UInt64(day.failures)
                grade = availability >= 0.999 ? nil : availability >= 0.99 ? 0 : availability >= 0.95 ? 1 : 2
            } else {
                grade = BarBytes.noDataGrade
            }
            out += BarBytes.openings[grade ?? BarBytes.plain]
            out += axis.titles[index]
            if let day, let availability {
                appendPercent(availability, to: &out)
                if day.failures > 0 {
                    out += BarBytes.upOpen
                    appendInteger(UInt64(day.failures), to: &out)
                    out += BarBytes.of
                    appendInteger(UInt64(day.probes), to: &out)
                    out += BarBytes.probesFailed
                }
            } else {
                out += BarBytes.noData
            }
            if let note {
                out += BarBytes.noteSeparator
                out += note.utf8
            }
            out += BarBytes.close
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
        var out: [UInt8] = []
        responseChart(hours, latest: recent, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// `responseChart`, written into `out`: constant markup as bytes made once, the numbers
    /// straight in (110 M instructions a page at 1,000 sources as String interpolations).
    static func responseChart(_ hours: [[Double]?], latest recent: [Double]?, into out: inout [UInt8]) {
        let values = hours.compactMap { $0 }
        guard !values.isEmpty else {
            out += ChartBytes.noProbes
            return
        }
        let peak = values.map { $0[1] }.max() ?? 0
        let top = niceCeiling(peak)
        let width = ChartBytes.width
        let height = ChartBytes.height
        let left = ChartBytes.left
        let step = (width - left) / Double(max(1, hours.count - 1))
        func path(_ which: Int) {
            for (index, hour) in hours.enumerated() {
                guard let hour else { continue }
                let x = left + Double(index) * step
                let y = height - 2 - min(1, hour[which] / top) * (height - 4)
                let joined = index > 0 && hours[index - 1] != nil
                let alone = !joined && (index + 1 >= hours.count || hours[index + 1] == nil)
                // An hour alone (the first after a start, one between gaps) is a short dash, not
                // an invisible point.
                if alone { point("M", max(left, x - 4), y) }
                point(alone || joined ? "L" : "M", x, y)
            }
        }
        func point(_ letter: Unicode.Scalar, _ x: Double, _ y: Double) { appendPathPoint(letter, x, y, to: &out) }
        let latest = recent ?? values[values.count - 1]
        out += ChartBytes.opening
        appendMilliseconds(latest[0], to: &out)
        out += ChartBytes.p95
        appendMilliseconds(latest[1], to: &out)
        out += ChartBytes.peak
        appendMilliseconds(peak, to: &out)
        out += ChartBytes.topLabel
        appendMilliseconds(top, to: &out)
        out += ChartBytes.axesAndP95
        path(1)
        out += ChartBytes.p50
        path(0)
        out += ChartBytes.closing
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
        var out: [UInt8] = []
        sparkline(all, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// `sparkline`, written into `out` (60 points a row; as Strings, with an array for each
    /// point's x, it was a sixth of a page).
    static func sparkline(_ all: [Double?], into out: inout [UInt8]) {
        let first = all.firstIndex { $0 != nil } ?? all.count
        let rates = all[first...]
        let width = 120.0
        let height = 24.0
        let step = width / Double(max(1, rates.count - 1))
        var worst: Double?
        // The highest rate; one that is not a number is drawn at zero and not named.
        for case let rate? in rates where !rate.isNaN && (worst.map { $0 < rate } ?? true) { worst = rate }
        let minutes = rates.count
        out += SparkBytes.opening
        if (worst ?? 0) == 0 { out += SparkBytes.zero }
        out += SparkBytes.label
        appendInteger(UInt64(minutes), to: &out)
        out += minutes == 1 ? SparkBytes.minute : SparkBytes.minutes
        // A rate is a ratio; anything else is held in range rather than trapping.
        let percent = ((worst ?? 0) * 100).rounded()
        let most = percent.isNaN ? 0 : min(max(percent, -1e15), 1e15)
        if most < 0 { out.append(UInt8(ascii: "-")) }
        appendInteger(UInt64(abs(most)), to: &out)
        out += SparkBytes.path
        var drawing = false
        func point(_ x: Double, _ y: Double) {
            appendPathPoint(drawing ? "L" : "M", x, y, to: &out)
            drawing = true
        }
        for (offset, rate) in rates.enumerated() {
            guard let rate else {
                drawing = false
                continue
            }
            let y = height - 1 - min(1, max(0, rate)) * (height - 2)
            // A single minute is a level line across, not a dot.
            if rates.count == 1 {
                point(0, y)
                point(width, y)
            } else {
                point(Double(offset) * step, y)
            }
        }
        out += SparkBytes.closing
    }
}

/// The constant pieces of the day segments, as bytes.
private enum BarBytes {
    /// `<i class="w" title="`, then "m", "d", "n" (no data), then a good day's `<i title="`
    /// (green by default).
    static let openings = ["w", "m", "d", "n"].map { Array("<i class=\"\($0)\" title=\"".utf8) } + [Array("<i title=\"".utf8)]
    static let noDataGrade = 3
    static let plain = 4
    static let upOpen = Array(" up (".utf8)
    static let of = Array(" of ".utf8)
    static let probesFailed = Array(" probes failed)".utf8)
    static let noData = Array("no data".utf8)
    static let noteSeparator = Array(" · ".utf8)
    static let close = Array("\"></i>".utf8)
}

/// The response-time chart's constant markup, as bytes: a 240 × 60 plot right of a 40-wide axis.
private enum ChartBytes {
    static let width = 240.0
    static let height = 60.0
    static let left = 40.0
    static let noProbes = Array("<p class=\"rt-none\">Response time: no probes in the last 24 hours</p>".utf8)
    static let opening = Array(
        "<figure class=\"rt\"><svg class=\"rt\" viewBox=\"0 0 \(Int(width)) \(Int(height + 12))\" role=\"img\" aria-label=\"Response time per hour over the last 24 hours: latest p50 "
            .utf8)
    static let p95 = Array(", p95 ".utf8)
    static let peak = Array("; peak p95 ".utf8)
    static let topLabel = Array("\"><text x=\"\(Int(left - 4))\" y=\"8\" text-anchor=\"end\">".utf8)
    static let axesAndP95 = Array(
        ("</text><text x=\"\(Int(left - 4))\" y=\"\(Int(height))\" text-anchor=\"end\">0</text>"
            + "<line class=\"axis\" x1=\"\(Int(left))\" y1=\"2\" x2=\"\(Int(left))\" y2=\"\(Int(height - 2))\"/>"
            + "<line class=\"axis\" x1=\"\(Int(left))\" y1=\"\(Int(height - 2))\" x2=\"\(Int(width))\" y2=\"\(Int(height - 2))\"/>"
            + "<path class=\"p95\" d=\"").utf8)
    static let p50 = Array("\"/><path class=\"p50\" d=\"".utf8)
    static let closing = Array(
        ("\"/><text x=\"\(Int(left))\" y=\"\(Int(height + 11))\">24 h ago</text>"
            + "<text x=\"\(Int(width))\" y=\"\(Int(height + 11))\" text-anchor=\"end\">now</text></svg>"
            + "<figcaption><span class=\"k50\">p50</span> <span class=\"k95\">p95</span> response time</figcaption></figure>").utf8)
}

/// The error-rate sparkline's constant markup, as bytes.
private enum SparkBytes {
    static let opening = Array("<svg class=\"spark".utf8)
    static let zero = Array(" zero".utf8)
    static let label = Array("\" width=\"120\" height=\"24\" viewBox=\"0 0 120 24\" role=\"img\" aria-label=\"error rate over the last ".utf8)
    static let minute = Array(" minute, at most ".utf8)
    static let minutes = Array(" minutes, at most ".utf8)
    static let path = Array("%\"><path d=\"".utf8)
    static let closing = Array("\"/></svg>".utf8)
}
