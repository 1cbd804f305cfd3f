import LookoutCore
import Synchronization
import Testing

private final class Served: Sendable {
    let values = Mutex<[Int]>([])
}

@Suite("probe concurrency limit")
struct AsyncSemaphoreTests {
    /// Thousands waiting (every source's probe, when each lasts its whole timeout) are served in
    /// arrival order, across the removals of the served ones, and the permit comes back after.
    @Test func thousandsOfWaitersAreServedInArrivalOrder() async {
        let semaphore = AsyncSemaphore(1)
        await semaphore.wait()
        let order = Served()
        let count = 3_000
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<count {
                group.addTask {
                    await semaphore.wait()
                    order.values.withLock { $0.append(index) }
                    semaphore.signal()
                }
                // Each waiter is queued before the next starts, so arrival order is known.
                while semaphore.waiting < index + 1 { await Task.yield() }
            }
            semaphore.signal()
        }
        #expect(order.values.withLock { $0 } == Array(0..<count))
        #expect(semaphore.waiting == 0)
        // The one permit is free again: taken without waiting, and a second wait queues.
        await semaphore.wait()
        let second = Task { await semaphore.wait() }
        while semaphore.waiting < 1 { await Task.yield() }
        semaphore.signal()
        await second.value
        #expect(semaphore.waiting == 0)
    }
}
