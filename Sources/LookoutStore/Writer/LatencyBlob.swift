import Foundation
import LookoutCore
import ResilientHTTP

/// Latency bucket counts (`Histogram.latencyBuckets`, then +Inf) as the rollup tables keep them:
/// for each bucket that counted something, its index in one byte and the count as an unsigned
/// LEB128 varint. A minute of two probes in one bucket takes 2 bytes; the text of v1–v6 took 31.
package enum LatencyBlob {
    /// How many counts a decoded blob has.
    package static let width = Histogram.latencyBuckets.count + 1

    package static func encode(_ counts: [Int]) -> Data {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(8)
        for (index, count) in counts.prefix(width).enumerated() where count > 0 {
            bytes.append(UInt8(index))
            var rest = UInt64(count)
            while rest >= 0x80 {
                bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
                rest >>= 7
            }
            bytes.append(UInt8(rest))
        }
        return Data(bytes)
    }

    /// The counts of `blob`; whatever follows a malformed entry (an index out of range, a varint
    /// cut short or too long) is left out, so a damaged row costs its own counts and nothing else.
    package static func decode(_ blob: Data?) -> [Int] {
        var counts = [Int](repeating: 0, count: width)
        guard let blob else { return counts }
        var position = blob.startIndex
        while position < blob.endIndex {
            let index = Int(blob[position])
            guard index < width else { break }
            position += 1
            var value: UInt64 = 0
            var shift: UInt64 = 0
            var finished = false
            while position < blob.endIndex, shift < 63 {
                let byte = blob[position]
                position += 1
                value |= UInt64(byte & 0x7F) << shift
                if byte & 0x80 == 0 {
                    finished = true
                    break
                }
                shift += 7
            }
            guard finished else { break }
            counts[index] = counts[index].addingClamped(Int(clamping: value))
        }
        return counts
    }

    /// The comma-separated text of the v1–v6 rollups; anything else counts nothing.
    package static func parseText(_ text: String) -> [Int] {
        let parsed = text.split(separator: ",").compactMap { Int($0) }
        return parsed.count == width && parsed.allSatisfy({ $0 >= 0 }) ? parsed : [Int](repeating: 0, count: width)
    }
}

/// Durations as the compact tables keep them: whole microseconds, whatever the double held.
package enum Microseconds {
    package static func from(seconds: Double) -> Int64 {
        let value = seconds * 1_000_000
        guard value.isFinite, value > 0 else { return 0 }
        return value >= 9.0e15 ? 9_000_000_000_000_000 : Int64(value.rounded())
    }

    package static func from(milliseconds: Double) -> Int64 { from(seconds: milliseconds / 1000) }
}
