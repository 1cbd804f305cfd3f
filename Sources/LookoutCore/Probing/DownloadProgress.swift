import Foundation

/// Where a download stands. Transitions:
/// not started → in progress → (paused → in progress)* → verifying → completed | failed,
/// and in progress or paused → cancelled | failed.
package enum DownloadState: String, Sendable, CaseIterable {
    case notStarted = "not_started"
    case inProgress = "in_progress"
    case paused
    case cancelled
    case verifying
    case completed
    case failed

    /// Whether the state machine allows moving from `self` to `next`.
    package func canMove(to next: DownloadState) -> Bool {
        switch (self, next) {
        case (.notStarted, .inProgress), (.inProgress, .paused), (.paused, .inProgress), (.inProgress, .verifying),
            (.verifying, .completed), (.verifying, .failed), (.inProgress, .failed), (.paused, .failed),
            (.inProgress, .cancelled), (.paused, .cancelled), (.notStarted, .failed), (.notStarted, .cancelled):
            return true
        case (.completed, .inProgress), (.failed, .inProgress), (.cancelled, .inProgress):
            return true  // the next probe starts over
        default:
            return false
        }
    }
}

/// A download's progress, for the status page and metrics.
package struct DownloadProgress: Sendable, Equatable {
    package var state: DownloadState = .notStarted
    package var bytes: Int64 = 0
    /// The size announced by the server, when known.
    package var total: Int64?
    package var throughputBytesPerSecond: Double = 0
    /// How often the transfer was resumed with Range after a dropped connection.
    package var resumes = 0
    /// The SHA-256 of what was received, once complete.
    package var sha256: String?
    /// Whether the digest matched the configured one (nil: nothing to compare with).
    package var verified: Bool?

    package init() {}

    /// Between 0 and 1 when the size is known.
    package var ratio: Double? {
        guard let total, total > 0 else { return nil }
        return min(1, Double(bytes) / Double(total))
    }

    /// Moves to `next` if the state machine allows it; returns whether it did.
    @discardableResult
    package mutating func move(to next: DownloadState) -> Bool {
        guard state.canMove(to: next) else { return false }
        state = next
        return true
    }
}
