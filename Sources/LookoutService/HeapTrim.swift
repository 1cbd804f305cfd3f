internal import CMemory

/// Gives the allocator's free pages back to the system when it holds more than it needs.
///
/// tcmalloc keeps what is freed for reuse and returns it slowly: at 10,000 sources it held
/// 30 MiB free beside a 120 MiB live heap, most of it from large arrays replaced once (a
/// registry copied while a scrape read the old one). Decommitting on every free
/// (`TCMALLOC_AGGRESSIVE_DECOMMIT`) returned it too but cost 5 % more CPU a probe at 5,000 probes a
/// second; a look every 10 s costs nothing measurable.
package struct HeapTrim: Sendable {
    package var every: Duration = .seconds(10)

    package init() {}

    /// Whether `free` bytes held beside `allocated` live ones are worth handing back: more than
    /// 4 MiB and more than a sixteenth of the live heap. Unknown figures (-1) never are.
    package static func worthReleasing(free: Int64, allocated: Int64) -> Bool {
        guard free >= 0, allocated >= 0 else { return false }
        return free > 4 << 20 && free > allocated / 16
    }

    /// Only on tcmalloc: glibc returns free memory by its own thresholds, and `malloc_trim` on a
    /// timer, in a test process that spawns children all the while, crashed Foundation's
    /// `Process.run` twice in `make test`.
    package func run() async {
        guard lookout_allocator_is_tcmalloc() != 0 else { return }
        while !Task.isCancelled {
            try? await Task.sleep(for: every)
            if HeapTrim.worthReleasing(free: lookout_heap_free_bytes(), allocated: lookout_heap_allocated_bytes()) {
                lookout_release_free_memory()
            }
        }
    }
}
