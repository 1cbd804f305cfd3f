import Foundation

/// The write end of the pipe the signal handler writes to; set once before any handler exists.
nonisolated(unsafe) private var signalPipe: Int32 = -1

/// SIGTERM, SIGINT and SIGHUP caught from the moment `install` returns, not some time later:
/// a plain handler writes the signal's number to a pipe (the only thing it does, which is
/// async-signal-safe) and a thread turns the pipe into an async sequence. A dispatch signal source
/// registers asynchronously, so a test (or systemd) that sends SIGTERM the moment "listening" is
/// logged could kill the process by the default action instead.
///
/// ```swift
/// for await signal in TrappedSignals.install([SIGTERM, SIGHUP]) { … }
/// ```
enum TrappedSignals {
    static func install(_ numbers: [Int32]) -> AsyncStream<Int32> {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { return AsyncStream { $0.finish() } }
        signalPipe = ends[1]
        for number in numbers {
            signal(number) { caught in
                var byte = UInt8(truncatingIfNeeded: caught)
                _ = write(signalPipe, &byte, 1)
            }
        }
        let readEnd = ends[0]
        return AsyncStream { continuation in
            Thread {
                var byte: UInt8 = 0
                while true {
                    let count = read(readEnd, &byte, 1)
                    if count == 1 { continuation.yield(Int32(byte)) } else if count < 0 && errno == EINTR { continue } else { break }
                }
                continuation.finish()
            }.start()
        }
    }
}
