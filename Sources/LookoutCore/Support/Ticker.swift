import Synchronization

/// One clock for thousands of schedules: tasks wait for their instant here, and a single loop
/// wakes them in 5 ms slots instead of each task keeping its own timer. With 2,000 sources a
/// second this replaces 2,000 timer wake-ups by 200.
package final class Ticker: Sendable {
    private struct Waiter {
        var deadline: ContinuousClock.Instant
        var id: UInt64
        var continuation: CheckedContinuation<Void, Never>
    }

    private struct State {
        var heap: [Waiter] = []
        var nextID: UInt64 = 0
        var cancelled: Set<UInt64> = []
    }

    /// How late a waiter may be woken, at most (plus the system's own timer slack).
    package static let slot: Duration = .milliseconds(5)
    private let state = Mutex(State())
    private let clock = ContinuousClock()

    package init() {}

    /// Returns at `deadline` (within a slot), or at once when the task is cancelled.
    package func wait(until deadline: ContinuousClock.Instant) async {
        let id = state.withLock { state -> UInt64 in
            defer { state.nextID += 1 }
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let resumeNow = state.withLock { state -> Bool in
                    if state.cancelled.remove(id) != nil { return true }
                    Ticker.push(Waiter(deadline: deadline, id: id, continuation: continuation), into: &state.heap)
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let removed = state.withLock { state -> CheckedContinuation<Void, Never>? in
                guard let index = state.heap.firstIndex(where: { $0.id == id }) else {
                    state.cancelled.insert(id)
                    return nil
                }
                let waiter = Ticker.remove(at: index, from: &state.heap)
                return waiter.continuation
            }
            removed?.resume()
        }
    }

    /// Wakes due waiters until cancelled.
    package func run() async {
        while !Task.isCancelled {
            let now = clock.now
            let (due, next) = state.withLock { state -> ([CheckedContinuation<Void, Never>], ContinuousClock.Instant?) in
                var due: [CheckedContinuation<Void, Never>] = []
                while let first = state.heap.first, first.deadline <= now + Ticker.slot {
                    due.append(Ticker.remove(at: 0, from: &state.heap).continuation)
                }
                return (due, state.heap.first?.deadline)
            }
            for continuation in due { continuation.resume() }
            // Wake at the next deadline, a slot from now at the earliest, and at least every
            // 100 ms so a newly added earlier deadline is not missed for long.
            let wake = min(max(next ?? now + .milliseconds(100), now + Ticker.slot), now + .milliseconds(100))
            try? await clock.sleep(until: wake, tolerance: Ticker.slot)
        }
        let rest = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            defer { state.heap.removeAll() }
            return state.heap.map(\.continuation)
        }
        for continuation in rest { continuation.resume() }
    }

    private static func push(_ waiter: Waiter, into heap: inout [Waiter]) {
        heap.append(waiter)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].deadline < heap[parent].deadline else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private static func remove(at index: Int, from heap: inout [Waiter]) -> Waiter {
        heap.swapAt(index, heap.count - 1)
        let removed = heap.removeLast()
        guard index < heap.count else { return removed }
        var node = index
        while node > 0, heap[node].deadline < heap[(node - 1) / 2].deadline {
            heap.swapAt(node, (node - 1) / 2)
            node = (node - 1) / 2
        }
        while true {
            let left = 2 * node + 1
            let right = left + 1
            var smallest = node
            if left < heap.count, heap[left].deadline < heap[smallest].deadline { smallest = left }
            if right < heap.count, heap[right].deadline < heap[smallest].deadline { smallest = right }
            guard smallest != node else { break }
            heap.swapAt(node, smallest)
            node = smallest
        }
        return removed
    }
}
