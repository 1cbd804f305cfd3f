/// Durations as the numbers C APIs, configs and JSON want.
extension Duration {
    /// The whole milliseconds in this duration.
    public var totalMilliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }

    /// The duration in seconds, as a Double.
    public var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
