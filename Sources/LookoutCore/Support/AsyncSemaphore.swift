import Synchronization

/// Limits how many probes run at once; waiters are served in arrival order.
package final class AsyncSemaphore: Sendable {
    private struct State {
        var available: Int
        /// Waiters from `head` on; those before it were served. The served ones are removed
        /// when they are most of the array, so a signal costs O(1) even with thousands waiting
        /// (every source's probe, when a broken network makes each one last its whole timeout).
        var waiters: [CheckedContinuation<Void, Never>] = []
        var head = 0

        mutating func next() -> CheckedContinuation<Void, Never>? {
            guard head < waiters.count else { return nil }
            let waiter = waiters[head]
            head += 1
            if head == waiters.count {
                waiters.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 1024 && head * 2 >= waiters.count {
                waiters.removeFirst(head)
                head = 0
            }
            return waiter
        }
    }

    private let state: Mutex<State>

    package init(_ permits: Int) {
        state = Mutex(State(available: max(1, permits)))
    }

    package func wait() async {
        // A free permit is taken without suspending: a suspension and resumption is a trip
        // through the executor per probe.
        let taken = state.withLock { state -> Bool in
            guard state.available > 0 else { return false }
            state.available -= 1
            return true
        }
        if taken { return }
        await withCheckedContinuation { continuation in
            let granted = state.withLock { state -> Bool in
                if state.available > 0 {
                    state.available -= 1
                    return true
                }
                state.waiters.append(continuation)
                return false
            }
            if granted { continuation.resume() }
        }
    }

    package func signal() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let next = state.next() else {
                state.available += 1
                return nil
            }
            return next
        }
        next?.resume()
    }

    /// How many wait for a permit.
    package var waiting: Int { state.withLock { $0.waiters.count - $0.head } }
}
