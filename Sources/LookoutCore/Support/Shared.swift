/// An immutable value kept behind a reference, so that copies of a struct holding it share one
/// instance instead of carrying its bytes inline. Equal when the values are.
package final class Shared<Value: Sendable & Equatable>: Sendable, Equatable {
    package let value: Value

    package init(_ value: Value) {
        self.value = value
    }

    package static func == (lhs: Shared, rhs: Shared) -> Bool {
        lhs === rhs || lhs.value == rhs.value
    }
}
