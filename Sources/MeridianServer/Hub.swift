import Foundation
import Logging
import MeridianAPI
import MeridianAuth
import MeridianCore
import MeridianProtocol
import MeridianStorage
import MeridianTransport

/// Routes connections to sessions. Lives on the transport's service thread:
/// every method runs there, so sessions need no locks and apply commands in
/// one total order.
final class Hub: TransportHandler {
    let configuration: ServerConfiguration
    let logger: Logger
    var sessions: [String: SessionHost] = [:] {
        didSet {
            postLoad()
            overview.sessionsChanged = true
        }
    }
    var connections: [ConnectionID: ConnectionState] = [:]
    /// `overview.watch` subscribers and the counts behind the overview's rates.
    var overview = OverviewFeed()
    var durability: Durability {
        didSet { postLoad() }
    }
    /// The hub's writes to the store, and the acks that wait for them.
    lazy var writes = SessionWrites(
        slot: durability.slot, logger: logger, fence: { [unowned self] in self.sessions[$0]?.fence ?? self.durability.fences[$0] },
        isOpen: { [unowned self] in self.connections[$0] != nil })
    /// The HTTP API on this hub's sessions.
    lazy var api = SessionAPI(self)
    /// Each session's persisted event log; its pages are read in EventLog+Page.swift.
    let eventLog: EventLog
    let metrics: HubMetrics
    /// Connections with requests waiting for their rate limit.
    var deferredConnections: Set<ConnectionID> = []
    /// Bearer tokens of handshakes, joins, the overview and the API.
    let gatekeeper: Gatekeeper
    /// Among several hubs (one per service thread): this hub's index and the relay (Hub+Relay).
    let place: HubPlace?
    var routed: RoutedOutbound?
    /// What the other hubs posted here and the hub has not finished with (Hub+Relay).
    var inbox = RelayInbox()

    init(configuration: ServerConfiguration, logger: Logger, storage: StorageSlot, eventLog: EventLog, metrics: ServerMetrics, place: HubPlace? = nil) {
        self.place = place
        self.configuration = configuration
        self.logger = logger
        self.durability = Durability(slot: storage)
        self.eventLog = eventLog
        self.metrics = HubMetrics(metrics)
        self.gatekeeper = Gatekeeper(configuration.authentication, metrics: self.metrics)
    }

    // MARK: TransportHandler

    func transport(_ server: ServerLoop, shouldAccept handshake: Handshake) -> HandshakeVerdict {
        gatekeeper.screen(handshake)
    }

    func transport(_ server: ServerLoop, didOpen connection: ConnectionID, handshake: Handshake) {
        open(connection, handshake: handshake)
    }

    func transport(_ server: ServerLoop, didReceive message: UnsafeRawBufferPointer, from connection: ConnectionID) {
        receive(message, from: connection, on: server)
    }

    func transport(_ server: ServerLoop, didClose connection: ConnectionID, code: UInt16?, reason: String) {
        closed(connection, code: code, reason: reason, on: server)
    }

    func transportTick(_ server: ServerLoop) {
        tick(on: server)
    }

    // MARK: Connections, through the outbound seam

    /// One whole text message from `connection`.
    func receive(_ message: UnsafeRawBufferPointer, from connection: ConnectionID, on local: any Outbound) {
        guard connections.index(forKey: connection) != nil else { return }
        let server = outbound(for: local)
        switch ClientRequest.decode(message) {
        case .failure(let error):
            metrics.messageIn("invalid")
            refuse(connection, ref: error.ref, request: "?", code: error.code, message: error.message, field: error.field, on: server)
            countProtocolError(connection, on: server)
        case .success(var request):
            metrics.messageIn(request.typeName)
            // In a cluster, a request that may go on to the node owning its session keeps its text.
            if mayLeaveNode(request, from: connection) { request.text = Array(message) }
            route(request, from: connection, on: server)
        }
    }

    /// The periodic work: presence, clusters, drag expiry, deferred requests, unloading,
    /// token expiry and the overview.
    func tick(on local: any Outbound) {
        let server = outbound(for: local)
        let now = server.now
        for host in sessions.values {
            host.announcePresence(on: server)
            host.tickClusters(on: server)
            guard let due = host.session.nextDragExpiry, due <= now else { continue }
            let events = host.session.expireDrags(at: now)
            host.publish(events, on: server)
        }
        releaseAllDeferred(on: server)
        unloadIdleSessions(on: server)
        closeExpiredTokens(on: server)
        tickOverview(server)
        inbox.forgetWrittenTransients()
    }

    func transport(_ server: ServerLoop, handle request: HTTPRequest, responder: HTTPResponder) {
        answer(request, responder: responder, on: server)
    }

