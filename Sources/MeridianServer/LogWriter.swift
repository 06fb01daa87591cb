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

    /// Most lines the queue holds (at least 1); a line logged while it is full is dropped.
    public let capacity: Int
    private let fd: Int32
    private let worker: WorkerThread<Line>

    /// A writer to file descriptor `fd` (default: standard error) holding at most `capacity` lines.
    public init(fd: Int32 = 2, capacity: Int = 10_000) {
        self.fd = fd
        self.capacity = max(1, capacity)
        worker = WorkerThread(name: "log-writer", limit: .init(capacity: self.capacity, whenFull: .refuseNew))
        // The thread keeps the writer alive for the life of the process.
        worker.start { turns in self.run(turns) }
    }

    /// Lines dropped so far because the queue was full.
    public var dropped: Int { worker.dropped }

    /// Queues a line; drops it (counted) if the queue is full. Never blocks on output.
    func enqueue(_ line: Line) {
        worker.submit(line)
    }

    /// Waits until every line queued so far is written: before the process exits.
    public func flush() {
        worker.flush()
    }

    /// The writer thread: each turn writes the lines queued since the last, and how many were
    /// dropped meanwhile.
    private func run(_ turns: WorkerThread<Line>.Turns) {
        var out: [UInt8] = []
        while let turn = turns.next() {
            out.removeAll(keepingCapacity: true)
            for line in turn.jobs { Self.format(line, into: &out) }
            if turn.dropped > 0 {
                Self.format(Line(time: time(nil), level: .warning, label: "meridian", message: "\(turn.dropped) log lines dropped: the log queue was full",
                                 metadata: [:], source: "meridian"), into: &out)
            }
            write(out)
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
    /// The logger's label, written before each line's metadata.
    public let label: String
    /// The writer that formats and writes this handler's lines.
    public let writer: LogWriter
    /// The least severe level this handler passes on (default `info`).
    public var logLevel: Logger.Level = .info
    /// Metadata attached to every line of this handler's logger.
    public var metadata = Logger.Metadata()
    /// Supplies metadata (e.g. from a task-local) merged into each line; explicit metadata wins.
    public var metadataProvider: Logger.MetadataProvider?

    /// A handler for the logger `label` that queues its lines on `writer`.
    public init(label: String, writer: LogWriter, metadataProvider: Logger.MetadataProvider? = LoggingSystem.metadataProvider) {
        self.label = label
        self.writer = writer
        self.metadataProvider = metadataProvider
    }

    /// The handler's metadata value for `key`, read or set.
    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// Queues the line on the writer: the handler's metadata, the provider's and the event's merged (the later winning), plus the error's message and type.
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
