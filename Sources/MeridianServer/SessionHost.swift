import DequeModule
import MeridianCore
import MeridianProtocol
import MeridianTransport

/// A live session on the service thread: the core value, its connected
/// members, and the bounded history of encoded discrete events for resume.
final class SessionHost {
    var session: Session
    /// In a cluster, the fencing number of this node's lease on the session: its writes carry
    /// it, and the shared store refuses them once a newer owner wrote.
    var fence: UInt64?
    /// Connections of the members (hidden ones included), densely, for broadcasting.
    private(set) var memberIDs: [ConnectionID] = []
    /// Each member's participant and place in `memberIDs`.
    private var memberships: [ConnectionID: (pid: ParticipantID, index: Int)] = [:]
    private var connectionOf: [ParticipantID: ConnectionID] = [:]
    /// Encoded discrete events, oldest first, contiguous in seq; `scoped` when the event is
    /// about one annotation (viewport interest filters those).
    private(set) var history: Deque<(seq: UInt64, frame: OutboundFrame, scoped: Bool)> = []
    private let historySize: Int
    /// The newest frame of each transient kind: the next one of that kind supersedes it
    /// wherever it still waits (see ``WebSocketServer/broadcast(_:to:except:superseding:)``).
    private var latestTransient: [ConflationKey: OutboundFrame] = [:]
    /// The session's event log (and its last activity); set when the session is opened.
    var eventLog: SessionLog?
    /// Requests from members and frames queued for them, for the overview's rates.
    var requestsIn = 0
    var deliveriesOut = 0
    /// The last minute of those counters as rates, a sample a second (`GET /api/sessions/{id}/rates`).
    var rates = RateHistory()

    /// The annotation list of a snapshot, encoded once for every joiner until
    /// an annotation changes (every change is broadcast, which drops it), and
    /// the same cut into shared welcome fragments.
    private var encodedAnnotations: [UInt8]?
    var sharedAnnotationFragments: [OutboundFrame]?

    /// Members with viewport interest and what they see; nil until the first one joins.
    var router: InterestRouter<ConnectionID>?
    /// Until then, a large session's annotation index, kept current, so that the first viewport
    /// join does not build it (SessionHost.indexAbove).
    var annotationIndex: SpatialIndex<String>?
    var interests: [ConnectionID: Interest] = [:]
    /// Members without viewport interest: every event goes to all of them.
    var everythingIDs: [ConnectionID] {
        if let cached = everythingCache { return cached }
        let ids = interests.isEmpty ? memberIDs : memberIDs.filter { interests[$0] == nil }
        everythingCache = ids
        return ids
    }
    var everythingCache: [ConnectionID]?
    /// The view and clusters each clustering member was last sent.
    var sentClusters: [ConnectionID: (view: InterestView, clusters: [Cluster])] = [:]
    /// The annotation the command being applied removes, until its events are routed: a drag
    /// the removal cancels may first bring it into a viewport member's area, and that member
    /// needs it whole before the drag's events (SPEC §4.7).
    private var departing: Annotation?

    func annotationsJSON() -> [UInt8] {
        if let encodedAnnotations { return encodedAnnotations }
        let encoded = ServerMessage.annotationsJSON(session)
        encodedAnnotations = encoded
        return encoded
    }

    /// Sessions with at least this many annotations keep their annotation index from the start.
    static let indexAbove = 1_000

    /// Where the durable part of the session's events goes, and the acks that wait for it.
    private unowned let writes: SessionWrites

    /// `index`: the session's annotation index when it was built already (off the service thread).
    init(session: Session, historySize: Int, writes: SessionWrites, index: SpatialIndex<String>? = nil) {
        self.session = session
        self.historySize = historySize
        self.writes = writes
        annotationIndex = index
    }

    var isEmpty: Bool { memberIDs.isEmpty }
    var memberCount: Int { memberIDs.count }

    /// The participant joined on `connection`, if any.
    func participant(of connection: ConnectionID) -> ParticipantID? { memberships[connection]?.pid }

    /// The connection `pid` is joined on, if any.
    func connection(of pid: ParticipantID) -> ConnectionID? { connectionOf[pid] }

    func add(_ connection: ConnectionID, as pid: ParticipantID) {
        memberships[connection] = (pid, memberIDs.count)
        memberIDs.append(connection)
        everythingCache = nil
        connectionOf[pid] = connection
    }

    func remove(_ connection: ConnectionID) {
        guard let (pid, index) = memberships.removeValue(forKey: connection) else { return }
        // Swap the last member into the gap.
        let last = memberIDs.removeLast()
        if index < memberIDs.count {
            memberIDs[index] = last
            memberships[last]?.index = index
        }
        connectionOf[pid] = nil
        everythingCache = nil
        if interests.removeValue(forKey: connection) != nil {
            router?.remove(connection)
            sentClusters[connection] = nil
        }
        latestTransient = latestTransient.filter { key, _ in
            switch key {
            case .ownCamera(let p), .location(let p), .dragMove(_, let p): p != pid
            case .sharedCamera: true
            }
        }
    }

