extension WorkerThread {
    /// A bound on a worker's queue: a thread that falls behind costs memory up to `capacity`,
    /// never a wait for whoever submits. What does not fit is counted in
    /// ``WorkerThread/dropped`` and in the next turn's ``Turn/dropped``.
    public struct Limit: Sendable {
        public enum Overflow: Sendable {
            /// A job that does not fit is refused; the queued ones stay.
            case refuseNew
            /// A job always goes in; the oldest give way until the queue fits again (down to
            /// the newest alone, whatever it weighs).
            case dropOldest
        }

        /// What the queued jobs may weigh together.
        public var capacity: Int
        public var whenFull: Overflow
        /// What a job weighs against `capacity` (and counts when dropped).
        public var weight: @Sendable (Job) -> Int

        /// A bound of `capacity`, each job weighing `weight` (one by default).
        public init(capacity: Int, whenFull: Overflow, weight: @escaping @Sendable (Job) -> Int = { _ in 1 }) {
            self.capacity = capacity
            self.whenFull = whenFull
            self.weight = weight
        }
    }
}
