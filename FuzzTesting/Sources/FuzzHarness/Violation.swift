/// A broken invariant found by a harness: what was checked and what was seen.
public struct Violation: Error, CustomStringConvertible, Sendable {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Throws a ``Violation`` unless `condition` holds.
@inline(__always)
func require(_ condition: Bool, _ message: @autoclosure () -> String) throws(Violation) {
    if !condition { throw Violation(message()) }
}
