import MeridianSync
import Foundation
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// Writes log lines on a thread of its own, so that logging never waits for a terminal, a
/// pipe or journald on the thread that logs (above all the service thread).
///
/// The queue holds at most `capacity` lines. When it is full, a new line is dropped and
/// counted, never waited for: ``dropped`` counts them (and `/metrics` reports them as
/// `meridian_log_lines_dropped_total`), and once there is room again the writer says how
/// many were lost in a line of its own. Lines are formatted (timestamp, metadata) on the
/// writer thread, in the format of swift-log's `StreamLogHandler`.
public final class LogWriter: Sendable {
    /// One log call, as queued.
    struct Line {
        var time: time_t
        var level: Logger.Level
        var label: String
        var message: Logger.Message
        var metadata: Logger.Metadata
        var source: String
    }

    public let capacity: Int
    private let fd: Int32
    /// What the writer thread shares with the threads that log and flush.
    private struct State: Awaitable {
        var queue: [Line] = []
        var writing = false
        var droppedTotal = 0
        var droppedUnreported = 0
        /// The writer thread found the queue empty and waits on `wake`: the next line clears
        /// this and signals, once.
        var sleeping = false
        /// Threads in ``flush()``, woken whenever the writer has written everything queued.
        var waiters: [DispatchSemaphore] = []
    }

    private let state = Locked(State())
    private let wake = DispatchSemaphore(value: 0)

    /// A writer to file descriptor `fd` (default: standard error) holding at most `capacity` lines.
    public init(fd: Int32 = 2, capacity: Int = 10_000) {
        self.fd = fd
        self.capacity = max(1, capacity)
        // The thread keeps the writer alive for the life of the process.
        let thread = Thread { self.run() }
        thread.name = "meridian-log"
        thread.start()
    }

    /// Lines dropped so far because the queue was full.
    public var dropped: Int { state.withLock { $0.droppedTotal } }

    /// Queues a line; drops it (counted) if the queue is full. Never blocks on output.
    func enqueue(_ line: Line) {
        let wakeWriter = state.withLock { state -> Bool in
            guard state.queue.count < capacity else {
                state.droppedTotal += 1
                state.droppedUnreported += 1
                return false
            }
            state.queue.append(line)
            defer { state.sleeping = false }
            return state.sleeping
        }
        if wakeWriter { wake.signal() }
    }

    /// Waits until every line queued so far is written: before the process exits.
    public func flush() {
        state.wait { $0.queue.isEmpty && !$0.writing }
    }

    private func run() {
        var out: [UInt8] = []
        var lines: [Line] = []
        while true {
            // nil: the queue was empty and the writer sleeps; else the lines dropped unreported.
            let taken = state.withLock { state -> Int? in
                if state.queue.isEmpty {
                    state.sleeping = true
                    return nil
                }
                // The two buffers trade places: neither is copied or reallocated.
                swap(&lines, &state.queue)
                defer { state.droppedUnreported = 0 }
                state.writing = true
                return state.droppedUnreported
            }
            guard let lost = taken else {
                wake.wait()
                continue
            }

            out.removeAll(keepingCapacity: true)
            for line in lines { Self.format(line, into: &out) }
            if lost > 0 {
                Self.format(Line(time: time(nil), level: .warning, label: "meridian", message: "\(lost) log lines dropped: the log queue was full",
                                 metadata: [:], source: "meridian"), into: &out)
            }
            write(out)
            lines.removeAll(keepingCapacity: true)

            let waiters = state.withLock { state in
                state.writing = false
                guard state.queue.isEmpty else { return [DispatchSemaphore]() }
                defer { state.waiters.removeAll() }
                return state.waiters
            }
            for waiter in waiters { waiter.signal() }
        }
    }

    /// All of `bytes`, however many writes it takes; gives up on an error other than EINTR.
    private func write(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let n = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if n > 0 {
                    offset += n
                } else if n < 0 && errno == EINTR {
                    continue
                } else {
                    return
                }
            }
        }
    }

    /// `2026-11-22T10:00:00+0000 info meridian: key=value [Source] message`, as StreamLogHandler writes it.
    static func format(_ line: Line, into out: inout [UInt8]) {
        var time = line.time
        var parts = tm()
        var stamp = [Int8](repeating: 0, count: 64)
        localtime_r(&time, &parts)
        let count = strftime(&stamp, stamp.count, "%Y-%m-%dT%H:%M:%S%z", &parts)
        out.append(contentsOf: stamp.prefix(count).map { UInt8(bitPattern: $0) })
        out.append(contentsOf: " \(line.level)\(line.label.isEmpty ? "" : " ")\(line.label):".utf8)
        for (key, value) in line.metadata.sorted(by: { $0.key < $1.key }) {
            out.append(contentsOf: " \(key)=\(value)".utf8)
        }
        out.append(contentsOf: " [\(line.source)] \(line.message)\n".utf8)
    }
}

/// A swift-log handler that hands each line to a ``LogWriter``: the logging thread only
/// copies the line's parts into a queue.
public struct BackgroundLogHandler: LogHandler {
    public let label: String
    public let writer: LogWriter
    public var logLevel: Logger.Level = .info
    public var metadata = Logger.Metadata()
    public var metadataProvider: Logger.MetadataProvider?

    public init(label: String, writer: LogWriter, metadataProvider: Logger.MetadataProvider? = LoggingSystem.metadataProvider) {
        self.label = label
        self.writer = writer
        self.metadataProvider = metadataProvider
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get(), !provided.isEmpty { merged.merge(provided) { _, new in new } }
        if let explicit = event.metadata, !explicit.isEmpty { merged.merge(explicit) { _, new in new } }
        if let error = event.error {
            merged["error.message"] = "\(error)"
            merged["error.type"] = "\(String(reflecting: type(of: error)))"
        }
        writer.enqueue(LogWriter.Line(
            time: time(nil), level: event.level, label: label, message: event.message, metadata: merged, source: event.source))
    }
}
