import Foundation

/// The calling thread's name as the kernel has it (what `top -H` shows), to tell which thread
/// ran a piece of work.
public func currentThreadName() -> String {
    let comm = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
    return comm.hasSuffix("\n") ? String(comm.dropLast()) : comm
}
