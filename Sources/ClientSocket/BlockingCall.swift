import Dispatch

/// Runs calls that block their thread (ldns waiting for an answer, a conversation on a socket,
/// getaddrinfo) on threads kept for them: not on Swift's cooperative pool, whose few threads
/// must never wait, and not on a new thread each (a thread per `/probe` request cost more CPU
/// than the DNS question it asked). The queue makes a thread when every kept one is busy, and
/// lets idle ones go.
///
/// ```swift
/// let answer = await BlockingCall.run { lookupThatBlocks() }
/// ```
public enum BlockingCall {
    private static let queue = DispatchQueue(label: "lookout-blocking", attributes: .concurrent)

    public static func run<Value: Sendable>(_ body: @escaping @Sendable () -> Value) async -> Value {
        await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: body()) }
        }
    }
}
