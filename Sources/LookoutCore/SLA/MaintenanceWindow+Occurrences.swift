extension MaintenanceWindow {
    /// Every stretch of `span` the window covers, as an SLA report leaves it out.
    package func occurrences(in span: Range<Int64>) -> [Range<Int64>] {
        let active = max(span.lowerBound, activeFromMs)..<max(max(span.lowerBound, activeFromMs), min(span.upperBound, activeUntilMs))
        guard !active.isEmpty else { return [] }
        switch schedule {
        case .once(let start, let end):
            let lower = max(start, active.lowerBound)
            let upper = min(end, active.upperBound)
            return lower < upper ? [lower..<upper] : []
        case .recurring(_, _, let durationMs, _):
            var found: [Range<Int64>] = []
            // One that began before the span may still run into it.
            var cursor = active.lowerBound - durationMs - 1
            while let (start, end) = next(afterMs: cursor, withinMs: max(1, active.upperBound - cursor)), start < active.upperBound {
                let lower = max(start, active.lowerBound)
                let upper = min(end, active.upperBound)
                if lower < upper { found.append(lower..<upper) }
                cursor = start
            }
            return found
        }
    }
}
