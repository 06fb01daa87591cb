#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Monotonic microseconds, shared by every thread of the process, and the encoding of a
/// send time into a drag coordinate so a receiver can measure latency without a lookup.
enum LoadClock {
    static func nowMicros() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000 + UInt64(ts.tv_nsec) / 1_000
    }

    /// Send times wrap every 100 s; latencies are far shorter.
    static let wrap: UInt64 = 100_000_000

    /// A longitude in [0, 100) carrying `micros` exactly (microsecond resolution).
    static func longitude(encoding micros: UInt64) -> Double { Double(micros % wrap) / 1_000_000 }

    /// Microseconds between the send time carried by `longitude` and `now`.
    static func latency(longitude: Double, now: UInt64) -> UInt64? {
        guard longitude >= 0, longitude < 100 else { return nil }
        let sent = UInt64((longitude * 1_000_000).rounded())
        return (now % wrap + wrap - sent) % wrap
    }

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

/// A drag move's number within its drag, carried in the move's latitude (thousandths of a degree)
/// so every receiver can tell which moves of a drag it did not get.
public enum MoveCounter {
    /// Latitude stays within 90 degrees.
    public static let maxMoves = 90_000

    static func latitude(move: Int) -> Double { Double(move) / 1000 }

    static func move(latitude: Double) -> Int32 { Int32((latitude * 1000).rounded()) }
}
