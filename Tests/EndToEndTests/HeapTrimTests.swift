import Testing

@testable import LookoutService

/// When the service hands the allocator's free pages back (the effect on resident memory is
/// measured in `make bench`, `Benchmarks/lean.sh`).
@Suite("heap trim")
struct HeapTrimTests {
    @Test(arguments: [
        (Int64(30 << 20), Int64(120 << 20), true),  // 10,000 sources after a registry copy
        (Int64(3 << 20), Int64(10 << 20), false),  // a few MiB are the caches' working set
        (Int64(6 << 20), Int64(200 << 20), false),  // less than a sixteenth of a large heap
        (Int64(-1), Int64(120 << 20), false),  // the allocator cannot say
        (Int64(30 << 20), Int64(-1), false),
    ])
    func releasesOnlyWhatIsWorthIt(free: Int64, allocated: Int64, release: Bool) {
        #expect(HeapTrim.worthReleasing(free: free, allocated: allocated) == release)
    }
}
