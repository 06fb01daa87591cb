import Foundation

extension Duration {
    /// Whole microseconds, rounded down, never negative.
    package var microseconds: Int64 {
        let (seconds, attoseconds) = components
        return max(0, seconds * 1_000_000 + attoseconds / 1_000_000_000_000)
    }

    /// Whole seconds clamped to the range lws's 16-bit policy fields hold (at least 1).
    package var clampedSeconds: UInt16 {
        UInt16(clamping: max(1, components.seconds))
    }

    package var timeInterval: TimeInterval {
        let (seconds, attoseconds) = components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}
