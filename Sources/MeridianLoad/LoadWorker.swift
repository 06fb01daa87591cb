import MeridianSync
import Foundation
import MeridianClientTransport
import Synchronization

/// A worker as the runner holds it: the client group whose thread drives the worker's share of
/// the simulated clients, and the board through which that thread reports.
struct WorkerHandle: Sendable {
    let group: WebSocketClientGroup
    let board: WorkerBoard

    init(configuration c: LoadConfiguration, timeline: LoadTimeline, clientIndices: [Int]) {
        let board = WorkerBoard()
        self.board = board
        group = WebSocketClientGroup(
            configuration: {
                var group = ClientGroupConfiguration(
                    host: c.host, port: c.port, coalescing: c.coalescing, sourceAddresses: c.sourceAddresses,
                    // A client reads the head of a welcome (its seq), never its snapshot.
                    eventLoop: c.eventLoop, keptMessagePrefix: 64 << 10)
                group.ports = c.ports
                group.tls = c.tls
                return group
            }(),
            handler: LoadWorker(configuration: c, timeline: timeline, clientIndices: clientIndices, board: board))
    }
}

/// What a worker's thread shares with the runner: the stats it publishes while it runs, a
/// request to stop acting, and what it reports once its loop has ended.
final class WorkerBoard: Sendable {
    /// What a worker reports at its end.
    struct Final: Sendable {
        var stats: WorkerStats
        /// Each joined client's session and last seq (see ``LoadWorker/clientSeqs()``).
        var clientSeqs: [(session: Int, seq: UInt64)]
    }

    private let published = Locked(WorkerStats())
    private let final = Locked<Final?>(nil)
    private let stopping = Atomic<Bool>(false)
    private let released = Atomic<Bool>(false)

    /// Lets the worker connect: once every group has its context (a TLS context made while
    /// another group's handshakes are in flight would cost them their connection state).
    func release() { released.store(true, ordering: .releasing) }

    var isReleased: Bool { released.load(ordering: .acquiring) }

    /// The latest published copy of the stats.
    func snapshot() -> WorkerStats { published.withLock { $0 } }

    func publish(_ stats: WorkerStats) { published.withLock { $0 = stats } }

    /// Asks the worker to stop acting and counting closes (any thread).
    func requestStop() { stopping.store(true, ordering: .releasing) }

    var isStopping: Bool { stopping.load(ordering: .acquiring) }

    /// Signalled once, when ``finish(_:)`` is first called.
    private let finished = DispatchSemaphore(value: 0)

    /// What the worker reported at its end; nil before.
    var result: Final? { final.withLock { $0 } }

    /// Keeps the first report only: the one taken when the stop was seen, before any worker
    /// drops its connections (whose leaving the others would hear as events these missed).
    func finish(_ result: Final) {
        let first = final.withLock { final in
            guard final == nil else { return false }
            final = result
            return true
        }
        if first { finished.signal() }
    }

    /// Waits until the worker has reported, at most `seconds`.
    func waitForResult(seconds: Double) {
        if finished.wait(timeout: .now() + seconds) == .success { finished.signal() }
    }
}

/// Drives its share of the simulated clients as the handler of one ``WebSocketClientGroup``:
/// made on the runner's thread, then handed to the group's service thread, where alone it
/// runs. It shares only its ``WorkerBoard`` with other threads.
final class LoadWorker: ClientGroupHandler {
    let configuration: LoadConfiguration
    let timeline: LoadTimeline
    let cities: Cities
    /// How the moves of each dragged annotation (`d<N>` at index N) carry their number and send time.
    let moveCodings: [MoveCoding]
    let board: WorkerBoard
    var clients: ClientTable
    /// Client indices in connect order, and how many have been started.
    var connectOrder: [Int] = []
    var connectsStarted = 0
    var actors: [Int] = []
    var listeners: [Int] = []
    var stats = WorkerStats()
    /// The highest discrete seq each session reached, by session (into `stats.sessionSeq` when reported).
    var sessionSeqs: [UInt64] = []
    var churnCredit = 0.0
    var lastTick: UInt64 = 0
    var lastPublish: UInt64 = 0
    /// When the bytes being read arrived (set before each read's messages; nil when messages
    /// are handed over without a read, as tests do).
    var readAt: UInt64?

    init(configuration: LoadConfiguration, timeline: LoadTimeline, clientIndices: [Int], board: WorkerBoard = WorkerBoard()) {
        self.configuration = configuration
        self.timeline = timeline
        self.board = board
        let cities = Cities(configuration)
        self.cities = cities
        moveCodings = (0..<configuration.draggers).map { n in
            configuration.interest == .viewport ? MoveCoding(city: cities.centre(n)) : .world
        }
        clients = ClientTable(stride: max(1, min(configuration.threads, configuration.clients)))
        for index in clientIndices {
            let session = index % configuration.sessions
            let rank = index / configuration.sessions
            let role = session < (configuration.dragSessions ?? configuration.sessions) ? Self.role(rank: rank, configuration) : .listener
            clients[index] = SimulatedClient(index: index, session: session, role: role)
            clients[index]!.city = rank
            connectOrder.append(index)
            if clients[index]!.isActor { actors.append(index) } else { listeners.append(index) }
        }
    }

