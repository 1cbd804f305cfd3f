// TestSupport: helpers the test targets share — gates, child processes, raw sockets, polling.
import Synchronization

/// A gate a handler waits on until the test opens it; no sleeping involved.
public final class Gate: Sendable {
    private let state = Mutex<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    public init() {}

    public func wait() async {
        await withCheckedContinuation { continuation in
            let resumeNow = state.withLock { state -> Bool in
                if state.open { return true }
                state.waiters.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    public func open() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.open = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}

/// Polls `condition` until it holds; throws after 30 s.
public func eventuallyTrue(_ condition: () -> Bool) async throws {
    _ = try await eventually(deadline: .seconds(30), "condition") { condition() ? true : nil }
}

/// A value behind a lock.
public final class Locked<Value: Sendable>: Sendable {
    private let storage: Mutex<Value>

    public init(_ value: Value) { storage = Mutex(value) }

    public var value: Value { storage.withLock { $0 } }

    public func mutate<T>(_ body: (inout Value) -> T) -> T { storage.withLock { body(&$0) } }
}
