import Foundation
import LookoutCore
import Synchronization
import TestSupport
import Testing

@Suite("log writer")
struct LogWriterTests {
    /// Reads from `descriptor` until `done` holds for what was read.
    func read(_ descriptor: Int32, into text: inout String, until done: (String) -> Bool) {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !done(text) {
            let count = buffer.withUnsafeMutableBytes { Foundation.read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { return }
            text += String(decoding: buffer[..<count], as: UTF8.self)
        }
    }

    /// A pipe nobody reads: logging returns at once, the lines past the pipe and the backlog are
    /// dropped, and once the pipe is read every line taken arrives in order, with a notice that
    /// counts the others.
    @Test(.timeLimit(.minutes(1))) func aFullPipeDropsLinesAndSaysHowMany() {
        var ends: [Int32] = [-1, -1]
        #expect(pipe(&ends) == 0)
        // The writing thread keeps the write end for the rest of the run.
        defer { close(ends[0]) }
        #expect(shrinkToOnePage(pipe: ends[1]))
        let writer = LogWriter(descriptor: ends[1], format: .logfmt, capacity: 10)
        let padding = String(repeating: "x", count: 100)
        for number in 0..<500 { writer.write("line=\(number) \(padding)") }
        let dropped = writer.droppedLines
        // 500 lines of 100 bytes: far more than one page and ten waiting lines.
        #expect(dropped > 0 && dropped < 500)

        var text = ""
        read(ends[0], into: &text) { $0.split(separator: "\n").filter { $0.hasPrefix("line=") }.count == 500 - dropped }
        writer.write("after")
        read(ends[0], into: &text) { $0.hasSuffix("after\n") }
        func lines() -> [Substring] { text.split(separator: "\n") }

        let numbers = lines().filter { $0.hasPrefix("line=") }.compactMap { Int($0.dropFirst(5).prefix { $0 != " " }) }
        #expect(numbers.count == 500 - dropped)
        #expect(numbers == numbers.sorted())
        let notices = lines().filter { $0.contains("msg=\"log lines dropped: stderr was not taking them\"") }
        let reported = notices.compactMap { $0.split(separator: " ").first { $0.hasPrefix("dropped=") }.flatMap { Int($0.dropFirst(8)) } }
        #expect(reported.reduce(0, +) == dropped)
        #expect(lines().last == "after")
        #expect(writer.droppedLines == dropped)
    }

    /// After `flush`, every line logged is in the pipe: a process's last lines survive its exit.
    @Test(.timeLimit(.minutes(1))) func flushWaitsForEveryLine() {
        var ends: [Int32] = [-1, -1]
        #expect(pipe(&ends) == 0)
        defer { close(ends[0]) }
        #expect(fcntl(ends[0], F_SETFL, O_NONBLOCK) == 0)
        let writer = LogWriter(descriptor: ends[1], format: .logfmt)
        for number in 0..<50 { writer.write("line=\(number)") }
        writer.flush(within: .seconds(30))
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { Foundation.read(ends[0], $0.baseAddress, $0.count) }
        let text = count > 0 ? String(decoding: buffer[..<count], as: UTF8.self) : ""
        #expect(text == (0..<50).map { "line=\($0)\n" }.joined())
    }

    /// Many threads log while the writing thread takes lines as fast as they come (a reader
    /// that has gone makes every write fail at once; /dev/null takes them at once). A line must
    /// be counted as waiting before the writing thread can take it: counted after, it was now and
    /// then taken and counted done first, and libdispatch stopped the process ("unbalanced
    /// dispatch_group_leave"; `lookout serve` died within seconds of its log reader going).
    @Test(.timeLimit(.minutes(1))) func linesLoggedFromManyThreadsAtOnceAreAllAccountedFor() {
        var ends: [Int32] = [-1, -1]
        #expect(pipe(&ends) == 0)
        // The writing thread keeps the write end for the rest of the run.
        defer { close(ends[0]) }
        let writer = LogWriter(descriptor: ends[1], format: .logfmt, capacity: 64)
        // Read as fast as it comes, on a thread of its own, until the last line.
        let done = DispatchSemaphore(value: 0)
        let received = Mutex(String())
        let readEnd = ends[0]
        Thread {
            var text = ""
            read(readEnd, into: &text) { $0.hasSuffix("after\n") }
            received.withLock { $0 = text }
            done.signal()
        }.start()
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            for number in 0..<100_000 { writer.write("thread=\(thread) line=\(number)") }
        }
        writer.flush(within: .seconds(30))
        writer.write("after")
        done.wait()
        // Every line arrived or was counted dropped, and every drop was told before "after".
        let lines = received.withLock { $0 }.split(separator: "\n")
        let arrived = lines.filter { $0.hasPrefix("thread=") }.count
        let reported = lines.compactMap { $0.split(separator: " ").first { $0.hasPrefix("dropped=") }.flatMap { Int($0.dropFirst(8)) } }
        #expect(arrived + writer.droppedLines == 400_000)
        #expect(reported.reduce(0, +) == writer.droppedLines)
        #expect(lines.last == "after")
    }

    /// The writing thread has a name of its own in `top -H`, not the process's.
    @Test(.timeLimit(.minutes(1))) func theWritingThreadIsNamed() throws {
        func named() throws -> Int {
            try FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").filter {
                (try? String(contentsOfFile: "/proc/self/task/\($0)/comm", encoding: .utf8)) == LogWriter.threadName + "\n"
            }.count
        }
        let before = try named()
        var ends: [Int32] = [-1, -1]
        #expect(pipe(&ends) == 0)
        defer { close(ends[0]) }
        let writer = LogWriter(descriptor: ends[1], format: .logfmt)
        // Written by the thread, so named by then: it names itself first.
        writer.write("line")
        writer.flush(within: .seconds(30))
        #expect(try named() >= before + 1)
    }

    /// The notice is a line of the log's own format.
    @Test func theNoticeIsALineOfTheLogFormat() throws {
        let writer = LogWriter(descriptor: -1, format: .json, capacity: 1)
        let notice = try #require(writer.notice(dropped: 7).data(using: .utf8))
        let object = try #require(try JSONSerialization.jsonObject(with: notice) as? [String: String])
        #expect(object["level"] == "warning")
        #expect(object["dropped"] == "7")
    }
}
