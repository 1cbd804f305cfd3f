/// A set of half-open time intervals `[start, end)` in milliseconds, kept sorted and disjoint:
/// what an SLA report adds up and takes away (maintenance, time not measured, downtime).
package struct Intervals: Sendable, Equatable {
    package private(set) var spans: [Range<Int64>] = []

    package init() {}

    package init(_ spans: some Sequence<Range<Int64>>) {
        for span in spans { insert(span) }
    }

    /// Adds `span`, merging it with any it touches.
    package mutating func insert(_ span: Range<Int64>) {
        guard !span.isEmpty else { return }
        var merged = span
        var kept: [Range<Int64>] = []
        kept.reserveCapacity(spans.count + 1)
        var placed = false
        for existing in spans {
            if existing.upperBound < merged.lowerBound {
                kept.append(existing)
            } else if merged.upperBound < existing.lowerBound {
                if !placed {
                    kept.append(merged)
                    placed = true
                }
                kept.append(existing)
            } else {
                merged = min(existing.lowerBound, merged.lowerBound)..<max(existing.upperBound, merged.upperBound)
            }
        }
        if !placed { kept.append(merged) }
        spans = kept
    }

    /// The milliseconds covered.
    package var total: Int64 {
        spans.reduce(0) { $0.addingClamped($1.upperBound - $1.lowerBound) }
    }

    /// What of `self` lies within `span`.
    package func clamped(to span: Range<Int64>) -> Intervals {
        var result = Intervals()
        result.spans = spans.compactMap { existing in
            let lower = max(existing.lowerBound, span.lowerBound)
            let upper = min(existing.upperBound, span.upperBound)
            return lower < upper ? lower..<upper : nil
        }
        return result
    }

    /// What of `self` `other` does not cover.
    package func subtracting(_ other: Intervals) -> Intervals {
        var result = Intervals()
        var index = 0
        for span in spans {
            var lower = span.lowerBound
            while index < other.spans.count, other.spans[index].upperBound <= lower { index += 1 }
            var probe = index
            while probe < other.spans.count, other.spans[probe].lowerBound < span.upperBound {
                let cut = other.spans[probe]
                if cut.lowerBound > lower { result.spans.append(lower..<cut.lowerBound) }
                lower = max(lower, cut.upperBound)
                probe += 1
            }
            if lower < span.upperBound { result.spans.append(lower..<span.upperBound) }
        }
        return result
    }

    /// The milliseconds `span` shares with `self`.
    package func overlap(with span: Range<Int64>) -> Int64 {
        clamped(to: span).total
    }
}
