/// The columns of a source's row, declared once: the header, each cell, the history row's span
/// and the column widths are all made from this list. A new column is one entry here and the
/// function that writes its cell.
extension StatusPage {
    struct Column: Sendable {
        /// A CSS class name, `col-ID`, which carries the width.
        let id: String
        /// The header, and the label beside the value in the phone layout.
        let title: String
        /// Part of the width of the table, as CSS (`20%`); nil: what is left.
        let width: String?
        /// Shown only on the on-call page, never to customers.
        let onCallOnly: Bool
        /// The cell's inner HTML (the first column writes its whole `<th>`).
        let content: @Sendable (_ index: Int, _ view: View) -> String
        /// Whether `content` writes the whole cell (the row header) rather than its inside.
        var wholeCell = false
        /// The label beside the value at phone width, where a longer name fits; nil: `title`.
        var phoneLabel: String? = nil

        func cell(_ index: Int, _ view: View) -> String {
            wholeCell ? content(index, view) : "<td data-label=\"\(phoneLabel ?? title)\">" + content(index, view) + "</td>"
        }

        var header: String { "<th scope=\"col\" class=\"col-\(id)\">\(title)</th>" }
    }

    static let allColumns: [Column] = [
        Column(id: "source", title: "Source", width: "20%", onCallOnly: false, content: nameCell, wholeCell: true),
        Column(id: "state", title: "State", width: "13%", onCallOnly: false, content: stateCell),
        Column(id: "result", title: "Last result", width: nil, onCallOnly: false, content: resultCell),
        Column(id: "errors", title: "Error rate (1 h)", width: "15%", onCallOnly: false, content: errorRateCell),
        Column(id: "latency", title: "Response time p50 / p95", width: "13%", onCallOnly: false, content: responseTimeCell),
        Column(id: "breaker", title: "Breaker", width: "9%", onCallOnly: true, content: breakerCell, phoneLabel: "Circuit breaker"),
    ]

    static func columns(for audience: Audience) -> [Column] {
        audience == .public ? allColumns.filter { !$0.onCallOnly } : allColumns
    }

    /// The header row of a group's table.
    static func columnHeaders(for audience: Audience) -> String {
        "<thead><tr>" + columns(for: audience).map(\.header).joined() + "</tr></thead>\n"
    }

    /// The widths, for the page's style sheet.
    static let columnWidths = allColumns.compactMap { column in column.width.map { "th.col-\(column.id) { width: \($0); }" } }.joined(separator: " ")

    static func resultCell(_ index: Int, _ view: View) -> String {
        let entry = view.snapshot.records[index]
        return view.isPublic ? publicResult(entry, nowMs: view.nowMs) : lastResult(entry, nowMs: view.nowMs)
    }

    static func breakerCell(_ index: Int, _ view: View) -> String {
        breaker(view.snapshot.breakers[index], nowMs: view.nowMs)
    }
}
