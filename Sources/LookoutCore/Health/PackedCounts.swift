/// Counts kept as narrow as the largest of them needs: one byte each until a count passes 255,
/// then two until one passes 65,535, then four, saturating at `UInt32.max` instead of wrapping.
///
/// The health rings of a source probed every 30 s count 2 probes a minute and 120 an hour: a
/// byte holds them, and 10,000 sources keep 16 MB less than with fixed 16- and 32-bit counts.
/// A source probed every 100 ms widens its own rings the first time a count needs it.
package struct PackedCounts: Sendable {
    /// `count` values of `1 << shift` bytes each, in the machine's byte order.
    private var bytes: [UInt8]
    private var shift = 0
    package let count: Int

    package init(count: Int) {
        self.count = max(0, count)
        bytes = [UInt8](repeating: 0, count: self.count)
    }

    package subscript(index: Int) -> UInt32 {
        get {
            bytes.withUnsafeBytes { raw in
                switch shift {
                case 0: UInt32(raw[index])
                case 1: UInt32(raw.loadUnaligned(fromByteOffset: index << 1, as: UInt16.self))
                default: raw.loadUnaligned(fromByteOffset: index << 2, as: UInt32.self)
                }
            }
        }
        set {
            let needed = newValue > UInt16.max ? 2 : newValue > UInt8.max ? 1 : 0
            if needed > shift { widen(to: needed) }
            bytes.withUnsafeMutableBytes { raw in
                switch shift {
                case 0: raw[index] = UInt8(truncatingIfNeeded: newValue)
                case 1: raw.storeBytes(of: UInt16(truncatingIfNeeded: newValue), toByteOffset: index << 1, as: UInt16.self)
                default: raw.storeBytes(of: newValue, toByteOffset: index << 2, as: UInt32.self)
                }
            }
        }
    }

    /// Adds `delta` to value `index`, stopping at `UInt32.max`.
    package mutating func add(_ delta: UInt32, at index: Int) {
        guard delta > 0 else { return }
        let (sum, overflow) = self[index].addingReportingOverflow(delta)
        self[index] = overflow ? .max : sum
    }

    /// Sets the values in `range` to zero; the width stays.
    package mutating func clear(_ range: Range<Int>) {
        let width = 1 << shift
        bytes.withUnsafeMutableBytes { raw in
            for offset in (range.lowerBound * width)..<(range.upperBound * width) { raw[offset] = 0 }
        }
    }

    /// Bytes each value takes now: 1, 2 or 4.
    package var width: Int { 1 << shift }

    private mutating func widen(to newShift: Int) {
        let values = (0..<count).map { self[$0] }
        bytes = [UInt8](repeating: 0, count: count << newShift)
        shift = newShift
        for (index, value) in values.enumerated() { self[index] = value }
    }
}

extension PackedCounts: Equatable {
    /// Equal when the values are, whatever width each keeps them in.
    package static func == (lhs: PackedCounts, rhs: PackedCounts) -> Bool {
        lhs.count == rhs.count && (lhs.shift == rhs.shift ? lhs.bytes == rhs.bytes : (0..<lhs.count).allSatisfy { lhs[$0] == rhs[$0] })
    }
}
