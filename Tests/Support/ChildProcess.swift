import Foundation
import Synchronization

/// A program started by a test, with its output collected so the test can poll it.
public final class ChildProcess: Sendable {
    private let process: SpawnedChild
    private let output = OutputBuffer()

    /// Where `make test` put the binaries; without it, the debug build next to the sources.
    public static var binDirectory: URL {
        if let dir = ProcessInfo.processInfo.environment["LOOKOUT_BIN_DIR"] { return URL(fileURLWithPath: dir) }
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent(".build/debug")
    }

    /// Starts `name` (a path, or one of this package's executables) with `arguments`, and with
    /// `environment` added to this process's.
    ///
    /// - Parameter standardError: where its stderr goes instead of the collected output (a pipe
    ///   the test leaves unread, say).
    public init(_ name: String, _ arguments: [String], environment: [String: String] = [:], standardError: Pipe? = nil) throws {
        let path = name.hasPrefix("/") ? name : ChildProcess.binDirectory.appendingPathComponent(name).path
        let pipe = try makePipe()
        defer { close(pipe.write) }
        do {
            process = try SpawnedChild(
                path: path, arguments: arguments,
                environment: environment.isEmpty ? nil : ProcessInfo.processInfo.environment.merging(environment) { $1 }, stdin: nil,
                stdout: pipe.write, stderr: standardError?.fileHandleForWriting.fileDescriptor ?? pipe.write)
        } catch {
            close(pipe.read)
            throw error
        }
        ChildProcess.running.register(process.pid)
        ChildProcess.collect(pipe.read, into: output)
    }

    /// Reads `descriptor` to its end on a thread of its own, which then closes it.
    ///
    /// Not a `readabilityHandler`: closing the handle cancels that handler's Dispatch source and
    /// closes the descriptor at once, before Dispatch has let go of it, and at the end of the
    /// output the handler is called again and again until then. A `make test` crashed in
    /// Dispatch's event loop (`_dispatch_event_loop_drain`), where this pattern is known to.
    private static func collect(_ descriptor: Int32, into output: OutputBuffer) {
        Thread {
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count > 0 {
                    output.append(String(decoding: buffer[..<count], as: UTF8.self))
                } else if count < 0 && errno == EINTR {
                    continue
                } else {
                    break
                }
            }
            close(descriptor)
        }.start()
    }

    deinit {
        if process.isRunning { kill(process.pid, SIGTERM) }
        ChildProcess.running.unregister(process.pid)
    }

    /// Every child still running, killed when the test runner exits: a test that fails or is
    /// cut short must not leave servers behind on the machine.
    static let running = Survivors()

    final class Survivors: Sendable {
        private let pids = Mutex<Set<pid_t>>([])

        init() {
            atexit {
                for pid in ChildProcess.running.pids.withLock({ $0 }) { kill(pid, SIGKILL) }
            }
        }

        func register(_ pid: pid_t) {
            pids.withLock { _ = $0.insert(pid) }
        }

        func unregister(_ pid: pid_t) {
            pids.withLock { _ = $0.remove(pid) }
        }
    }

    public var text: String { output.text }

    /// Polls the output until `pattern` (a regular expression) matches; returns its first group.
    public func waitFor(_ pattern: String, deadline: Duration = .seconds(60)) async throws -> String {
        let expression = try NSRegularExpression(pattern: pattern)
        let end = ContinuousClock.now + deadline
        while ContinuousClock.now < end {
            let text = self.text
            if let match = expression.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) {
                let range = match.numberOfRanges > 1 ? match.range(at: 1) : match.range
                return String(text[Range(range, in: text)!])
            }
            if !process.isRunning { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw TestFailure("\(URL(fileURLWithPath: process.path).lastPathComponent) never printed /\(pattern)/; output:\n\(text)")
    }

    /// Sends a signal (SIGHUP to reload, say).
    public func send(_ signal: Int32) {
        kill(process.pid, signal)
    }

    public var isRunning: Bool { process.isRunning }

    /// The process id (to kill -9 it, say).
    public var pid: Int32 { process.pid }

    /// Sends SIGTERM and waits (polling, with a deadline) for the exit; returns the exit status.
    /// The deadline is generous: on a loaded 2-core CI run a clean shutdown (lookout's own limit
    /// is 8 s) can take longer than on a quiet machine; a hang still fails, and says whose.
    public func terminate(deadline: Duration = .seconds(30)) async throws -> Int32 {
        kill(process.pid, SIGTERM)
        let end = ContinuousClock.now + deadline
        while process.isRunning && ContinuousClock.now < end {
            try await Task.sleep(for: .milliseconds(20))
        }
        guard !process.isRunning else {
            let name = URL(fileURLWithPath: process.path).lastPathComponent
            throw TestFailure("\(name) still running \(deadline) after SIGTERM; its last output: \(String(text.suffix(2000)))")
        }
        ChildProcess.running.unregister(process.pid)
        return process.terminationStatus
    }
}

