import DequeModule
import MeridianCore
import MeridianProtocol
import MeridianTransport

/// A live session on the service thread: the core value, its connected
/// members, and the bounded history of encoded discrete events for resume.
final class SessionHost {
    var session: Session
    /// Connection of each member (hidden ones included).
    private(set) var members: [ConnectionID: ParticipantID] = [:]
    private var connectionOf: [ParticipantID: ConnectionID] = [:]
    /// Encoded discrete events, oldest first, contiguous in seq.
    private(set) var history: Deque<(seq: UInt64, frame: OutboundFrame)> = []
    private let historySize: Int
    /// Transient frames are conflated per key; the transport wants small integers.
    private var conflationIDs: [ConflationKey: Int] = [:]
    private var nextConflationID = 1
    /// The session's event log (and its last activity); set when the session is opened.
    var eventLog: SessionLog?
    /// Requests from members and frames queued for them, for the overview's rates.
    var requestsIn = 0
    private(set) var deliveriesOut = 0

    /// The annotation list of a snapshot, encoded once for every joiner until
    /// an annotation changes (every change is broadcast, which drops it).
    private var encodedAnnotations: [UInt8]?

    func annotationsJSON() -> [UInt8] {
        if let encodedAnnotations { return encodedAnnotations }
        let encoded = ServerMessage.annotationsJSON(session)
        encodedAnnotations = encoded
        return encoded
    }

    init(session: Session, historySize: Int) {
        self.session = session
        self.historySize = historySize
    }

    var isEmpty: Bool { members.isEmpty }

    /// The connection `pid` is joined on, if any.
    func connection(of pid: ParticipantID) -> ConnectionID? { connectionOf[pid] }

    func add(_ connection: ConnectionID, as pid: ParticipantID) {
        members[connection] = pid
        connectionOf[pid] = connection
    }

    func remove(_ connection: ConnectionID) {
        guard let pid = members.removeValue(forKey: connection) else { return }
        connectionOf[pid] = nil
        conflationIDs = conflationIDs.filter { key, _ in
            switch key {
            case .ownCamera(let p), .location(let p), .dragMove(_, let p): p != pid
            case .sharedCamera: true
            }
        }
    }

    /// Encodes each event once and queues the same frame for every member.
    func broadcast(_ events: [Emitted], on server: WebSocketServer, excludingConnection skip: ConnectionID? = nil) {
        eventLog?.record(events, of: session)
        for e in events {
            switch e.event {
            case .annotationAdded, .annotationUpdated, .annotationRemoved, .drag: encodedAnnotations = nil
            default: break
            }
            let frame = OutboundFrame(text: ServerMessage.event(e))
            var key: Int?
            if let k = e.conflation {
                key = conflationIDs[k] ?? {
                    defer { nextConflationID += 1 }
                    conflationIDs[k] = nextConflationID
                    return nextConflationID
                }()
            } else {
                remember(seq: e.seq, frame)
            }
            let excluded = e.excluding.flatMap { connectionOf[$0] }
            for connection in members.keys where connection != skip && connection != excluded {
                server.send(frame, to: connection, conflationKey: key)
                deliveriesOut += 1
            }
        }
    }

    /// Members that joined hidden (dashboards).
    func hiddenMembers(in session: Session) -> [ConnectionID] {
        members.compactMap { connection, pid in session.participants[pid]?.hidden == true ? connection : nil }
    }

    private func remember(seq: UInt64, _ frame: OutboundFrame) {
        history.append((seq, frame))
        if history.count > historySize { history.removeFirst() }
    }

    /// The frames after `seq`, if history still holds all of them.
    func frames(after seq: UInt64, upTo last: UInt64) -> [OutboundFrame]? {
        guard seq <= last else { return nil }
        if seq == last { return [] }
        guard let first = history.first?.seq, seq + 1 >= first else { return nil }
        return history.filter { $0.seq > seq && $0.seq <= last }.map(\.frame)
    }
}
