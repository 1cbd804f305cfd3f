import GRDB

/// Reading a row the way a damaged or hand-edited file may hold it. GRDB's typed subscript
/// traps on a value it cannot convert (text where an integer belongs, NULL in a non-optional
/// read); these give nil instead, for the caller to leave the row out or take a default.
extension Row {
    /// The column as an integer; nil for NULL, text, a blob or a real that is not a whole Int64.
    func integer(_ column: String) -> Int64? {
        Int64.fromDatabaseValue(self[column] as DatabaseValue)
    }

    /// The column as a count, kept within 0…1,000,000,000 so no arithmetic on it can overflow.
    func boundedCount(_ column: String) -> Int? {
        integer(column).map { Int(Swift.min(Swift.max($0, 0), 1_000_000_000)) }
    }

    /// The column as a finite real (an integer read as one); nil for NULL, text, a blob, NaN
    /// or an infinity.
    func real(_ column: String) -> Double? {
        // A switch on the storage: `Double.fromDatabaseValue(…).flatMap` crashed Swift 6.3.1's
        // optimiser (CopyPropagation) in release builds.
        switch (self[column] as DatabaseValue).storage {
        case .double(let value): value.isFinite ? value : nil
        case .int64(let value): Double(value)
        default: nil
        }
    }

    /// The column as text; nil for NULL or a number.
    func text(_ column: String) -> String? {
        String.fromDatabaseValue(self[column] as DatabaseValue)
    }
}
