import Synchronization

/// The bytes of the shared frames a server holds: large frames that many connections queue at
/// once (the shared part of a welcome into a big session). Their memory is paid once however
/// many queues hold them, so they do not count towards a connection's queue limits, as long
/// as all of them together stay within ``budget``; past it, a connection that queues one is
/// charged for it like for any frame, and the slow-consumer rules bound the rest.
public final class SharedFrameLedger: Sendable {
    public let budget: Int
    private let held = Atomic<Int>(0)

    public init(budget: Int) {
        self.budget = budget
    }

    /// Bytes of the shared frames alive now.
    public var bytes: Int { held.load(ordering: .relaxed) }

    var isWithinBudget: Bool { bytes <= budget }

    func add(_ count: Int) { held.add(count, ordering: .relaxed) }
    func remove(_ count: Int) { held.subtract(count, ordering: .relaxed) }
}
