internal import CMicroHTTPD
import Synchronization

/// The buffer between a streamed body's producer (a Swift task) and libmicrohttpd's content
/// reader (the daemon thread). When the buffer runs dry the reader suspends the connection, and
/// the next write resumes it, so a slow producer holds neither a thread nor a busy loop.
final class ResponseStream: Sendable {
    private struct State {
        var chunks: [[UInt8]] = []
        var offsetInFirst = 0
        var buffered = 0
        var finished = false
        var aborted = false
        var closed = false
        var readerSuspended = false
        var spaceWaiter: CheckedContinuation<Void, any Error>?
    }

    static let highWater = 256 * 1024

    private let state = Mutex(State())
    /// The connection this stream answers; only used to suspend and resume it.
    private let connection: ConnectionHandle
    private let suspensions: SuspensionCounter

    init(connection: ConnectionHandle, suspensions: SuspensionCounter) {
        self.connection = connection
        self.suspensions = suspensions
    }

    func write(_ bytes: [UInt8]) async throws {
        guard !bytes.isEmpty else { return }
        let mustWait = try state.withLock { state -> Bool in
            if state.closed || state.aborted { throw ClientDisconnected() }
            state.chunks.append(bytes)
            state.buffered += bytes.count
            resumeReaderLocked(&state)
            return state.buffered > ResponseStream.highWater
        }
        guard mustWait else { return }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            state.withLock { state in
                if state.closed || state.aborted {
                    continuation.resume(throwing: ClientDisconnected())
                } else if state.buffered <= ResponseStream.highWater {
                    continuation.resume()
                } else {
                    state.spaceWaiter = continuation
                }
            }
        }
    }

    /// The producer is done: the reader ends the body once the buffer is drained.
    func finish() {
        state.withLock { state in
            state.finished = true
            resumeReaderLocked(&state)
        }
    }

    /// Drop the connection once what was already written has been sent.
    func abort() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            state.aborted = true
            resumeReaderLocked(&state)
            defer { state.spaceWaiter = nil }
            return state.spaceWaiter
        }
        waiter?.resume(throwing: ClientDisconnected())
    }

    /// The connection is gone: pending and future writes fail.
    func close() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            state.closed = true
            defer { state.spaceWaiter = nil }
            return state.spaceWaiter
        }
        waiter?.resume(throwing: ClientDisconnected())
    }

    /// Called by libmicrohttpd on the daemon thread: copy up to `max` bytes into `buffer`.
    func read(into buffer: UnsafeMutablePointer<CChar>, max: Int) -> Int {
        var waiter: CheckedContinuation<Void, any Error>?
        let result = state.withLock { state -> Int in
            if state.buffered > 0 && !state.closed {
                var copied = 0
                while copied < max, !state.chunks.isEmpty {
                    let first = state.chunks[0]
                    let count = min(max - copied, first.count - state.offsetInFirst)
                    first.withUnsafeBytes { raw in
                        (buffer + copied).withMemoryRebound(to: UInt8.self, capacity: count) { target in
                            target.update(from: raw.baseAddress!.assumingMemoryBound(to: UInt8.self) + state.offsetInFirst, count: count)
                        }
                    }
                    copied += count
                    state.offsetInFirst += count
                    if state.offsetInFirst == first.count {
                        state.chunks.removeFirst()
                        state.offsetInFirst = 0
                    }
                }
                state.buffered -= copied
                if state.buffered <= ResponseStream.highWater {
                    waiter = state.spaceWaiter
                    state.spaceWaiter = nil
                }
                return copied
            }
            if state.aborted || state.closed { return lookout_mhd_end_with_error() }
            if state.finished { return lookout_mhd_end_of_stream() }
            // Nothing to send yet: park the connection until the producer writes again.
            state.readerSuspended = true
            suspensions.increment()
            MHD_suspend_connection(connection.pointer)
            return 0
        }
        waiter?.resume()
        return result
    }

    private func resumeReaderLocked(_ state: inout State) {
        guard state.readerSuspended else { return }
        state.readerSuspended = false
        MHD_resume_connection(connection.pointer)
        suspensions.decrement()
    }
}

/// A libmicrohttpd connection pointer, handed between the daemon thread and Swift tasks.
struct ConnectionHandle: @unchecked Sendable {
    // libmicrohttpd allows MHD_resume_connection from any thread; we touch nothing else off-thread.
    let pointer: OpaquePointer
}

/// How many connections are suspended right now; the server waits for zero before stopping,
/// because libmicrohttpd must not be stopped with suspended connections.
final class SuspensionCounter: Sendable {
    private let count = Mutex(0)
    func increment() { count.withLock { $0 += 1 } }
    func decrement() { count.withLock { $0 -= 1 } }
    var value: Int { count.withLock { $0 } }
}
