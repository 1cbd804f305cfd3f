extension Duration {
    /// The timeout of a test's request whose answer is its subject, not its speed. A full
    /// `make test` on two cores has starved in-process servers for over 10 s (TransferRequest's
    /// default) at its start, and turned a 429 into a response timeout; a hang still fails.
    public static let patient: Duration = .seconds(60)
}
