#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Monotonic microseconds, shared by every thread of the process (drag moves carry their send
/// time in them: ``MoveCoding``), and the process's CPU time.
enum LoadClock {
    static func nowMicros() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000 + UInt64(ts.tv_nsec) / 1_000
    }

    /// Send times wrap every 100 s; latencies are far shorter.
    static let wrap: UInt64 = 100_000_000

    /// CPU seconds (user + system) used by this process so far.
    static func cpuSeconds() -> Double {
        var usage = rusage()
        #if canImport(Glibc)
        getrusage(RUSAGE_SELF.rawValue, &usage)
        #else
        getrusage(RUSAGE_SELF, &usage)
        #endif
        func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }
}

/// A drag move's number within its drag, carried in the move's latitude (thousandths of a degree
/// when every client sees everything; ``MoveCoding``) so every receiver can tell which moves of a
/// drag it did not get.
public enum MoveCounter {
    /// Latitude stays within 90 degrees (around a city: ``MoveCoding/maxCityMoves``).
    public static let maxMoves = 90_000

    static func latitude(move: Int) -> Double { MoveCoding.world.latitude(move: move) }
}
