import Dispatch
import Foundation

/// Process signals as an async sequence, so a service can wait for SIGTERM or react to SIGHUP.
///
/// ```swift
/// for await signal in ProcessSignals.stream([SIGINT, SIGTERM]) { break }
/// ```
enum ProcessSignals {
    static func stream(_ signals: [Int32]) -> AsyncStream<Int32> {
        AsyncStream { continuation in
            let queue = DispatchQueue(label: "lookout.signals")
            let sources = signals.map { number in
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
                source.setEventHandler { continuation.yield(number) }
                source.resume()
                return source
            }
            let handles = SignalSources(sources: sources)
            continuation.onTermination = { _ in
                for source in handles.sources { source.cancel() }
            }
        }
    }

    /// Returns at the first SIGINT or SIGTERM.
    static func waitForTermination() async {
        for await _ in stream([SIGINT, SIGTERM]) { return }
    }
}

/// Dispatch sources are safe to cancel from any thread.
private struct SignalSources: @unchecked Sendable {
    let sources: [any DispatchSourceSignal]
}
