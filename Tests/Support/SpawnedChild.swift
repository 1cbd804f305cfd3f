import Foundation
import Synchronization

/// A child process started with `posix_spawn`, for what tests run.
///
/// Not Foundation's `Process`: on Linux its `run()` scans `/proc/self/fd` and copies 256 bytes of
/// each entry's name, reading past short records (swift-corelibs-foundation #5472); with the
/// descriptors a full `make test` holds, the last record can end at an unmapped page, and the
/// whole test process crashed in `Process.run()` three runs in a row. Here the child closes
/// every descriptor from 3 up itself (`posix_spawn_file_actions_addclosefrom_np`, glibc 2.34),
/// as `Process` does, so no test's socket or pipe leaks into a server it starts.
final class SpawnedChild: Sendable {
    let pid: pid_t
    let path: String
    /// The exit status, or the signal that ended it (as `Process.terminationStatus`); nil while
    /// it runs.
    private let ended = Mutex<Int32?>(nil)
    private let exited = DispatchSemaphore(value: 0)

    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    private static let addCloseFrom: AddCloseFrom? = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np")
        .map { unsafeBitCast($0, to: AddCloseFrom.self) }

    /// Starts `path` with `arguments`; its stdin, stdout and stderr are the descriptors given
    /// (stdin inherited when nil), and `environment` replaces this process's when given.
    init(path: String, arguments: [String], environment: [String: String]?, stdin: Int32?, stdout: Int32, stderr: Int32) throws {
        self.path = path
        guard let addCloseFrom = SpawnedChild.addCloseFrom else { throw TestFailure("glibc has no posix_spawn_file_actions_addclosefrom_np") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let stdin { posix_spawn_file_actions_adddup2(&actions, stdin, 0) }
        posix_spawn_file_actions_adddup2(&actions, stdout, 1)
        posix_spawn_file_actions_adddup2(&actions, stderr, 2)
        _ = addCloseFrom(&actions, 3)
        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        let variables = environment ?? ProcessInfo.processInfo.environment
        let envp: [UnsafeMutablePointer<CChar>?] = variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, path, &actions, nil, argv, envp)
        guard status == 0 else { throw TestFailure("cannot start \(path): \(String(cString: strerror(status)))") }
        self.pid = pid
        // One thread per child waits for it: nothing else in the test process reaps it.
        let child = pid
        Thread { [self] in
            var status: Int32 = 0
            while waitpid(child, &status, 0) < 0 && errno == EINTR {}
            let code = status & 0x7F == 0 ? (status >> 8) & 0xFF : status & 0x7F
            ended.withLock { $0 = code }
            exited.signal()
        }.start()
    }

    var isRunning: Bool { ended.withLock { $0 == nil } }

    /// The exit status (or the signal); -1 while it runs.
    var terminationStatus: Int32 { ended.withLock { $0 ?? -1 } }

    func waitUntilExit() {
        exited.wait()
        exited.signal()
    }
}

/// A pipe whose ends are closed on exec (a child started elsewhere closes them anyway: only what
/// it is given as stdin, stdout or stderr reaches it).
func makePipe() throws -> (read: Int32, write: Int32) {
    var fds: [Int32] = [0, 0]
    guard pipe(&fds) == 0 else { throw TestFailure("pipe: \(String(cString: strerror(errno)))") }
    for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
    return (fds[0], fds[1])
}
