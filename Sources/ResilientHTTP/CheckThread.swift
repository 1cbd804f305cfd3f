import Foundation
import Synchronization

/// One thread of its own (`lookout-check`) that runs, in order, the jobs of tasks that prefer it:
/// the checks of large bodies (a feed's items, a big JSON document). On the shared cooperative
/// pool, four 14 MB feeds held both of this machine's threads for 20 s, and `/-/healthy` and
/// `/metrics`, answered on that pool, timed out behind them; here they wait only for each other.
///
/// ```swift
/// let failure = await withTaskExecutorPreference(CheckThread.shared) { check(body) }
/// ```
final class CheckThread: TaskExecutor {
    static let shared = CheckThread()

    /// The thread's name, as `top -H` and `/proc/<pid>/task/*/comm` show it.
    static let threadName = "lookout-check"

    private let jobs = Mutex<[UnownedJob]>([])
    private let waiting = DispatchSemaphore(value: 0)

    private init() {
        startNamedThread(CheckThread.threadName) { [self] in run() }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        jobs.withLock { $0.append(job) }
        waiting.signal()
    }

    private func run() {
        while true {
            waiting.wait()
            guard let job = jobs.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else { continue }
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
