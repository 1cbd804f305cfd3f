import LookoutCore
import Synchronization
import Testing
import TestSupport

@Suite("Ticker")
struct TickerTests {
    /// Every waiter wakes, none before its deadline. (Not the order in which the woken tasks
    /// then run: waiters woken in one batch race each other on a loaded machine.)
    @Test(.timeLimit(.minutes(1))) func wakesEveryWaiterNoneBeforeItsDeadline() async throws {
        let ticker = Ticker()
        let runner = Task { await ticker.run() }
        let early = Locked<[Int]>([])
        let woken = Locked<[Int]>([])
        let start = ContinuousClock.now
        await withTaskGroup(of: Void.self) { group in
            for index in [3, 1, 2] {
                group.addTask {
                    let deadline = start + .milliseconds(20 * index)
                    await ticker.wait(until: deadline)
                    if ContinuousClock.now < deadline { early.mutate { $0.append(index) } }
                    woken.mutate { $0.append(index) }
                }
            }
        }
        #expect(early.value.isEmpty)
        #expect(woken.value.sorted() == [1, 2, 3])
        runner.cancel()
    }

    @Test(.timeLimit(.minutes(1))) func aCancelledWaiterReturnsAtOnce() async throws {
        let ticker = Ticker()
        let runner = Task { await ticker.run() }
        let waiter = Task { await ticker.wait(until: ContinuousClock.now + .seconds(3600)) }
        waiter.cancel()
        await waiter.value
        runner.cancel()
        await runner.value
    }
}
