import Foundation
import ResilientHTTP
import Synchronization

/// Writes log lines to a descriptor (stderr) from a thread of its own, so that a stderr nobody
/// reads never holds up the thread that logs.
///
/// A write to a pipe blocks once the pipe is full: a stalled log collector, or
/// `lookout serve 2>&1 | less` left on one screen. Written by the thread that logs, a failed
/// probe's line held up the transfer thread, and with it every probe. Here up to `capacity`
/// lines wait for the writing thread; beyond that they are dropped and counted
/// (`lookout_log_lines_dropped_total`), and the next lines that get through are preceded by one
/// that says how many were lost. Lines for a stderr whose reader has gone (EPIPE: `serve`
/// ignores SIGPIPE, which would kill it) are dropped the same way.
///
/// ```swift
/// let writer = LogWriter(format: .logfmt)
/// LoggingSystem.bootstrap { LogfmtLogHandler(label: $0, writer: writer) }
/// ```
package final class LogWriter: Sendable {
    /// Lines dropped by every writer since the process started.
    package static var droppedLines: Int { droppedByAll.load(ordering: .relaxed) }
    private static let droppedByAll = Atomic<Int>(0)

    /// Lines this writer has dropped.
    package var droppedLines: Int { dropped.load(ordering: .relaxed) }

    private struct Backlog {
        var lines: [String] = []
        /// Dropped since lines last got through: the count the next notice gives.
        var unreported = 0
    }

    package let format: LogfmtLogHandler.Format
    private let descriptor: Int32
    private let capacity: Int
    private let backlog = Mutex(Backlog())
    private let linesWaiting = DispatchSemaphore(value: 0)
    private let dropped = Atomic<Int>(0)
    /// Entered for each line taken, left once it is written (or found unwritable).
    private let unwritten = DispatchGroup()

    /// The writing thread's name, as `top -H` and `/proc/<pid>/task/*/comm` show it.
    package static let threadName = "lookout-log"

    /// Starts the writing thread, which lives as long as the process.
    ///
    /// - Parameter capacity: lines that may wait for the descriptor: a burst of a thousand
    ///   failing sources waits whole while the reader catches up, in a few hundred KiB at most.
    package init(descriptor: Int32 = STDERR_FILENO, format: LogfmtLogHandler.Format, capacity: Int = 1000) {
        self.descriptor = descriptor
        self.format = format
        self.capacity = max(1, capacity)
        startNamedThread(LogWriter.threadName) { [self] in run() }
    }

    /// Hands `line` (without its newline) to the writing thread; drops it when `capacity` lines
    /// are already waiting. Never blocks on the descriptor.
    package func write(_ line: String) {
        // Counted as waiting before the writing thread can take it: it leaves once per line it
        // takes, and a leave before its enter stops the process (libdispatch's "unbalanced
        // dispatch_group_leave"), which a thread preempted here used to cause.
        unwritten.enter()
        let taken = backlog.withLock { backlog -> Bool in
            guard backlog.lines.count < capacity else {
                backlog.unreported += 1
                return false
            }
            backlog.lines.append(line)
            return true
        }
        if taken {
            linesWaiting.signal()
        } else {
            unwritten.leave()
            countDropped(1)
        }
    }

    /// Waits until every line taken so far is written, for at most `limit`: called before the
    /// process exits, so that its last lines ("stopped", the error it stops on) are not lost,
    /// and bounded, so that a stderr nobody reads cannot hold the exit.
    package func flush(within limit: Duration) {
        _ = unwritten.wait(timeout: .now() + .milliseconds(Int(limit.totalMilliseconds)))
    }

    private func run() -> Never {
        while true {
            linesWaiting.wait()
            let taken = backlog.withLock { backlog -> Backlog in
                defer { backlog = Backlog() }
                return backlog
            }
            // One signal per line: a wake-up may find its line already written.
            guard !taken.lines.isEmpty else { continue }
            var text = ""
            if taken.unreported > 0 { text += notice(dropped: taken.unreported) + "\n" }
            for line in taken.lines { text += line + "\n" }
            if !writeAll(text) {
                countDropped(taken.lines.count)
                backlog.withLock { $0.unreported += taken.unreported + taken.lines.count }
            }
            for _ in taken.lines { unwritten.leave() }
        }
    }

    private func countDropped(_ count: Int) {
        dropped.add(count, ordering: .relaxed)
        LogWriter.droppedByAll.add(count, ordering: .relaxed)
    }

    /// The line that says how many lines were lost.
    package func notice(dropped count: Int) -> String {
        LogfmtLogHandler.line(
            [
                ("ts", LogfmtLogHandler.timestamp()), ("level", "warning"),
                ("msg", "log lines dropped: stderr was not taking them"), ("dropped", "\(count)"),
            ], format: format)
    }

    /// Writes all of `text`; false when the descriptor refuses it (EPIPE, EBADF...).
    private func writeAll(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Foundation.write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if written >= 0 {
                offset += written
                continue
            }
            switch errno {
            case EINTR: continue
            case EAGAIN:
                // A descriptor inherited non-blocking: wait until it takes bytes.
                var ready = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                _ = poll(&ready, 1, -1)
            default: return false
            }
        }
        return true
    }
}