public struct TestFailure: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Polls `body` until it returns a value or the deadline passes.
public func eventually<T>(deadline: Duration = .seconds(60), _ what: String, _ body: () async throws -> T?) async throws -> T {
    let end = ContinuousClock.now + deadline
    while ContinuousClock.now < end {
        if let value = try await body() { return value }
        try await Task.sleep(for: .milliseconds(100))
    }
    throw TestFailure("timed out waiting for \(what)")
}

/// Runs a command to completion with `input` on stdin; returns its status and combined output.
///
/// The wait happens on a Dispatch thread, not on the test's own: the cooperative pool has one
/// thread per core, and two tests blocked in Chromium or promtool would stall every other test.
public func runTool(_ path: String, _ arguments: [String], input: String = "") async throws -> (status: Int32, output: String) {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async {
            continuation.resume(with: Result { try runToolBlocking(path, arguments, input: input) })
        }
    }
}

/// Runs a long synchronous computation on a Dispatch thread, for the same reason as `runTool`:
/// seconds of work on the cooperative pool starve every other test's servers.
public func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(with: Result { try body() }) }
    }
}

/// `runTool` for the few places that cannot wait (a `defer`, a synchronous set-up).
public func runToolBlocking(_ path: String, _ arguments: [String], input: String = "") throws -> (status: Int32, output: String) {
    let stdin = try makePipe()
    let stdout: (read: Int32, write: Int32)
    do { stdout = try makePipe() } catch {
        close(stdin.read)
        close(stdin.write)
        throw error
    }
    let child: SpawnedChild
    do {
        defer {
            close(stdin.read)
            close(stdout.write)
        }
        child = try SpawnedChild(path: path, arguments: arguments, environment: nil, stdin: stdin.read, stdout: stdout.write, stderr: stdout.write)
    } catch {
        close(stdin.write)
        close(stdout.read)
        throw error
    }
    let bytes = Array(input.utf8)
    var offset = 0
    while offset < bytes.count {
        let written = bytes.withUnsafeBytes { write(stdin.write, $0.baseAddress! + offset, $0.count - offset) }
        if written < 0 && errno == EINTR { continue }
        if written <= 0 { break }
        offset += written
    }
    close(stdin.write)
    var data: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 64 * 1024)
    while true {
        let count = buffer.withUnsafeMutableBytes { read(stdout.read, $0.baseAddress, $0.count) }
        if count > 0 {
            data += buffer[..<count]
        } else if count < 0 && errno == EINTR {
            continue
        } else {
            break
        }
    }
    close(stdout.read)
    child.waitUntilExit()
    return (child.terminationStatus, String(decoding: data, as: UTF8.self))
}

/// Runs `ip` (iproute2) with `arguments`, for the namespaces, links and routes a test makes;
/// throws with its output when it fails (these tests need root).
public func ip(_ arguments: [String]) async throws {
    let result = try await runTool("/usr/sbin/ip", arguments)
    guard result.status == 0 else {
        throw TestFailure("ip \(arguments.joined(separator: " ")): \(result.output) (this test needs root)")
    }
}