    // MARK: Requests

    /// Serves `request` here (the edge and the rate limit let it through).
    func handle(_ request: ClientRequest, from connection: ConnectionID, on server: any Outbound) {
        // The connection's state is read field by field where it is needed: a copy of the whole
        // of it costs a retain for each of its parts, on every request.
        switch request.body {
        case .join(let sessionID, let join, let resume):
            let state = connections[connection]!
            guard state.sessionID == nil else {
                return refuse(connection, ref: request.ref, request: "join", code: .alreadyJoined,
                              message: "this connection already joined session \(state.sessionID!); send leave first", on: server)
            }
            switch gatekeeper.resolveJoin(join, session: sessionID, resume: resume, handshakeGrant: state.handshakeGrant) {
            case .failure(let refusal):
                refuse(request, refusal, from: connection, on: server)
                countProtocolError(connection, on: server)
            case .success(let (joinRequest, grant)):
                self.join(sessionID, joinRequest, interest: join.interest, grant: grant, resume: resume, ref: request.ref, connection: connection,
                          original: request, on: server)
            }
        case .refreshToken(let token):
            let state = connections[connection]!
            switch gatekeeper.refresh(token, session: state.sessionID ?? "", current: state.grant, handshakeGrant: state.handshakeGrant) {
            case .failure(let refusal):
                return refuse(request, refusal, from: connection, on: server)
            case .success(let grant):
                update(connection, .refreshed(grant), on: server)
            }
            acknowledge(request, seq: seq(of: connections[connection]!), from: connection, on: server)
        case .ping:
            acknowledge(request, seq: seq(of: connections[connection]!), from: connection, on: server)
        case .overviewWatch(let token):
            if let refusal = gatekeeper.authorizeOverview(token: token, handshakeGrant: connections[connection]!.handshakeGrant) {
                refuse(request, refusal, from: connection, on: server)
                return countProtocolError(connection, on: server)
            }
            watchOverview(connection, ref: request.ref, on: server)
        case .interest(let interest):
            guard let host = connections[connection]!.sessionID.flatMap({ sessions[$0] }) else {
                return refuse(connection, ref: request.ref, request: "interest", code: .notJoined, message: "interest needs a joined session; send join first", on: server)
            }
            do throws(SessionError) {
                try host.changeInterest(interest, of: connection, on: server)
            } catch {
                return refuse(connection, ref: request.ref, request: "interest", code: error.code, message: error.message, field: error.field, on: server)
            }
            acknowledge(request, seq: host.session.seq, from: connection, on: server)
        case .leave:
            let state = connections[connection]!
            guard let host = state.sessionID.flatMap({ sessions[$0] }) else {
                return refuse(connection, ref: request.ref, request: "leave", code: .notJoined, message: "not in a session", on: server)
            }
            leave(connection, state, reason: "left", on: server)
            acknowledge(request, seq: host.session.seq, from: connection, on: server)
            settled(connection)
        case .command(let command):
            guard let sessionID = connections[connection]!.sessionID, let host = sessions[sessionID],
                  let pid = connections[connection]!.participant else {
                return refuse(connection, ref: request.ref, request: command.name, code: .notJoined,
                              message: "\(command.name) needs a joined session; send join first", on: server)
            }
            let result = host.serve(command, from: pid, ref: request.ref, on: connection, on: server)
            metrics.dragStart(command, result, policy: host.session.settings.dragPolicy)
            if case .failure(let error) = result {
                refuse(connection, ref: request.ref, request: command.name, code: error.code, message: error.message,
                       field: error.field, holder: error.holder.flatMap { host.session.participants[$0] }, annotation: error.annotation,
                       on: server)
                host.announceRefusal(command, error, by: pid, on: server)
            }
        }
    }