    /// A member's command, sent on `connection` as request `ref`: the joins and leaves held back
    /// are announced first, then the command is applied, its events go to the members and to the
    /// store, and its ack follows once they are stored. A refusal is returned for the hub to answer.
    func serve(_ command: Command, from pid: ParticipantID, ref: RequestRef, on connection: ConnectionID, on server: any Outbound) -> ApplyResult {
        requestsIn += 1
        announcePresence(on: server)
        if router != nil, case .removeAnnotation(let id, _) = command { departing = session.annotations[id] }
        let result = session.apply(command, from: pid, at: server.now)
        switch result {
        case .success(let accepted):
            let ack = OutboundFrame.encoding { ServerMessage.ack(ref: ref, seq: session.seq, camera: accepted.camera, into: &$0) }
            publish(accepted.events, ack: PendingAck(connection: connection, frame: ack, ref: ref, request: command.name), on: server)
        case .failure:
            departing = nil
        }
        return result
    }

    /// Broadcasts the joins and leaves a large session is holding back (SessionLimits
    /// .presenceBatchAbove): on every tick, and before a command changes the session, so that
    /// newcomers are announced before anything they do.
    func announcePresence(on server: any Outbound) {
        let events = session.flushPresence()
        guard !events.isEmpty else { return }
        publish(events, on: server)
    }

    /// Sends `events` to the members at once, and stores their durable part (`ack` answers the
    /// request behind them once that is committed).
    func publish(_ events: [Emitted], ack: PendingAck? = nil, on server: any Outbound) {
        broadcast(events, on: server)
        writes.persist(events, of: self, ack: ack, on: server)
    }

    /// Encodes each event once and queues the same frame for every member.
    func broadcast(_ events: [Emitted], on server: any Outbound, excludingConnection skip: ConnectionID? = nil) {
        eventLog?.record(events, of: session)
        for (i, e) in events.enumerated() {
            switch e.event {
            case .annotationAdded, .annotationUpdated, .annotationRemoved, .drag:
                encodedAnnotations = nil
                sharedAnnotationFragments = nil
            default: break
            }
            let frame = OutboundFrame.encoding { ServerMessage.event(e, into: &$0) }
            var previous: OutboundFrame?
            if let key = e.conflation {
                previous = latestTransient.updateValue(frame, forKey: key)
            } else {
                remember(seq: e.seq, frame, scoped: Self.isScoped(e.event))
            }
            if router == nil {
                trackAnnotations(e)
                server.broadcast(frame, to: memberIDs, except: skip, superseding: previous, transient: e.conflation != nil)
                deliveriesOut += memberIDs.count
            } else {
                routeThroughInterest(e, following: events[(i + 1)...], frame, departed: departing, superseding: previous, except: skip, on: server)
            }
        }
        departing = nil
    }

    /// Events about one annotation, which viewport interest filters.
    static func isScoped(_ event: Event) -> Bool {
        switch event {
        case .annotationAdded, .annotationUpdated, .annotationRemoved, .drag: true
        default: false
        }
    }

    /// Members that joined hidden (dashboards).
    func hiddenMembers(in session: Session) -> [ConnectionID] {
        memberIDs.filter { connection in memberships[connection].flatMap { session.participants[$0.pid]?.hidden } == true }
    }

    private func remember(seq: UInt64, _ frame: OutboundFrame, scoped: Bool) {
        history.append((seq, frame, scoped))
        if history.count > historySize { history.removeFirst() }
    }

    /// The events after `seq`, if history still holds all of them.
    func frames(after seq: UInt64, upTo last: UInt64) -> [(seq: UInt64, frame: OutboundFrame, scoped: Bool)]? {
        guard seq <= last else { return nil }
        if seq == last { return [] }
        guard let first = history.first?.seq, seq + 1 >= first else { return nil }
        return history.filter { $0.seq > seq && $0.seq <= last }
    }
}

extension OutboundFrame {
    /// A text frame whose payload `write` encodes in place, behind room for the header.
    static func encoding(_ write: (inout JSONOutput) -> Void) -> OutboundFrame {
        var out = JSONOutput(reserving: OutboundFrame.headerRoom)
        write(&out)
        let (buffer, count) = out.takeBuffer()
        return OutboundFrame(takingBuffer: buffer, count: count)
    }

    /// A fragment of a text message whose payload `write` encodes in place.
    static func fragment(first: Bool, last: Bool, shared ledger: SharedFrameLedger? = nil, _ write: (inout JSONOutput) -> Void) -> OutboundFrame {
        var out = JSONOutput(reserving: OutboundFrame.headerRoom)
        write(&out)
        let (buffer, count) = out.takeBuffer()
        return OutboundFrame(takingBuffer: buffer, count: count, first: first, last: last, shared: ledger)
    }
}
