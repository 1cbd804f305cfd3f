import Synchronization

/// A one-slot signal a loop can wait on with a timeout.
package final class AsyncWakeUp: Sendable {
    private let pending = Mutex<(signalled: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))

    package init() {}

    package func signal() {
        let waiter = pending.withLock { state -> CheckedContinuation<Void, Never>? in
            defer { state.waiter = nil }
            if state.waiter == nil { state.signalled = true }
            return state.waiter
        }
        waiter?.resume()
    }

    package func wait(timeout: Duration) async {
        // A timer cancelled because a signal came first must not signal in turn: that left a
        // signal pending, so the next wait returned at once and cancelled its own timer, for
        // ever — a core busy and a task made per turn (RSS +180 MiB) from the first poke on.
        let timer = Task { [weak self] in
            do { try await Task.sleep(for: timeout) } catch { return }
            self?.signal()
        }
        await withCheckedContinuation { continuation in
            let now = pending.withLock { state -> Bool in
                if state.signalled {
                    state.signalled = false
                    return true
                }
                state.waiter = continuation
                return false
            }
            if now { continuation.resume() }
        }
        timer.cancel()
        await timer.value  // ended: it cannot signal after this wait
    }

    /// A signal is waiting for the next `wait` (for tests).
    package var hasPendingSignal: Bool { pending.withLock { $0.signalled } }
}
