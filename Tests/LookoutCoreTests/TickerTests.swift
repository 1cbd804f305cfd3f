import LookoutCore
import Synchronization
import Testing
import TestSupport

@Suite("Ticker")
struct TickerTests {
    @Test func wakesWaitersInDeadlineOrder() async throws {
        let ticker = Ticker()
        let runner = Task { await ticker.run() }
        let order = Locked<[Int]>([])
        let start = ContinuousClock.now
        await withTaskGroup(of: Void.self) { group in
            for index in [3, 1, 2] {
                group.addTask {
                    await ticker.wait(until: start + .milliseconds(20 * index))
                    order.mutate { $0.append(index) }
                }
            }
        }
        #expect(order.value == [1, 2, 3])
        runner.cancel()
    }

    @Test func aCancelledWaiterReturnsAtOnce() async throws {
        let ticker = Ticker()
        let runner = Task { await ticker.run() }
        let waiter = Task { await ticker.wait(until: ContinuousClock.now + .seconds(3600)) }
        waiter.cancel()
        await waiter.value
        runner.cancel()
        await runner.value
    }
}
