/// A hash that is the same on every machine, every run and every version: FNV-1a 64 of the
/// UTF-8 bytes. Sharding (which instance probes a source), probe offsets, alert fingerprints and
/// PagerDuty's `dedup_key` rely on it, so replicas and restarts agree; it must never change.
///
/// ```swift
/// StableHash.of("acme") % 3  // the shard of "acme" among three
/// ```
package enum StableHash {
    package static func of(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x100_0000_01b3
        }
        return hash
    }
}
