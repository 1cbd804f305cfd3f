import LookoutCore
import Testing

/// The outbox's wake-up: a poke ends one wait, and leaves nothing behind for the next one (the
/// cancelled timer of a poked wait signalled in turn, so every later wait returned at once: the
/// deliverer spun a core and grew by a task per turn from the first alert on).
@Suite("outbox wake-up")
struct AsyncWakeUpTests {
    @Test func aPokedWaitLeavesNoSignalBehind() async {
        let wake = AsyncWakeUp()
        for _ in 0..<3 {
            wake.signal()
            await wake.wait(timeout: .seconds(3600))
            #expect(!wake.hasPendingSignal)
        }
    }

    @Test func aSignalWhileWaitingEndsTheWait() async {
        let wake = AsyncWakeUp()
        async let waited: Void = wake.wait(timeout: .seconds(3600))
        // One signal: the waiter takes it, whether it was waiting already or comes after.
        wake.signal()
        await waited
        #expect(!wake.hasPendingSignal)
    }
}