    /// The runner asked the worker to stop: no more actions, closes no longer counted.
    var stopped: Bool { board.isStopping }

    /// Draggers first, then camera movers, then selectors; the rest listen. A dragger drags
    /// annotation `d<rank>`, which lies in its city on a big map; with contention (not on a big
    /// map) pairs of draggers share `d<rank / 2>`.
    static func role(rank: Int, _ c: LoadConfiguration) -> ClientRole {
        if rank < c.draggers {
            let shared = c.interest == .viewport ? 0 : Int(Double(c.draggers) * c.contention) & ~1
            return .dragger(annotation: rank < shared ? rank / 2 : rank)
        }
        if rank < c.draggers + c.cameraMovers { return .cameraMover }
        if rank < c.draggers + c.cameraMovers + c.selectors { return .selector }
        return .listener
    }

    func publish() {
        board.publish(report)
    }

    /// The stats as reported: with each session's highest seq.
    var report: WorkerStats {
        var report = stats
        for (session, seq) in sessionSeqs.enumerated() where seq > 0 { report.sessionSeq[session] = seq }
        return report
    }

    /// The last seq of every client that is in a session (reported at the loop's end). None on a
    /// big map: a filtered stream marks the events it left out only before the next one it carries,
    /// so a client's last seq tells nothing about what it missed at the end.
    func clientSeqs() -> [(session: Int, seq: UInt64)] {
        guard configuration.interest == .everything else { return [] }
        return clients.all.filter { $0.phase == .joined && $0.hasSeq }.map { ($0.session, $0.seq) }
    }

    // MARK: Sending

    func send(_ text: String, to index: Int, on group: ClientGroupLoop) {
        group.send(Array(text.utf8), to: index)
        stats.messagesOut += 1
    }

    func ref(_ index: Int, _ kind: RefKind) -> Int {
        let n = clients[index]!.nextRef
        clients[index]!.nextRef += 1
        return n << 4 | kind.rawValue
    }

    func joinRequest(_ c: SimulatedClient) -> String {
        let role: String
        switch c.role {
        case .dragger: role = "editor"
        default: role = "viewer"
        }
        let interest = configuration.interest.joinField(centre: cities.centre(c.city))
        return #"{"type":"join","ref":\#(ref(c.index, .join)),"session":"load-\#(c.session)","name":"c\#(c.index)","role":"\#(role)"\#(interest)\#(configuration.tokenField(c.index))}"#
    }

    // MARK: ClientGroupHandler

    func group(_ group: ClientGroupLoop, didOpen id: Int) {
        guard let c = clients[id] else { return }
        stats.connected += 1
        clients[id]!.phase = .joining
        clients[id]!.joinSentAt = LoadClock.nowMicros()
        send(joinRequest(c), to: id, on: group)
    }

    func group(_ group: ClientGroupLoop, didClose id: Int, code: UInt16?, failed: Bool) {
        guard let c = clients[id] else { return }
        if !failed { stats.connected -= 1 }
        if c.phase == .leaving, !stopped {
            // Churn: join again at once as a new participant.
            clients[id]!.phase = .connecting
            clients[id]!.hasSeq = false
            clients[id]!.ready = false
            clients[id]!.connectStartedAt = LoadClock.nowMicros()
            group.connect(id)
            return
        }
        clients[id]!.phase = .waiting
        guard !stopped else { return }
        if failed {
            stats.connectFailures += 1
        } else {
            stats.closeCodes[code.map(String.init) ?? "none", default: 0] += 1
        }
    }

    func group(_ group: ClientGroupLoop, willRead id: Int) {
        readAt = LoadClock.nowMicros()
    }

    func group(_ group: ClientGroupLoop, didReceive message: UnsafeRawBufferPointer, from id: Int) {
        let m = FrameScanner(bytes: message)
        if m.typeIs("welcome") {
            stats.messagesIn += 1
            welcomed(m, id, on: group)
        } else {
            receive(m, from: id)
        }
    }

    /// A message other than a welcome (the only one a client answers by sending).
    func receive(_ m: FrameScanner, from id: Int) {
        stats.messagesIn += 1
        if m.typeIs("drag") {
            dragEvent(DragFrame(m.bytes), id, now: readAt ?? LoadClock.nowMicros())
        } else if m.typeIs("ack") || m.typeIs("error") {
            answer(m, from: id)
        } else if m.typeIs("skipped") || m.typeIs("interest") {
            accountFor(m, id)
        } else if !m.typeIs("live") && !m.typeIs("clusters") {
            event(m, id)
        }
    }

    func groupTick(_ group: ClientGroupLoop) {
        guard board.isReleased else { return }
        tick(now: LoadClock.nowMicros(), on: group)
    }

    /// Publishes the final stats and the clients' last seqs, unless they were at the stop.
    func groupWillEnd(_ group: ClientGroupLoop) {
        board.finish(WorkerBoard.Final(stats: report, clientSeqs: clientSeqs()))
    }
}