/// A TCP socket bound to a free port on 127.0.0.1 (not listening yet); the caller closes it.
public func boundLoopbackSocket(type: Int32 = Int32(SOCK_STREAM.rawValue)) -> (fd: Int32, address: sockaddr_in) {
    let fd = socket(AF_INET, type, 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    inet_pton(AF_INET, "127.0.0.1", &address.sin_addr)
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
            bind(fd, pointer, length)
            return getsockname(fd, pointer, &length)
        }
    }
    return (fd, address)
}

/// A TCP port on 127.0.0.1 that nothing listens on (bound, then released). It is taken below
/// the kernel's ephemeral range, so that neither a server binding port 0 nor an outgoing
/// connection's own port can land on it while tests run side by side.
public func closedPort() -> UInt16 {
    while true {
        let port = UInt16.random(in: 10_000..<30_000)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        let bound = withLoopbackAddress(port: port) { bind(fd, $0, $1) }
        close(fd)
        if bound == 0 { return port }
    }
}

final class OutputBuffer: Sendable {
    private let storage = Mutex("")
    func append(_ text: String) { storage.withLock { $0 += text } }
    var text: String { storage.withLock { $0 } }
}

/// The value of one series (`name` or `name{labels}`, exactly as exposed) in a /metrics scrape.
public func metricValue(_ scrape: String, _ series: String) -> Double? {
    scrape.split(separator: "\n").first { $0.hasPrefix(series + " ") }.flatMap { Double($0.dropFirst(series.count + 1)) }
}

/// Makes a pipe the smallest the kernel allows, one page (F_SETPIPE_SZ), so that a test fills it
/// in a few lines; true when it took.
public func shrinkToOnePage(pipe descriptor: Int32) -> Bool {
    fcntl(descriptor, 1031, 4096) >= 4096
}

/// A new empty directory under the system's temporary directory.
public func makeTemporaryDirectory(_ prefix: String) throws -> URL {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    return directory
}

/// Writes `lookout.yml` in `directory`: listening on a free port, its database in the directory,
/// then `body` (the rest of the config); returns its URL.
public func writeLookoutConfig(in directory: URL, _ body: String) throws -> URL {
    let config = directory.appendingPathComponent("lookout.yml")
    try "listen: 127.0.0.1:0\ndatabase: \(directory.path)/lookout.sqlite\n\(body)\n".write(to: config, atomically: true, encoding: .utf8)
    return config
}

/// Starts lookout-sim on a free port; returns it with its base URL (`http://127.0.0.1:PORT`).
public func startSimulator(_ arguments: [String] = ["--listen", "127.0.0.1:0"]) async throws -> (ChildProcess, String) {
    let sim = try ChildProcess("lookout-sim", arguments)
    return (sim, try await sim.waitFor(#"listening on (https?://127\.0\.0\.1:\d+)/"#))
}

/// Starts `lookout serve` on `config` (which listens on port 0); returns it with its base URL.
public func startLookout(config: URL, _ extra: [String] = []) async throws -> (ChildProcess, String) {
    let lookout = try ChildProcess("lookout", ["serve", "--config", config.path] + extra)
    let port = try await lookout.waitFor(#"msg=listening address=127\.0\.0\.1:(\d+)"#)
    return (lookout, "http://127.0.0.1:\(port)")
}

/// A self-signed certificate for 127.0.0.1 (three days), made with openssl in `directory`;
/// returns the certificate and key paths.
public func makeSelfSignedCertificate(
    in directory: URL, subject: String = "/CN=127.0.0.1", alternativeNames: String = "IP:127.0.0.1"
) throws -> (cert: String, key: String) {
    let key = directory.appendingPathComponent("key.pem").path
    let cert = directory.appendingPathComponent("cert.pem").path
    let made = try runToolBlocking(
        "/usr/bin/openssl",
        [
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert, "-days", "3",
            "-subj", subject, "-addext", "subjectAltName=\(alternativeNames)",
        ])
    guard made.status == 0 else { throw TestFailure("openssl could not make a certificate: \(made.output)") }
    return (cert, key)
}
