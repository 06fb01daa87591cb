import Foundation
import Logging
import MeridianServer
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A pipe whose read end is read by the test.
private final class Pipe {
    let read: Int32, write: Int32

    init() {
        var fds: [Int32] = [0, 0]
        precondition(pipe(&fds) == 0)
        (read, write) = (fds[0], fds[1])
        _ = fcntl(read, F_SETFL, fcntl(read, F_GETFL) | O_NONBLOCK)
    }

    deinit {
        close(read)
        close(write)
    }

    /// What can be read now.
    func drain() -> [UInt8] {
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = Glibc.read(read, &chunk, chunk.count)
            guard n > 0 else { return out }
            out.append(contentsOf: chunk[0..<n])
        }
    }
}

@Suite struct LogWriterTests {
    @Test func linesAreWrittenInTheFormatOfStreamLogHandler() throws {
        let pipe = Pipe()
        let writer = LogWriter(fd: pipe.write, capacity: 100)
        var logger = Logger(label: "meridian.test") { BackgroundLogHandler(label: $0, writer: writer) }
        logger[metadataKey: "z"] = "last"
        logger.info("session opened", metadata: ["session": "s1", "epoch": "9f"])
        logger.debug("not at info")
        writer.flush()
        let text = String(decoding: pipe.drain(), as: UTF8.self)
        let pattern = #/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d{4} info meridian\.test: epoch=9f session=s1 z=last \[MeridianServerTests\] session opened\n$/#
        #expect(text.wholeMatch(of: pattern) != nil, "\(text)")
    }

    @Test func aFullQueueDropsAndCountsLinesAndNeverBlocksTheLogger() throws {
        // Nobody reads the pipe (64 KiB) until the end: the writer is stuck in write() and the queue fills.
        let pipe = Pipe()
        let writer = LogWriter(fd: pipe.write, capacity: 10)
        let logger = Logger(label: "t") { BackgroundLogHandler(label: $0, writer: writer) }
        let total = 5_000
        let logged = DispatchSemaphore(value: 0)
        Thread {
            for n in 0..<total { logger.info("line \(n) \(String(repeating: "x", count: 100))") }
            logged.signal()
        }.start()
        #expect(logged.wait(timeout: .now() + 10) == .success, "logging waited for the output")
        #expect(writer.dropped > 0)

        let flushed = DispatchSemaphore(value: 0)
        Thread {
            writer.flush()
            flushed.signal()
        }.start()
        var bytes: [UInt8] = []
        while flushed.wait(timeout: .now() + 0.01) == .timedOut { bytes += pipe.drain() }
        bytes += pipe.drain()
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n")
        let written = lines.filter { $0.contains("] line ") }.count
        let reported = lines.compactMap { line in
            line.firstMatch(of: #/\] (\d+) log lines dropped: the log queue was full/#).map { Int($0.1)! }
        }.reduce(0, +)
        #expect(written + writer.dropped == total)
        #expect(reported == writer.dropped)
    }
}
