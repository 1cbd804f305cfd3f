// LookoutWeb: what Lookout serves — /metrics, the status page, health endpoints and routes.

import LookoutCore
import MicroHTTPServer
import ResilientHTTP
import Synchronization

/// Writes the Prometheus text format 0.0.4: HELP and TYPE once per family, escaped label values.
///
/// ```swift
/// let writer = ExpositionWriter()
/// writer.family("lookout_probe_success", type: .gauge, help: "Whether the last probe succeeded.")
/// writer.sample("lookout_probe_success", labels: [("source", "acme")], value: 1)
/// ```
///
/// A scrape of 10,000 sources appends about two million short runs of bytes, so the writer owns
/// a raw buffer and appends through pointers: appending to an Array checks uniqueness and
/// exclusivity and retains each appended array, which together cost more than the copying. It
/// is a class because it owns that buffer; one renderer uses it at a time.
package final class ExpositionWriter {
    package enum MetricType: String, Sendable {
        case counter, gauge, histogram, summary
    }

    private var base: UnsafeMutablePointer<UInt8>
    private var count = 0
    private var capacity: Int

    package init(capacity: Int = 64 * 1024) {
        self.capacity = max(capacity, 64)
        base = .allocate(capacity: self.capacity)
    }

    deinit {
        base.deallocate()
    }

    /// Makes room for `capacity` bytes in all; a fresh writer takes the spare buffer if it is
    /// large enough.
    package func reserve(_ capacity: Int) {
        guard capacity > self.capacity else { return }
        if count == 0, let spare = SpareBuffer.take(atLeast: capacity) {
            base.deallocate()
            base = spare.pointer
            self.capacity = spare.capacity
        } else {
            grow(to: capacity)
        }
    }

    /// Bytes written so far.
    package var size: Int { count }

    /// The exposition so far, as bytes.
    package var bytes: [UInt8] { Array(UnsafeBufferPointer(start: base, count: count)) }

    /// Hands the exposition to the caller without copying; the writer starts over empty. When the
    /// caller is done, the buffer becomes the spare for the next large exposition.
    package func take() -> OwnedBytes {
        let size = capacity
        let owned = OwnedBytes(takingOwnershipOf: UnsafeMutableRawPointer(base), count: count) { pointer in
            SpareBuffer.give(pointer.assumingMemoryBound(to: UInt8.self), capacity: size)
        }
        capacity = 64
        count = 0
        base = .allocate(capacity: capacity)
        return owned
    }

    /// The exposition so far, as text.
    package var text: String { String(decoding: UnsafeBufferPointer(start: base, count: count), as: UTF8.self) }

    /// `# HELP` and `# TYPE` of a family, written in place: a `/probe` answer is mostly these
    /// lines, and building each as an interpolated String cost more than the rest of its render.
    package func family(_ name: String, type: MetricType, help: String) {
        append("# HELP " as StaticString)
        append(name)
        append(UInt8(ascii: " "))
        appendHelp(help)
        append("\n# TYPE " as StaticString)
        append(name)
        append(UInt8(ascii: " "))
        append(type.rawValue)
        append(UInt8(ascii: "\n"))
    }

    /// A family with a single sample: HELP, TYPE and the sample.
    package func single(_ name: String, type: MetricType, help: String, labels: [(String, String)] = [], value: Double) {
        family(name, type: type, help: help)
        sample(name, labels: labels, value: value)
    }

    package func sample(_ name: String, labels: [(String, String)] = [], value: Double) {
        append(name)
        if !labels.isEmpty {
            append(UInt8(ascii: "{"))
            for (index, (label, labelValue)) in labels.enumerated() {
                if index > 0 { append(UInt8(ascii: ",")) }
                appendLabel(label, labelValue)
            }
            append(UInt8(ascii: "}"))
        }
        append(UInt8(ascii: " "))
        appendNumber(value)
        append(UInt8(ascii: "\n"))
    }

    /// Label fragments escaped once per scrape and reused for every sample: prefixes
    /// (`{source="NAME"`, one per source) or suffixes (`,state="open"} `, the last label and the
    /// end of the set). All fragments live in one byte array, because copying a fragment out of
    /// an array of arrays retained it, on each of 450,000 lines of a 10,000-source scrape.
    package struct Labels: Sendable {
        let arena: [UInt8]
        /// Where each fragment ends in `arena`; fragment `i` starts where `i - 1` ends.
        let ends: [Int]

        init(fragments: [String]) {
            var arena: [UInt8] = []
            var ends: [Int] = []
            ends.reserveCapacity(fragments.count)
            for fragment in fragments {
                arena.append(contentsOf: fragment.utf8)
                ends.append(arena.count)
            }
            self.arena = arena
            self.ends = ends
        }

        /// `{LABEL="VALUE"` for each of `values`, then the `constant` labels every series shares.
        package static func prefixes(_ label: String, _ values: [String], _ constant: [(String, String)] = []) -> Labels {
            var tail = [UInt8(ascii: "\"")]
            for (name, value) in constant {
                tail += ",\(name)=\"".utf8
                ExpositionWriter.escapingLabel(value) { tail.append($0) }
                tail.append(UInt8(ascii: "\""))
            }
            return Labels(head: Array("{\(label)=\"".utf8), escaping: values, tail: tail)
        }

        /// `,LABEL="VALUE"} ` for each of `values`.
        package static func suffixes(_ label: String, _ values: [String]) -> Labels {
            Labels(head: Array(",\(label)=\"".utf8), escaping: values, tail: Array("\"} ".utf8))
        }

        /// `head`, a value escaped, `tail`, for each of `values`, written straight into the
        /// arena: a String per fragment and per escape was 1,800 instructions a source on every
        /// scrape.
        private init(head: [UInt8], escaping values: [String], tail: [UInt8]) {
            var arena: [UInt8] = []
            arena.reserveCapacity(values.count * (head.count + tail.count + 24))
            var ends: [Int] = []
            ends.reserveCapacity(values.count)
            for value in values {
                arena += head
                ExpositionWriter.escapingLabel(value) { arena.append($0) }
                arena += tail
                ends.append(arena.count)
            }
            self.arena = arena
            self.ends = ends
        }

        /// `,NAME="VALUE"` for each of `names`, then `} `, for each of `count` series: a label set
        /// that differs per series (a source's kind and group), read by `value(series, name)`
        /// straight into the arena.
        package static func suffixes(_ names: [String], count: Int, value: (_ series: Int, _ name: Int) -> String) -> Labels {
            let heads = names.map { Array(",\($0)=\"".utf8) }
            var arena: [UInt8] = []
            arena.reserveCapacity(count * (heads.reduce(2) { $0 + $1.count + 12 }))
            var ends: [Int] = []
            ends.reserveCapacity(count)
            for series in 0..<count {
                for (name, head) in heads.enumerated() {
                    arena += head
                    ExpositionWriter.escapingLabel(value(series, name)) { arena.append($0) }
                    arena.append(UInt8(ascii: "\""))
                }
                arena += "} ".utf8
                ends.append(arena.count)
            }
            return Labels(arena: arena, ends: ends)
        }

        private init(arena: [UInt8], ends: [Int]) {
            self.arena = arena
            self.ends = ends
        }

        /// `,LABEL="CASE"} ` for each case of `values`, in order.
        package static func suffixes<Value: RawRepresentable>(_ label: String, _ values: [Value]) -> Labels where Value.RawValue == String {
            suffixes(label, values.map(\.rawValue))
        }

        /// Just `} `: a sample with no label after the prefix.
        package static let end = Labels(fragments: ["} "])

        package var count: Int { ends.count }

        func withFragment<T>(_ index: Int, _ body: (UnsafeRawBufferPointer) -> T) -> T {
            let start = index == 0 ? 0 : ends[index - 1]
            return arena.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[start..<ends[index]])) }
        }
    }

    /// A sample: `name`, prefix `p` of `prefixes`, suffix `s` of `suffixes`, the value.
    package func sample(_ name: StaticString, _ prefixes: Labels, _ p: Int, _ suffixes: Labels = .end, _ s: Int = 0, value: Double) {
        append(UnsafeRawBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
        appendRest(prefixes, p, suffixes, s, value)
    }

    private func appendRest(_ prefixes: Labels, _ p: Int, _ suffixes: Labels, _ s: Int, _ value: Double) {
        prefixes.withFragment(p) { append($0) }
        suffixes.withFragment(s) { append($0) }
        appendNumber(value)
        append(UInt8(ascii: "\n"))
    }

    /// A histogram family's sample names and `le` labels, made once per scrape.
    package struct HistogramLayout: Sendable {
        /// `NAME_bucket`, `NAME_sum`, `NAME_count`.
        let names: Labels
        /// `,le="0.005"} ` for each bound, then `,le="+Inf"} `.
        let bounds: Labels
        /// Which of the histogram's buckets are written (cumulative, so leaving some out merges
        /// them into the next one written); +Inf always is.
        let written: [Bool]

        /// Every bound of `bounds`, or only those in `keeping` (a coarser histogram, fewer series).
        package init(_ name: String, bounds: [Double], keeping: Set<Double>? = nil) {
            names = Labels(fragments: [name + "_bucket", name + "_sum", name + "_count"])
            self.bounds = .suffixes("le", bounds.map(ExpositionWriter.format) + ["+Inf"])
            written = bounds.map { keeping?.contains($0) ?? true } + [true]
        }
    }

    /// Buckets, sum and count of a histogram, with prefix `p` of `prefixes`.
    package func histogram(_ layout: HistogramLayout, _ prefixes: Labels, _ p: Int, _ histogram: Histogram) {
        precondition(layout.bounds.count == histogram.bounds.count + 1, "the layout was made for other bounds")
        var running: UInt64 = 0
        for index in 0..<layout.bounds.count {
            running += histogram[bucket: index]
            guard layout.written[index] else { continue }
            layout.names.withFragment(0) { append($0) }
            appendRest(prefixes, p, layout.bounds, index, Double(running))
        }
        layout.names.withFragment(1) { append($0) }
        appendRest(prefixes, p, .end, 0, histogram.sum)
        layout.names.withFragment(2) { append($0) }
        appendRest(prefixes, p, .end, 0, Double(histogram.count))
    }

    /// Buckets, sum and count of a histogram under `name`, with `labels`.
    package func histogram(_ name: String, labels: [(String, String)], _ histogram: Histogram) {
        let cumulative = histogram.cumulativeCounts
        for (index, bound) in histogram.bounds.enumerated() {
            sample("\(name)_bucket", labels: labels + [("le", ExpositionWriter.format(bound))], value: Double(cumulative[index]))
        }
        sample("\(name)_bucket", labels: labels + [("le", "+Inf")], value: Double(histogram.count))
        sample("\(name)_sum", labels: labels, value: histogram.sum)
        sample("\(name)_count", labels: labels, value: Double(histogram.count))
    }

    // MARK: - Appending

    private func grow(to needed: Int) {
        let newCapacity = max(needed, capacity * 2)
        let newBase = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        newBase.initialize(from: base, count: count)
        base.deallocate()
        base = newBase
        capacity = newCapacity
    }

    private func append(_ source: UnsafeRawBufferPointer) {
        guard let start = source.baseAddress else { return }
        if count + source.count > capacity { grow(to: count + source.count) }
        UnsafeMutableRawPointer(base + count).copyMemory(from: start, byteCount: source.count)
        count += source.count
    }

    private func append(_ text: StaticString) {
        append(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    private func append(_ byte: UInt8) {
        if count == capacity { grow(to: count + 1) }
        base[count] = byte
        count += 1
    }

    private func append(_ text: String) {
        if text.utf8.withContiguousStorageIfAvailable({ append(UnsafeRawBufferPointer($0)) }) == nil {
            Array(text.utf8).withUnsafeBytes { append($0) }
        }
    }

    /// `name="value"` with the value escaped.
    private func appendLabel(_ name: String, _ value: String) {
        append(name)
        append(UInt8(ascii: "="))
        append(UInt8(ascii: "\""))
        appendEscaped(value)
        append(UInt8(ascii: "\""))
    }

    /// Label values escape backslash, double quote and newline (a carriage return is dropped).
    private func appendEscaped(_ value: String) {
        // Most values need no escaping: copy them whole.
        let copied = value.utf8.withContiguousStorageIfAvailable { buffer in
            guard !buffer.contains(where: { $0 == 0x5C || $0 == 0x22 || $0 == 0x0A || $0 == 0x0D }) else { return false }
            append(UnsafeRawBufferPointer(buffer))
            return true
        }
        if copied == true { return }
        ExpositionWriter.escapingLabel(value) { append($0) }
    }

    /// Hands `body` the bytes of `value` as a label value: a backslash, a double quote and a
    /// newline escaped, a carriage return left out.
    static func escapingLabel(_ value: String, _ body: (UInt8) -> Void) {
        for byte in value.utf8 {
            switch byte {
            case 0x5C:
                body(0x5C)
                body(0x5C)
            case 0x22:
                body(0x5C)
                body(0x22)
            case 0x0A:
                body(0x5C)
                body(0x6E)
            case 0x0D: continue
            default: body(byte)
            }
        }
    }

    /// Writes a number, without going through a String for whole numbers.
    func appendNumber(_ value: Double) {
        guard value.isFinite, value == value.rounded(), abs(value) < 1e15 else {
            append(ExpositionWriter.format(value))
            return
        }
        var integer = Int64(value)
        if integer == 0 {
            append(UInt8(ascii: "0"))
            return
        }
        if integer < 0 {
            append(UInt8(ascii: "-"))
            integer = -integer
        }
        var digits = InlineArray<16, UInt8>(repeating: 0)
        var first = 16
        while integer > 0 {
            first -= 1
            digits[first] = UInt8(48 + integer % 10)
            integer /= 10
        }
        if count + 16 > capacity { grow(to: count + 16) }
        for index in first..<16 {
            base[count] = digits[index]
            count += 1
        }
    }

    // MARK: - Text helpers

    package static func format(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return value.description
    }

    /// HELP text escapes backslash and newline. Nearly every HELP text has neither: it is
    /// copied whole (Foundation's `replacingOccurrences`, twice per family, was once a quarter
    /// of the CPU of a `/probe` request).
    private func appendHelp(_ value: String) {
        let backslash = UInt8(ascii: "\\")
        let copied = value.utf8.withContiguousStorageIfAvailable { buffer in
            guard !buffer.contains(where: { $0 == backslash || $0 == 0x0A }) else { return false }
            append(UnsafeRawBufferPointer(buffer))
            return true
        }
        if copied == true { return }
        for byte in value.utf8 {
            switch byte {
            case backslash: append("\\\\" as StaticString)
            case 0x0A: append("\\n" as StaticString)
            default: append(byte)
            }
        }
    }
}

/// One spare exposition buffer: a sent scrape's buffer comes back here and the next scrape writes
/// into it, so a 30 MB exposition does not map and fault in fresh memory every time (glibc maps
/// anything over 32 MB afresh). Holding one buffer between scrapes is the price.
enum SpareBuffer {
    struct Buffer: @unchecked Sendable {
        // Owned by whoever took it out of `spare`: one writer at a time, never shared.
        let pointer: UnsafeMutablePointer<UInt8>
        let capacity: Int
    }

    private static let spare = Mutex<Buffer?>(nil)
    /// Smaller buffers are not kept: malloc reuses them well enough.
    static let minimumCapacity = 8 << 20

    /// The spare, if it holds at least `capacity` bytes; it is the caller's then.
    static func take(atLeast capacity: Int) -> Buffer? {
        guard capacity >= minimumCapacity else { return nil }
        return spare.withLock { spare in
            guard let buffer = spare, buffer.capacity >= capacity else { return nil }
            spare = nil
            return buffer
        }
    }

    /// Keeps `pointer` as the spare if it is larger than the one kept; frees the other.
    static func give(_ pointer: UnsafeMutablePointer<UInt8>, capacity: Int) {
        guard capacity >= minimumCapacity else {
            pointer.deallocate()
            return
        }
        let unused = spare.withLock { spare -> Buffer? in
            let offered = Buffer(pointer: pointer, capacity: capacity)
            guard let kept = spare else {
                spare = offered
                return nil
            }
            if kept.capacity >= capacity { return offered }
            spare = offered
            return kept
        }
        unused?.pointer.deallocate()
    }
}
