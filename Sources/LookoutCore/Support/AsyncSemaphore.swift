import Synchronization

/// Limits how many probes run at once; waiters are served in arrival order.
package final class AsyncSemaphore: Sendable {
    private struct State {
        var available: Int
        var waiters: [(id: Int, continuation: CheckedContinuation<Void, Never>)] = []
        var nextID = 0
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
                state.waiters.append((state.nextID, continuation))
                state.nextID += 1
                return false
            }
            if granted { continuation.resume() }
        }
    }

    package func signal() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiters.isEmpty else {
                state.available += 1
                return nil
            }
            return state.waiters.removeFirst().continuation
        }
        next?.resume()
    }
}
