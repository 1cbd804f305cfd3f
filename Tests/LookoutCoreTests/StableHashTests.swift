import LookoutCore
import Testing

/// Shards, probe offsets, alert fingerprints and PagerDuty dedup keys depend on these values
/// staying the same across machines and versions: they are FNV-1a 64's published test vectors.
@Suite("stable hash")
struct StableHashTests {
    @Test func isFNV1a64() {
        #expect(StableHash.of("") == 0xcbf2_9ce4_8422_2325)
        #expect(StableHash.of("a") == 0xaf63_dc4c_8601_ec8c)
        #expect(StableHash.of("foobar") == 0x8594_4171_f739_67e8)
    }
}
