import Foundation

/// Starts a thread of our own that carries `name` in the kernel, as `top -H`, `perf` and
/// `/proc/<pid>/task/*/comm` show it, before the first line of `body` runs.
///
/// Foundation's `Thread.name` cannot be trusted for this on Linux. Set from the new thread, it
/// names nothing until `start` has stored the thread's handle in the starting one; set from the
/// starting one, it can be overwritten by the new thread, which copies its parent's name onto
/// itself as it begins. Either way a few threads in a hundred kept the wrong name. The thread
/// writes its own `comm` instead, which nothing races.
package func startNamedThread(_ name: String, _ body: @escaping @Sendable () -> Void) {
    Thread {
        nameThisThread(name)
        body()
    }.start()
}

/// What `pthread_setname_np` does, which Swift does not import (it needs `_GNU_SOURCE`): the
/// kernel keeps the first 15 bytes.
private func nameThisThread(_ name: String) {
    let file = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
    guard file >= 0 else { return }
    defer { close(file) }
    let bytes = Array(name.utf8.prefix(15))
    _ = bytes.withUnsafeBytes { write(file, $0.baseAddress, $0.count) }
}
