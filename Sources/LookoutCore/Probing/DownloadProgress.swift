import Foundation

/// Where a download stands. Transitions:
/// not started → in progress → (paused → in progress)* → verifying → completed | failed,
/// and in progress or paused → cancelled | failed.
public enum DownloadState: String, Sendable, CaseIterable {
    case notStarted = "not_started"
    case inProgress = "in_progress"
    case paused
    case cancelled
    case verifying
    case completed
    case failed

    /// Whether the state machine allows moving from `self` to `next`.
    public func canMove(to next: DownloadState) -> Bool {
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
public struct DownloadProgress: Sendable, Equatable {
    public var state: DownloadState = .notStarted
    public var bytes: Int64 = 0
    /// The size announced by the server, when known.
    public var total: Int64?
    public var throughputBytesPerSecond: Double = 0
    /// How often the transfer was resumed with Range after a dropped connection.
    public var resumes = 0
    /// The SHA-256 of what was received, once complete.
    public var sha256: String?
    /// Whether the digest matched the configured one (nil: nothing to compare with).
    public var verified: Bool?

    public init() {}

    /// Between 0 and 1 when the size is known.
    public var ratio: Double? {
        guard let total, total > 0 else { return nil }
        return min(1, Double(bytes) / Double(total))
    }

    /// Moves to `next` if the state machine allows it; returns whether it did.
    @discardableResult
    public mutating func move(to next: DownloadState) -> Bool {
        guard state.canMove(to: next) else { return false }
        state = next
        return true
    }
}
