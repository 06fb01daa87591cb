import Foundation
import MeridianClientTransport

/// Drives its share of the simulated clients on one ``WebSocketClientGroup`` (one thread).
/// Everything but `start`, `snapshot` and the final reads runs on that group's thread.
final class LoadWorker: ClientGroupHandler, @unchecked Sendable {
    let configuration: LoadConfiguration
    let timeline: LoadTimeline
    let cities: Cities
    /// How the moves of each dragged annotation (`d<N>` at index N) carry their number and send time.
    let moveCodings: [MoveCoding]
    var group: WebSocketClientGroup!
    var clients: ClientTable
    /// Client indices in connect order, and how many have been started.
    var connectOrder: [Int] = []
    var connectsStarted = 0
    var actors: [Int] = []
    var listeners: [Int] = []
    var stats = WorkerStats()
    var churnCredit = 0.0
    var lastTick: UInt64 = 0
    var lastPublish: UInt64 = 0
    var stopped = false

    private let publishLock = NSLock()
    private var published = WorkerStats()

    init(configuration: LoadConfiguration, timeline: LoadTimeline, clientIndices: [Int]) {
        self.configuration = configuration
        self.timeline = timeline
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
        group = WebSocketClientGroup(
            host: configuration.host, port: configuration.port, coalescing: configuration.coalescing, handler: self)
        group.sourceAddresses = configuration.sourceAddresses
        group.eventLoop = configuration.eventLoop
        // A client reads the head of a welcome (its seq), never its snapshot.
        group.keptMessagePrefix = 64 << 10
    }

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

    func start() throws { try group.start() }

    /// The latest published copy of the stats (any thread).
    func snapshot() -> WorkerStats { publishLock.withLock { published } }

    func publish() {
        let copy = stats
        publishLock.withLock { published = copy }
    }

    /// The last seq of every client that is in a session (read after the thread ended). None on a
    /// big map: a filtered stream marks the events it left out only before the next one it carries,
    /// so a client's last seq tells nothing about what it missed at the end.
    func clientSeqs() -> [(session: Int, seq: UInt64)] {
        guard configuration.interest == .everything else { return [] }
        return clients.all.filter { $0.phase == .joined && $0.hasSeq }.map { ($0.session, $0.seq) }
    }

    // MARK: Sending

    func send(_ text: String, to index: Int) {
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

    func group(_ group: WebSocketClientGroup, didOpen id: Int) {
        guard let c = clients[id] else { return }
        stats.connected += 1
        clients[id]!.phase = .joining
        clients[id]!.joinSentAt = LoadClock.nowMicros()
        send(joinRequest(c), to: id)
    }

    func group(_ group: WebSocketClientGroup, didClose id: Int, code: UInt16?, failed: Bool) {
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

    func group(_ group: WebSocketClientGroup, didReceive message: UnsafeRawBufferPointer, from id: Int) {
        stats.messagesIn += 1
        let m = FrameScanner(bytes: message)
        if m.typeIs("drag") {
            event(m, id)
        } else if m.typeIs("ack") || m.typeIs("error") {
            answer(m, from: id)
        } else if m.typeIs("welcome") {
            welcomed(m, id)
        } else if m.typeIs("skipped") || m.typeIs("interest") {
            accountFor(m, id)
        } else if !m.typeIs("live") && !m.typeIs("clusters") {
            event(m, id)
        }
    }

    func groupTick(_ group: WebSocketClientGroup) {
        tick(now: LoadClock.nowMicros())
    }
}
