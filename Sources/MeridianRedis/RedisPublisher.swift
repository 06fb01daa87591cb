import Foundation
import MeridianSync

/// Publishes messages from any thread without waiting for Redis: they queue, and a thread of
/// its own writes whatever has queued in one pipeline (many messages per round trip), in the
/// order they were queued. A slow or unreachable Redis holds back this thread, never the caller.
///
/// When a pipeline fails (Redis unreachable), its messages are lost: `onLost` gets them, so
/// that whoever relied on them can recover (Meridian closes the members they were for, who
/// then resume). The next messages try a new connection.
public final class RedisPublisher: Sendable {
    /// One message to publish: the bytes and the channel they go to.
    public struct Message: Sendable {
        /// The Redis channel the message is published to.
        public var channel: String
        /// The bytes published, as they are.
        public var payload: [UInt8]
        /// A message of `payload` for `channel`.
        public init(channel: String, payload: [UInt8]) {
            self.channel = channel
            self.payload = payload
        }
    }

    /// The Redis server the messages are published to.
    public let address: RedisAddress
    private let timeout: Duration
    private let onLost: @Sendable ([Message], RedisError) -> Void
    private let worker = WorkerThread<Message>(name: "redis-publish")
    /// Messages handed to Redis, and pipelines that failed: for metrics and tests.
    private let tally = Locked((published: 0, failures: 0))

    /// Starts the publishing thread for `address` (each connect, read or write waiting at most
    /// `timeout`); `onLost` is called on it with the messages of each failed pipeline, and why.
    public init(address: RedisAddress, timeout: Duration = .seconds(2), onLost: @escaping @Sendable ([Message], RedisError) -> Void) {
        self.address = address
        self.timeout = timeout
        self.onLost = onLost
        // The thread keeps the publisher alive until `stop()` ends it.
        worker.start { turns in self.run(turns) }
    }

    /// Queues `payload` for `channel`.
    public func publish(_ payload: [UInt8], to channel: String) {
        worker.submit(Message(channel: channel, payload: payload))
    }

    /// Messages published so far, and pipelines that failed.
    public var counts: (published: Int, failures: Int) { tally.withLock { $0 } }

    /// Publishes what is queued, then ends the thread; returns when it has ended.
    public func stop() {
        worker.stop()
    }

    /// The publishing thread: each turn writes what was queued since the last in one pipeline.
    private func run(_ turns: WorkerThread<Message>.Turns) {
        var connection: RedisConnection?
        while let turn = turns.next() {
            let batch = turn.jobs
            do throws(RedisError) {
                let open: RedisConnection
                // A connection Redis closed while it was idle (a restart) would lose the whole
                // pipeline: checked first, and replaced, so that nothing is lost when Redis is back.
                if let connection, !connection.hasEnded {
                    open = connection
                } else {
                    open = try RedisConnection(to: address, timeout: timeout)
                }
                connection = open
                _ = try open.pipeline(batch.map { [Array("PUBLISH".utf8), Array($0.channel.utf8), $0.payload] })
                tally.withLock { $0.published += batch.count }
            } catch {
                connection = nil
                tally.withLock { $0.failures += 1 }
                onLost(batch, error)
            }
        }
    }
}
