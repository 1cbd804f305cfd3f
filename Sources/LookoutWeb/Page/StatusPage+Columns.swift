/// The columns of a source's row, declared once: the header, each cell, the history row's span
/// and the column widths are all made from this list. A new column is one entry here and the
/// function that writes its cell.
extension StatusPage {
    struct Column: Sendable {
        /// The header, and the label beside the value in the phone layout.
        let title: String
        /// Part of the width of the table, as CSS (`20%`); nil: what is left.
        let width: String?
        /// Shown only on the on-call page, never to customers.
        let onCallOnly: Bool
        /// The cell's inner HTML (the first column writes its whole `<th>`).
        let content: @Sendable (_ index: Int, _ view: View) -> String
        /// A figure customers see only with `status_page.public_details` (percentiles, rates).
        var detail = false
        /// Whether `content` writes the whole cell (the row header) rather than its inside.
        var wholeCell = false
        /// The label beside the value at phone width, where a longer name fits; nil: `title`.
        var phoneLabel: String? = nil

        /// The cell, written into `output` (not joined into a String first: a row's cells
        /// were copied twice more that way).
        func write(_ index: Int, _ view: View, into output: inout HTMLOutput) {
            guard !wholeCell else {
                output += content(index, view)
                return
            }
            output += "<td data-label=\""
            output += phoneLabel ?? title
            output += "\">"
            output += content(index, view)
            output += "</td>"
        }

        /// The header cell; its class, `col-N` by the column's place in `allColumns`, carries the
        /// width (a number, so the public page's style sheet names no on-call column).
        func header(_ number: Int) -> String { "<th scope=\"col\" class=\"col-\(number)\">\(title)</th>" }
    }

    static let allColumns: [Column] = [
        Column(title: "Source", width: "20%", onCallOnly: false, content: nameCell, wholeCell: true),
        Column(title: "State", width: "13%", onCallOnly: false, content: stateCell),
        Column(title: "Last result", width: nil, onCallOnly: false, content: resultCell),
        Column(title: "Error rate (1 h)", width: "15%", onCallOnly: false, content: errorRateCell, detail: true),
        Column(title: "Response time p50 / p95", width: "13%", onCallOnly: false, content: responseTimeCell, detail: true),
        Column(title: "Breaker", width: "9%", onCallOnly: true, content: breakerCell, phoneLabel: "Circuit breaker"),
    ]

    /// The public page's columns, worked out once (each row of each render asks): with
    /// `public_details`, and without (states only, in words customers know).
    private static let publicColumns = allColumns.filter { !$0.onCallOnly }
    private static let publicStateColumns = publicColumns.filter { !$0.detail }

    static func columns(for view: View) -> [Column] {
        view.audience == .onCall ? allColumns : view.snapshot.config.statusPage.publicDetails ? publicColumns : publicStateColumns
    }

    /// The header row of a group's table.
    static func columnHeaders(for view: View) -> String {
        let shown = columns(for: view)
        let numbered = allColumns.enumerated().filter { column in shown.contains { $0.title == column.element.title } }
        return "<thead><tr>" + numbered.map { $0.element.header($0.offset + 1) }.joined() + "</tr></thead>\n"
    }

    /// The widths, for the page's style sheet.
    static let columnWidths = allColumns.enumerated().compactMap { number, column in column.width.map { "th.col-\(number + 1) { width: \($0); }" } }
        .joined(separator: " ")

    static func resultCell(_ index: Int, _ view: View) -> String {
        let entry = view.snapshot.records[index]
        return view.isPublic ? publicResult(entry, nowMs: view.nowMs) : lastResult(entry, nowMs: view.nowMs)
    }

    static func breakerCell(_ index: Int, _ view: View) -> String {
        breaker(view.snapshot.breakers[index], nowMs: view.nowMs)
    }
}
