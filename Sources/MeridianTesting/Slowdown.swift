import Foundation

/// How many times slower than usual this run may be: `MERIDIAN_TEST_SLOWDOWN` (`make test-tsan`
/// sets 3: ThreadSanitizer slows the code several times), else 1. Latency bounds are multiplied
/// by it; they must still tell a blocked service thread from a busy one.
public let testSlowdown = ProcessInfo.processInfo.environment["MERIDIAN_TEST_SLOWDOWN"].flatMap { Int($0) } ?? 1