    /// Joins `sessionID`; one that is not loaded is loaded off the service thread and the join
    /// answered then (`outcome`: how the wait ended).
    private func join(
        _ sessionID: String, _ request: JoinRequest, interest asked: Interest?, grant: AccessGrant?, resume: ResumePoint?, ref: RequestRef,
        connection: ConnectionID, original: ClientRequest, after outcome: GateOutcome? = nil, on server: any Outbound
    ) {
        guard SessionID.isValid(sessionID) else {
            return refuse(connection, ref: ref, request: "join", code: .invalidField,
                          message: "session: 1-128 characters of A-Z a-z 0-9 . _ -, not . or ..", field: "session", on: server)
        }
        let host: SessionHost
        switch joinTarget(sessionID, create: !request.hidden, connection: connection, after: outcome, on: server, retry: { [unowned self] outcome in
            self.join(sessionID, request, interest: asked, grant: grant, resume: resume, ref: ref, connection: connection, original: original,
                      after: outcome, on: server)
        }) {
        case .ready(let h): host = h
        case .waiting: return
        case .elsewhere(let home):
            guard let place, let state = connections[connection] else { return }
            return reroute(original, from: connection, peer: state.peer, handshakeGrant: state.handshakeGrant, to: home, place: place, on: server)
        case .refused(let error):
            return refuse(connection, ref: ref, request: "join", code: error.code, message: error.message, on: server)
        }
        if let pid = request.participant, let old = host.connection(of: pid), let oldState = connections[old] {
            // The same participant again (a reconnect the server has not noticed yet, another tab):
            // the newer connection wins.
            leave(old, oldState, reason: "replaced", on: server)
            server.close(old, code: CloseCode.replaced, reason: "replaced by a newer connection of \(pid)")
            settled(old)
        }
        var interest: Interest?
        if let asked {
            do throws(SessionError) {
                interest = try host.session.validated(asked, prefix: "interest.")
            } catch {
                dropIfNeverUsed(host)
                return refuse(connection, ref: ref, request: "join", code: error.code, message: error.message, field: error.field, on: server)
            }
        }
        let before = host.session.seq
        switch host.session.join(request, at: server.now) {
        case .failure(let error):
            dropIfNeverUsed(host)
            refuse(connection, ref: ref, request: "join", code: error.code, message: error.message, field: error.field, on: server)
        case .success(let (pid, events)):
            host.add(connection, as: pid)
            update(connection, .joined(ConnectionState.Member(session: sessionID, participant: pid, grant: grant)), on: server)
            settled(connection)
            logger.debug("joined", metadata: [
                "connection": "\(connection)", "session": "\(sessionID)", "participant": "\(pid)",
                "role": "\(request.role.rawValue)", "hidden": "\(request.hidden)",
            ])
            host.welcome(connection, as: pid, ref: ref, interest: interest, resume: resume, before: before, events: events, on: server)
        }
    }

    /// A session a refused join created (nobody in it, nothing happened) is not kept.
    private func dropIfNeverUsed(_ host: SessionHost) {
        if host.isEmpty && host.session.participants.isEmpty && host.session.seq == 0 {
            sessions[host.session.id] = nil
            durability.fences[host.session.id] = nil
            place?.cluster?.release(host.session.id)
        }
    }

    /// The connection's participant leaves its session (`state`: the connection's, which may be
    /// gone already, as when it closed).
    func leave(_ connection: ConnectionID, _ state: ConnectionState, reason: String, on server: any Outbound) {
        guard let sessionID = state.sessionID, let host = sessions[sessionID], let pid = state.participant else { return }
        update(connection, .left, on: server)
        host.remove(connection)
        let events = host.session.leave(pid, reason: reason, at: server.now)
        host.publish(events, on: server)
        logger.debug("left", metadata: ["session": "\(sessionID)", "participant": "\(pid)", "reason": "\(reason)"])
    }

    /// Answers `request` with an ack at `seq`, behind the connection's acks still waiting for a commit.
    private func acknowledge(_ request: ClientRequest, seq: UInt64, from connection: ConnectionID, on server: any Outbound) {
        let frame = OutboundFrame.encoding { ServerMessage.ack(ref: request.ref, seq: seq, into: &$0) }
        writes.acknowledge(PendingAck(connection: connection, frame: frame, ref: request.ref, request: request.typeName),
                           in: connections[connection]?.sessionID, on: server)
    }

    private func refuse(_ request: ClientRequest, _ refusal: AuthRefusal, from connection: ConnectionID, on server: any Outbound) {
        refuse(connection, ref: request.ref, request: request.typeName, code: refusal.code, message: refusal.message, field: refusal.field, on: server)
    }

    private func refuse(
        _ connection: ConnectionID, ref: RequestRef, request: String, code: SessionError.Code, message: String,
        field: String? = nil, holder: Participant? = nil, annotation: Annotation? = nil, on server: any Outbound
    ) {
        logger.debug("refused", metadata: [
            "connection": "\(connection)", "request": "\(request)", "code": "\(code.rawValue)", "reason": "\(message)",
        ])
        metrics.error(code)
        let frame = ServerMessage.error(ref: ref, code: code, message: message, field: field, holder: holder, annotation: annotation)
        reply(OutboundFrame(text: frame), to: connection, on: server)
        // The edge of a member served elsewhere holds later requests until it hears the outcome.
        if request == "join" || request == "leave" { settled(connection) }
    }

    /// The seq of the connection's session; 0 when it is in none.
    func seq(of state: ConnectionState) -> UInt64 {
        state.sessionID.flatMap { sessions[$0]?.session.seq } ?? 0
    }
}
