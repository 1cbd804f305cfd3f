import LookoutCore

/// Figures as people read them on the page — percents, durations, decimals, times — each
/// written as ASCII straight into the page's bytes, with a String form for the rest: a page for
/// 1,000 sources writes a few hundred thousand numbers.
extension StatusPage {
    /// One point of an SVG path: `M` (move) or `L` (line), then x and y with one decimal each.
    static func appendPathPoint(_ command: Unicode.Scalar, _ x: Double, _ y: Double, to out: inout [UInt8]) {
        out.append(UInt8(ascii: command))
        appendTenths(x, to: &out)
        out.append(UInt8(ascii: " "))
        appendTenths(y, to: &out)
        out.append(UInt8(ascii: " "))
    }

    /// A non-negative coordinate with one decimal, as ASCII digits.
    static func appendTenths(_ value: Double, to out: inout [UInt8]) {
        // Not a number, or past any chart, is held in range rather than trapping.
        let tenths = UInt64(min(max(0, value) * 10 + 0.5, 9e18))
        appendInteger(tenths / 10, to: &out)
        out.append(UInt8(ascii: "."))
        out.append(UInt8(48 + tenths % 10))
    }

    static func milliseconds(_ seconds: Double) -> String {
        var out: [UInt8] = []
        appendMilliseconds(seconds, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// `milliseconds`, written into `out`.
    static func appendMilliseconds(_ seconds: Double, to out: inout [UInt8]) {
        if seconds < 1 {
            appendFixed(seconds * 1000, 0, to: &out)
            out += NumberBytes.ms
        } else {
            appendFixed(seconds, 2, to: &out)
            out += NumberBytes.s
        }
    }

    /// An availability as people read it: `100%`, `99.95%`, `87.3%`; never rounded up to 100.
    static func percent(_ ratio: Double) -> String {
        var out: [UInt8] = []
        appendPercent(ratio, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// `percent`, written as ASCII into `out`.
    static func appendPercent(_ ratio: Double, to out: inout [UInt8]) {
        guard ratio < 1 else {
            out += NumberBytes.hundredPercent
            return
        }
        let hundredths = (max(0, ratio) * 10_000).rounded(.down) / 100
        appendFixed(hundredths, hundredths >= 99 ? 2 : 1, to: &out)
        out.append(UInt8(ascii: "%"))
    }

    /// `value` with `places` decimals, without Foundation's slow `String(format:)`.
    static func fixed(_ value: Double, _ places: Int) -> String {
        var out: [UInt8] = []
        appendFixed(value, places, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// `fixed`, written as ASCII into `out`: halves away from zero, "–" for what is not a
    /// number, magnitudes past 9 × 10^18 (in units of the last place) held there instead of
    /// trapping.
    static func appendFixed(_ value: Double, _ places: Int, to out: inout [UInt8]) {
        guard value.isFinite else {
            out += NumberBytes.notANumber
            return
        }
        let places = min(max(places, 0), 6)
        var scale: UInt64 = 1
        for _ in 0..<places { scale *= 10 }
        let scaled = UInt64(min((abs(value) * Double(scale)).rounded(), 9e18))
        if value < 0 && scaled != 0 { out.append(UInt8(ascii: "-")) }
        appendInteger(scaled / scale, to: &out)
        guard places > 0 else { return }
        out.append(UInt8(ascii: "."))
        let fraction = scaled % scale
        var unit = scale / 10
        while unit > 0 {
            out.append(UInt8(48 + (fraction / unit) % 10))
            unit /= 10
        }
    }

    /// `value` in decimal, as ASCII into `out`: the digits written from the last into a
    /// buffer on the stack, then copied at once (a page writes a few hundred thousand numbers).
    static func appendInteger(_ value: UInt64, to out: inout [UInt8]) {
        // Most are a chart's coordinates, under 1,000: byte by byte is cheaper than a copy.
        if value < 1000 {
            let digit = { (place: UInt64) in UInt8(truncatingIfNeeded: 48 + value / place % 10) }
            if value >= 100 { out.append(digit(100)) }
            if value >= 10 { out.append(digit(10)) }
            out.append(digit(1))
            return
        }
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var rest = value
            var at = digits.count
            repeat {
                at -= 1
                digits[at] = UInt8(truncatingIfNeeded: 48 + rest % 10)
                rest /= 10
            } while rest > 0
            out.append(contentsOf: UnsafeBufferPointer(rebasing: digits[at...]))
        }
    }

    /// A relative time with the absolute one for machines and on hover: `<time>4m</time>`.
    static func time(_ text: String, atMs: Int64) -> String {
        let absolute = HTML.escape(Timestamp.rfc3339(atMs))
        return "<time datetime=\"\(absolute)\" title=\"\(absolute)\">\(HTML.escape(text))</time>"
    }
}

private enum NumberBytes {
    static let hundredPercent = Array("100%".utf8)
    static let notANumber = Array("–".utf8)
    static let ms = Array(" ms".utf8)
    static let s = Array(" s".utf8)
}
