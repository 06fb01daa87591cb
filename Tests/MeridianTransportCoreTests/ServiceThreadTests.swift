import Foundation
import MeridianTransportCore
import MeridianSync
import Testing
internal import CLibWebSockets

/// What happened, in order, from any thread.
final class Journal: Sendable {
    private let entries = Locked<[String]>([])

    func add(_ entry: String) { entries.withLock { $0.append(entry) } }
    var all: [String] { entries.withLock { $0 } }
}

/// A loop on an lws context with no listener and no connections, recording what runs and where.
final class RecordingLoop: ServiceLoop {
    let journal: Journal
    let thread: ServiceThread<RecordingLoop>
    let allocations = CAllocations()
    /// After this many ticks the loop asks to end.
    let ticksBeforeExit: Int?
    var ticks = 0

    init(journal: Journal, thread: ServiceThread<RecordingLoop>, ticksBeforeExit: Int?) {
        self.journal = journal
        self.thread = thread
        self.ticksBeforeExit = ticksBeforeExit
    }

    /// The set-up handed to ``ServiceThread/start(_:)``.
    static func setUp(
        journal: Journal, thread: ServiceThread<RecordingLoop>, tick: Duration? = nil, ticksBeforeExit: Int? = nil
    ) -> @Sendable () throws(TransportError) -> ServiceStart<RecordingLoop, Int> {
        { () throws(TransportError) in
            journal.add("setUp on service thread: \(thread.isCurrent)")
            let loop = RecordingLoop(journal: journal, thread: thread, ticksBeforeExit: ticksBeforeExit)
            let protocols = loop.allocations.zeroed(lws_protocols.self, count: 2)
            protocols[0].name = UnsafePointer(loop.allocations.string("test"))
            protocols[0].callback = lws_callback_http_dummy
            var info = lws_context_creation_info()
            info.port = CONTEXT_PORT_NO_LISTEN
            info.protocols = UnsafePointer(protocols)
            configureLWSLogging()
            guard let context = lws_create_context(&info) else {
                loop.allocations.freeAll()
                throw .connectFailed("no context")
            }
            return ServiceStart(loop: loop, context: context, ready: 42, tickInterval: tick)
        }
    }

    func serviceTick() {
        ticks += 1
        journal.add("tick \(ticks)")
        if let ticksBeforeExit, ticks >= ticksBeforeExit { thread.requestExit() }
    }

    func serviceWillDestroyContext() { journal.add("will destroy on service thread: \(thread.isCurrent)") }

    func serviceDidDestroyContext() {
        allocations.freeAll()
        journal.add("did destroy")
    }
}

@Suite("The libwebsockets service thread")
struct ServiceThreadTests {
    @Test func startRunsTheSetUpOnTheThreadAndReturnsWhatItMadeReady() throws {
        let journal = Journal()
        let thread = ServiceThread<RecordingLoop>(name: "test-service")
        #expect(try thread.start(RecordingLoop.setUp(journal: journal, thread: thread)) == 42)
        #expect(!thread.isCurrent)
        thread.stop()
        #expect(journal.all == ["setUp on service thread: true", "will destroy on service thread: true", "did destroy"])
    }

    @Test func workRunsInOrderOnTheThreadWithTheLoop() throws {
        let journal = Journal()
        let thread = ServiceThread<RecordingLoop>(name: "test-service")
        _ = try thread.start(RecordingLoop.setUp(journal: journal, thread: thread))
        let senders = 4, perSender = 250
        DispatchQueue.concurrentPerform(iterations: senders) { sender in
            for n in 0..<perSender {
                thread.execute { loop in
                    loop.journal.add("\(sender) \(n) \(loop.thread.isCurrent)")
                }
            }
        }
        thread.stop()
        let work = journal.all.filter { !$0.contains("destroy") && !$0.hasPrefix("setUp") }
        #expect(work.count == senders * perSender, "work queued before stop() runs before the end")
        #expect(work.allSatisfy { $0.hasSuffix(" true") })
        for sender in 0..<senders {
            let mine = work.filter { $0.hasPrefix("\(sender) ") }
            #expect(mine == (0..<perSender).map { "\(sender) \($0) true" }, "one sender's work runs in its order")
        }
    }

    @Test func stopWaitsForTheEndIsIdempotentAndLaterWorkIsDropped() throws {
        let journal = Journal()
        let thread = ServiceThread<RecordingLoop>(name: "test-service")
        _ = try thread.start(RecordingLoop.setUp(journal: journal, thread: thread))
        DispatchQueue.concurrentPerform(iterations: 3) { _ in thread.stop() }
        #expect(journal.all.last == "did destroy", "every stop() returned after the context was destroyed")
        thread.execute { loop in loop.journal.add("late") }
        thread.stop()
        #expect(!journal.all.contains("late"))
        #expect(throws: TransportError.alreadyStarted) { try thread.start(RecordingLoop.setUp(journal: journal, thread: thread)) }
    }

    @Test func aGracefulStopRunsItsEndingOnceOnTheThread() throws {
        let journal = Journal()
        let thread = ServiceThread<RecordingLoop>(name: "test-service")
        _ = try thread.start(RecordingLoop.setUp(journal: journal, thread: thread))
        DispatchQueue.concurrentPerform(iterations: 3) { _ in
            thread.stop { loop in
                loop.journal.add("ending on service thread: \(loop.thread.isCurrent)")
                loop.thread.requestExit()
            }
        }
        #expect(journal.all.filter { $0.hasPrefix("ending") } == ["ending on service thread: true"])
        #expect(journal.all.last == "did destroy")
    }

    @Test func stopOnTheThreadItselfOnlyEndsTheLoop() throws {
        let journal = Journal()
        let thread = ServiceThread<RecordingLoop>(name: "test-service")
        _ = try thread.start(RecordingLoop.setUp(journal: journal, thread: thread))
        thread.execute { loop in
            loop.thread.stop()
            loop.journal.add("stop() returned on the service thread")
        }
        thread.waitUntilEnded()
        #expect(journal.all.suffix(3) == [
            "stop() returned on the service thread", "will destroy on service thread: true", "did destroy",
        ])
    }

    @Test func ticksComeUntilATickEndsTheLoop() throws {
        let journal = Journal()
        let thread = ServiceThread<RecordingLoop>(name: "test-service")
        _ = try thread.start(
            RecordingLoop.setUp(journal: journal, thread: thread, tick: .milliseconds(1), ticksBeforeExit: 5))
        thread.waitUntilEnded()
        #expect(journal.all.filter { $0.hasPrefix("tick") } == (1...5).map { "tick \($0)" })
    }

    @Test func aFailedSetUpIsThrownAndEndsTheThread() {
        let thread = ServiceThread<RecordingLoop>(name: "test-service")
        #expect(throws: TransportError.bindFailed("refused")) {
            try thread.start { () throws(TransportError) -> ServiceStart<RecordingLoop, Int> in
                throw .bindFailed("refused")
            }
        }
        thread.stop()
        thread.execute { loop in loop.journal.add("never") }
        #expect(throws: TransportError.alreadyStarted) {
            try thread.start(RecordingLoop.setUp(journal: Journal(), thread: thread))
        }
    }

    @Test func aThreadStoppedBeforeItStartedNeverStarts() {
        let journal = Journal()
        let thread = ServiceThread<RecordingLoop>(name: "test-service")
        thread.stop()
        #expect(throws: TransportError.alreadyStarted) { try thread.start(RecordingLoop.setUp(journal: journal, thread: thread)) }
        #expect(journal.all.isEmpty)
    }
}
